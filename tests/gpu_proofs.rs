//! Whole proofs on the GPU backends, byte-identical to the cpu backend. Without a
//! device these tests say loudly that they were skipped; `CROSSGROTH_REQUIRE_CUDA=1`
//! and `CROSSGROTH_REQUIRE_WGPU=1` turn a missing device into a failure (CI sets
//! the second: it runs the wgpu backend on Mesa's lavapipe). `CROSSGROTH_GPU_PROOF_MAX_LOG` raises
//! the largest squaring chain proved (default 2^14; the GPU test script uses 2^20).

mod common;

use std::sync::Arc;

use common::*;
use crossgroth::backend::{Backend, CpuBackend, CudaBackend, WgpuBackend, WgpuOptions};
use crossgroth::groth16::placement::{PlacementConfig, TablePolicy};
use crossgroth::groth16::{self, Prover};
use crossgroth::synthesis::synthesize;

fn cuda() -> Option<Arc<dyn Backend>> {
    match CudaBackend::open() {
        Ok(b) => Some(Arc::new(b)),
        Err(e) => {
            if std::env::var("CROSSGROTH_REQUIRE_CUDA").as_deref() == Ok("1") {
                panic!("CROSSGROTH_REQUIRE_CUDA=1 but {e}");
            }
            report_skipped(
                "cuda proof tests (set CROSSGROTH_REQUIRE_CUDA=1 to fail instead)",
                &e,
            );
            None
        }
    }
}

fn same_proofs_as_cpu(gpu: &Arc<dyn Backend>, spec_str: &str) {
    same_proofs_as_cpu_placed(gpu, spec_str, &PlacementConfig::default())
}

fn same_proofs_as_cpu_placed(gpu: &Arc<dyn Backend>, spec_str: &str, placed: &PlacementConfig) {
    let spec = spec(spec_str);
    let t = std::time::Instant::now();
    let params = Arc::new(params_for(&spec, 1));
    eprintln!(
        "{spec_str}: parameters in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let circuit = spec.instance(3);
    let inputs = circuit.public_inputs();
    let asg = synthesize(circuit).unwrap();
    let (r, s) = groth16::draw_randomness(1, &mut rng(4));
    let t = std::time::Instant::now();
    let cpu = Prover::new(Arc::new(CpuBackend), params.clone()).unwrap();
    let expected = cpu.prove_assignments(vec![asg.clone()], &r, &s).unwrap();
    let cpu_s = t.elapsed().as_secs_f64();
    let prover = Prover::with_placement(gpu.clone(), params.clone(), placed).unwrap();
    let t = std::time::Instant::now();
    let got = prover.prove_assignments(vec![asg.clone()], &r, &s).unwrap();
    let first_s = t.elapsed().as_secs_f64();
    // Again with the bases already resident: the steady state of a prover.
    let t = std::time::Instant::now();
    let again = prover.prove_assignments(vec![asg], &r, &s).unwrap();
    eprintln!(
        "{spec_str}: cpu {cpu_s:.3} s; {} {:.3} s with bases resident ({first_s:.3} s first call); assignment given",
        gpu.name(),
        t.elapsed().as_secs_f64()
    );
    assert_eq!(again, got);
    assert_eq!(got[0].to_bytes(), expected[0].to_bytes(), "{spec_str}");
    assert!(verifies(&params, &got[0], &inputs));
}

#[test]
fn cuda_proofs_match_cpu() {
    let Some(gpu) = cuda() else { return };
    eprintln!("cuda device: {}", gpu.device());
    let max_log: u32 = std::env::var("CROSSGROTH_GPU_PROOF_MAX_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(14);
    for s in ["cubic", "multi:4", "sha256:64", "sha256:512"] {
        same_proofs_as_cpu(&gpu, s);
    }
    for log in (10..=max_log).step_by(2) {
        same_proofs_as_cpu(&gpu, &format!("chain:{log}"));
    }
    // The default places G1 bases as tables of precomputed copies where they
    // fit; plain resident bases too.
    let plain = PlacementConfig {
        tables: TablePolicy::Off,
        ..PlacementConfig::default()
    };
    for s in ["sha256:512", "chain:14"] {
        same_proofs_as_cpu_placed(&gpu, s, &plain);
    }
}

/// Parameters made with the fixed-base products on the device are bit for bit the
/// host generator's (same toxic waste), and a cuda proof with them verifies.
#[test]
fn cuda_setup_matches_cpu() {
    let Ok(backend) = CudaBackend::open().map(|b| Arc::new(b) as Arc<dyn Backend>) else {
        let _ = cuda(); // reports the skip, or fails under CROSSGROTH_REQUIRE_CUDA
        return;
    };
    setup_matches_cpu(
        backend,
        &["cubic", "multi:4", "sha256:64", "chain:12"],
        "sha256:64",
    );
}

/// The same through the wgpu backend's fixed-base kernel (sizes lavapipe takes
/// in seconds), with a binding limit low enough that its scalars and products
/// go in several chunks.
#[test]
fn wgpu_setup_matches_cpu() {
    let Some(backend) = wgpu_with(WgpuOptions {
        max_binding_bytes: Some(64 << 10),
        ..WgpuOptions::default()
    }) else {
        return;
    };
    assert!(backend.has_setup_kernels());
    setup_matches_cpu(backend, &["cubic", "multi:4", "chain:10"], "cubic");
}

/// Parameters of each of `specs` generated on `backend` equal the host's, and
/// a proof of `prove` on `backend` with its parameters verifies.
fn setup_matches_cpu(backend: Arc<dyn Backend>, specs: &[&str], prove: &str) {
    use crossgroth::groth16::{generate_random_parameters_with, SetupOptions};
    let on_gpu = SetupOptions {
        device: Some(backend.clone()),
        progress: None,
    };
    for s in specs {
        let spec = spec(s);
        let t = std::time::Instant::now();
        let cpu =
            generate_random_parameters_with(spec.blank(), &mut rng(21), &SetupOptions::default())
                .unwrap();
        let cpu_s = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let gpu = generate_random_parameters_with(spec.blank(), &mut rng(21), &on_gpu).unwrap();
        eprintln!(
            "{s}: setup cpu {cpu_s:.3} s, {} {:.3} s",
            backend.name(),
            t.elapsed().as_secs_f64()
        );
        assert!(
            cpu == gpu,
            "{s}: {} setup differs from the cpu's",
            backend.name()
        );
    }
    let spec = spec(prove);
    let params =
        Arc::new(generate_random_parameters_with(spec.blank(), &mut rng(22), &on_gpu).unwrap());
    let circuit = spec.instance(1);
    let inputs = circuit.public_inputs();
    let (r, s) = groth16::draw_randomness(1, &mut rng(23));
    let proof = Prover::new(backend, params.clone())
        .unwrap()
        .prove_assignments(vec![synthesize(circuit).unwrap()], &r, &s)
        .unwrap();
    assert!(verifies(&params, &proof[0], &inputs));
}

/// Bases left in host memory and streamed by every MSM (as for parameter sets larger
/// than the device) give the same proof as resident ones.
#[test]
fn cuda_proofs_with_streamed_bases_match_cpu() {
    let Some(gpu) = cuda() else { return };
    same_proof_with_streamed_bases(&gpu, "sha256:512", 0);
}

/// A proof of `spec_str` on `gpu` with every base set streamed equals the cpu
/// backend's and verifies; `min_h_bytes`: how many bytes H's bases must take
/// at least (so that they span the chunks the caller set up).
fn same_proof_with_streamed_bases(gpu: &Arc<dyn Backend>, spec_str: &str, min_h_bytes: usize) {
    use crossgroth::backend::Placement;
    use crossgroth::groth16::PreparedParams;
    let spec = spec(spec_str);
    let params = Arc::new(params_for(&spec, 1));
    assert!(params.h.len() * 96 >= min_h_bytes, "H's bases are too few");
    let circuit = spec.instance(5);
    let inputs = circuit.public_inputs();
    let asg = synthesize(circuit).unwrap();
    let (r, s) = groth16::draw_randomness(1, &mut rng(6));
    let expected = Prover::new(Arc::new(CpuBackend), params.clone())
        .unwrap()
        .prove_assignments(vec![asg.clone()], &r, &s)
        .unwrap();
    let streamed = Placement::Streamed;
    let prepared =
        PreparedParams::with_placement(gpu.as_ref(), params.clone(), streamed, streamed).unwrap();
    let prover = Prover::from_prepared(gpu.clone(), prepared);
    let got = prover.prove_assignments(vec![asg], &r, &s).unwrap();
    assert_eq!(got[0].to_bytes(), expected[0].to_bytes(), "{spec_str}");
    assert!(verifies(&params, &got[0], &inputs));
}

fn wgpu(allow_int64: bool) -> Option<Arc<dyn Backend>> {
    wgpu_with(WgpuOptions {
        allow_int64,
        ..WgpuOptions::default()
    })
}

fn wgpu_with(options: WgpuOptions) -> Option<Arc<dyn Backend>> {
    match WgpuBackend::open_with(options) {
        Ok(b) => Some(Arc::new(b)),
        Err(e) => {
            if std::env::var("CROSSGROTH_REQUIRE_WGPU").as_deref() == Ok("1") {
                panic!("CROSSGROTH_REQUIRE_WGPU=1 but {e}");
            }
            report_skipped(
                "wgpu proof tests (set CROSSGROTH_REQUIRE_WGPU=1 to fail instead)",
                &e,
            );
            None
        }
    }
}

/// Both WGSL paths: SHADER_INT64 (where the adapter has it) and portable u32.
/// With `CROSSGROTH_GPU_PROOF_MAX_LOG` set (a hardware adapter: lavapipe would
/// take hours) also SHA-256 of 512 bytes and squaring chains up to that size, on
/// both paths (the portable path, once capped at 2^16, proves the 2^20 chain in
/// seconds since its field values are packed).
#[test]
fn wgpu_proofs_match_cpu() {
    let max_log: Option<u32> = std::env::var("CROSSGROTH_GPU_PROOF_MAX_LOG")
        .ok()
        .and_then(|v| v.parse().ok());
    for allow_int64 in [true, false] {
        let Some(gpu) = wgpu(allow_int64) else { return };
        eprintln!("wgpu device: {}", gpu.device());
        let mut specs: Vec<String> = vec!["cubic".into(), "sha256:64".into()];
        if let Some(max) = max_log {
            specs.push("sha256:512".into());
            specs.extend((10..=max).step_by(2).map(|l| format!("chain:{l}")));
        }
        for s in &specs {
            same_proofs_as_cpu(&gpu, s);
        }
    }
}

/// MSMs whose scalars wgpu split ahead ([`Backend::msm_plan`], what a proof's
/// L, A and B MSMs take while H's MSM runs) equal the cpu backend's on the
/// same inputs, over G1 and G2 bases with a density and a later first base;
/// the cpu backend reads a wgpu plan's scalars as they are, and wgpu refuses
/// a plan for an input it was not made from.
#[test]
fn wgpu_msms_from_plans_match_cpu() {
    use crossgroth::backend::{Msm, MsmInput, MsmScalars, Placement, G1, G2};
    use crossgroth::density::Density;
    use crossgroth::{G1Projective, G2Projective, Scalar};
    use ff::Field;
    use group::{Curve, Group};
    use rand_core::RngCore;

    let Some(gpu) = wgpu(true) else { return };
    let cpu = CpuBackend;
    let mut rng = rng(17);
    let sc: Vec<Scalar> = (0..2500)
        .map(|_| match rng.next_u32() % 4 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            _ => Scalar::random(&mut rng),
        })
        .collect();
    let mut density = Density::new();
    for i in 0..sc.len() {
        density.push(i % 5 != 0);
    }
    // 2000 variables in the density, their bases from 9 on
    let input = MsmInput {
        scalars: MsmScalars::Host(&sc),
        density: Some(&density),
        base_offset: 9,
    };
    let g1: Vec<_> = (0..2009)
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    let g2: Vec<_> = (0..2009)
        .map(|_| G2Projective::random(&mut rng).to_affine())
        .collect();
    let plan = gpu.msm_plan(g1.len(), &input).unwrap().expect("wgpu plans");
    let planned = MsmInput {
        scalars: MsmScalars::Planned(&sc, &plan),
        ..input
    };
    let g1 = (Arc::new(g1), Placement::PLAIN);
    let (on_gpu, on_cpu) = (
        gpu.prepare_bases::<G1>(g1.0.clone(), g1.1).unwrap(),
        cpu.prepare_bases::<G1>(g1.0, g1.1).unwrap(),
    );
    let want = cpu.msm(&on_cpu, &[input]).unwrap();
    assert_eq!(gpu.msm(&on_gpu, &[planned]).unwrap(), want, "G1");
    assert_eq!(cpu.msm(&on_cpu, &[planned]).unwrap(), want, "G1 on cpu");
    let g2 = (Arc::new(g2), Placement::PLAIN);
    let (on_gpu2, on_cpu2) = (
        gpu.prepare_bases::<G2>(g2.0.clone(), g2.1).unwrap(),
        cpu.prepare_bases::<G2>(g2.0, g2.1).unwrap(),
    );
    let want = cpu.msm(&on_cpu2, &[input]).unwrap();
    assert_eq!(gpu.msm(&on_gpu2, &[planned]).unwrap(), want, "G2");
    let moved = MsmInput {
        base_offset: 8,
        ..planned
    };
    // Other scalars of the same count: the plan knows them apart too.
    let other: Vec<Scalar> = sc.iter().map(|x| x.double()).collect();
    let other = MsmInput {
        scalars: MsmScalars::Planned(&other, &plan),
        ..planned
    };
    for refused in [moved, other] {
        let e = gpu.msm(&on_gpu, &[refused]).unwrap_err().to_string();
        assert!(e.contains("other scalars, density or bases"), "{e}");
    }
}

/// wgpu bases left in host memory and streamed by every MSM through one
/// device window, a chunk at a time (bindings of 1 MiB: H's, L's and A's
/// bases take several chunks), give the cpu backend's proof.
#[test]
fn wgpu_proofs_with_streamed_bases_match_cpu() {
    let Some(gpu) = wgpu_with(WgpuOptions {
        max_binding_bytes: Some(1 << 20),
        ..WgpuOptions::default()
    }) else {
        return;
    };
    same_proof_with_streamed_bases(&gpu, "sha256:64", 2 << 20);
}

/// An adapter whose memory (here `WgpuOptions::device_memory`) cannot hold
/// even one proof's working buffers beside streamed bases is refused at
/// placement, in one line naming the bytes needed and the device's budget.
#[test]
fn wgpu_placement_plans_from_the_device_memory() {
    let spec = spec("cubic");
    let params = Arc::new(params_for(&spec, 1));
    let Some(tiny) = wgpu_with(WgpuOptions {
        device_memory: Some(64),
        ..WgpuOptions::default()
    }) else {
        return;
    };
    assert_eq!(tiny.memory().map(|(_, total)| total), Some(64));
    let err = Prover::with_placement(tiny, params.clone(), &PlacementConfig::default())
        .err()
        .expect("64 bytes of device memory must be refused")
        .to_string();
    eprintln!("{err}");
    assert!(!err.contains('\n'), "one line: {err}");
    assert!(
        err.contains("need") && err.contains("device budget of"),
        "{err}"
    );
}

/// Two wgpu devices (two contexts on whichever adapter is here, lavapipe in CI)
/// under one engine: both get work, and the proofs are the cpu backend's.
#[test]
fn wgpu_engine_spreads_jobs_over_two_devices() {
    use crossgroth::backend::{open_backends, BackendKind};
    use crossgroth::engine::{Engine, EngineConfig, Job};
    let backends = match open_backends(BackendKind::Wgpu, Some(&[0, 0]), &Default::default()) {
        Ok(b) => b,
        Err(e) => {
            if std::env::var("CROSSGROTH_REQUIRE_WGPU").as_deref() == Ok("1") {
                panic!("CROSSGROTH_REQUIRE_WGPU=1 but {e}");
            }
            report_skipped(
                "wgpu engine test (set CROSSGROTH_REQUIRE_WGPU=1 to fail instead)",
                &e,
            );
            return;
        }
    };
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let circuits: Vec<_> = (0..8).map(|s| spec("cubic").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(8, &mut rng(2));
    let expected = Prover::new(Arc::new(CpuBackend), params.clone())
        .unwrap()
        .prove_batch(circuits.clone(), &r, &s)
        .unwrap();
    let engine = Engine::start(
        EngineConfig {
            synthesis_workers: 2,
            finalizer_workers: 2,
            ..EngineConfig::default()
        },
        backends,
    )
    .unwrap();
    // Both devices warm up (build their pipelines) first: one still building
    // would leave every job to the other.
    engine.wait_ready();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let job = Job::new(format!("p{i}"), params.clone(), vec![circuits[i].clone()])
                .with_randomness(vec![r[i]], vec![s[i]]);
            engine.submit(job).unwrap()
        })
        .collect();
    let got: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.wait().unwrap())
        .collect();
    assert_eq!(got, expected);
    let summary = engine.shutdown();
    assert!(
        summary.devices.iter().all(|d| d.units > 0),
        "{:?}",
        summary.devices
    );
}

/// One wgpu device under the engine with circuits waiting: the next one's a, b
/// and c are sent to the device while the current one's MSMs run, and every
/// proof is still the cpu backend's.
#[test]
fn wgpu_engine_sends_the_next_a_b_c_ahead() {
    use crossgroth::engine::{Engine, EngineConfig, Job};
    let Some(gpu) = wgpu(true) else { return };
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let circuits: Vec<_> = (0..6).map(|s| spec("cubic").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(6, &mut rng(5));
    let expected = Prover::new(Arc::new(CpuBackend), params.clone())
        .unwrap()
        .prove_batch(circuits.clone(), &r, &s)
        .unwrap();
    let engine = Engine::start(EngineConfig::default(), vec![gpu]).unwrap();
    engine.wait_ready();
    let got = engine
        .submit(Job::new("ahead", params, circuits).with_randomness(r, s))
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(got, expected);
    let summary = engine.shutdown();
    let ahead = summary.stages.get("sent_ahead").map_or(0, |s| s.count);
    assert!(
        ahead > 0,
        "no circuit's a, b and c were sent ahead: {:?}",
        summary.stages.keys()
    );
}

/// Witness-only jobs on cuda: a, b and c come from the constraint matrices held
/// on the device (kernels/synthesis/spmv.cuh), rows checked there, and the proofs
/// are the cpu backend's direct ones, byte for byte; an unsatisfied row is found
/// on the device and named. The 2^17 chain has B scalars enough for B_G2 on
/// the device, which then reads the aux the device holds.
#[test]
fn cuda_witness_only_jobs_match_cpu() {
    let Some(gpu) = cuda() else { return };
    let specs = ["cubic", "sha256:512", "chain:14", "chain:17"];
    witness_only_jobs_match_cpu(gpu, &specs.map(|s| (s, 3)));
}

/// The same on wgpu with `witness_on_device` (shaders/synthesis/spmv.wgsl), and a
/// binding limit low enough that the matrices go in several pieces, the aux in
/// several parts and a, b and c in several chunks; H alone stays on the device,
/// and the other MSMs read the host's witness. SHA-256's long rows take one
/// circuit (three take most of a minute on lavapipe); the others take three,
/// so that witnesses are sent ahead of a running circuit.
#[test]
fn wgpu_witness_only_jobs_match_cpu() {
    let Some(gpu) = wgpu_with(WgpuOptions {
        witness_on_device: true,
        max_binding_bytes: Some(64 << 10),
        ..WgpuOptions::default()
    }) else {
        return;
    };
    witness_only_jobs_match_cpu(gpu, &[("cubic", 3), ("sha256:64", 1), ("chain:12", 3)]);
}

/// `specs`: each circuit's spec and how many instances of it one job proves.
fn witness_only_jobs_match_cpu(gpu: Arc<dyn Backend>, specs: &[(&str, usize)]) {
    use crossgroth::engine::{Engine, EngineConfig, Job};
    use crossgroth::synthesis::RecordedShape;
    use crossgroth::{Circuit, ConstraintSystem, Error, Scalar, SynthesisError};
    let config = || EngineConfig {
        synthesis_workers: 2,
        memory_budget: 8 << 30,
        ..EngineConfig::default()
    };
    let cpu_engine = Engine::start(config(), vec![Arc::new(CpuBackend)]).unwrap();
    let engine = Engine::start(config(), vec![gpu.clone()]).unwrap();
    for &(spec_str, count) in specs {
        let params = Arc::new(params_for(&spec(spec_str), 1));
        let shape = Arc::new(RecordedShape::record(spec(spec_str).blank()).unwrap().0);
        // The device takes the matrices (else the engine would compute a, b
        // and c on the host, and the proofs would match without the kernels).
        let placed = gpu.prepare_matrices(&shape);
        assert!(placed.is_ok(), "{spec_str}: {:?}", placed.err());
        let circuits: Vec<_> = (0..count as u64)
            .map(|s| spec(spec_str).instance(s))
            .collect();
        let (r, s) = groth16::draw_randomness(count, &mut rng(5));
        let direct = cpu_engine
            .submit(
                Job::new("direct", params.clone(), circuits.clone())
                    .with_randomness(r.clone(), s.clone()),
            )
            .unwrap();
        let recorded = engine
            .submit(Job::recorded("recorded", params, shape, circuits).with_randomness(r, s))
            .unwrap();
        let (direct, recorded) = (direct.wait().unwrap(), recorded.wait().unwrap());
        let bytes = |p: &[groth16::Proof]| p.iter().map(|p| p.to_bytes()).collect::<Vec<_>>();
        assert_eq!(bytes(&recorded), bytes(&direct), "{spec_str}");
    }

    struct Unsatisfied;
    impl Circuit<Scalar> for Unsatisfied {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
            let y = cs.alloc_input(|| "y", || Ok(Scalar::from(9u64)))?;
            let z = cs.alloc_input(|| "z", || Ok(Scalar::from(10u64)))?;
            cs.enforce(|| "x*x = y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
            cs.enforce(|| "x*x = z", |lc| lc + x, |lc| lc + x, |lc| lc + z);
            Ok(())
        }
    }
    let params =
        Arc::new(groth16::generate_random_parameters(Unsatisfied, &mut rng(1), None).unwrap());
    let shape = Arc::new(RecordedShape::record(Unsatisfied).unwrap().0);
    let bad = engine
        .submit(Job::recorded("bad", params, shape, vec![Unsatisfied]))
        .unwrap();
    match bad.wait() {
        Err(Error::Unsatisfied {
            row: 1,
            path: Some(path),
            circuit: Some(0),
        }) => assert!(path.contains("x*x = z"), "{path}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(engine.status().out_of_service, vec![false]);
}

//! The proving engine: proofs identical to the plain prover, faults confined to
//! their job, cancellation, priorities, and a budget that returns to zero.

mod common;

use std::sync::Arc;
use std::time::Duration;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use common::*;
use crossgroth::backend::simulated::SimulatedDevice;
use crossgroth::backend::{Backend, CpuBackend};
use crossgroth::circuits::BuiltinCircuit;
use crossgroth::engine::{Engine, EngineConfig, Job, Priority};
use crossgroth::groth16::{self, Parameters, Prover};
use crossgroth::{Error, Scalar};

fn config(budget: usize) -> EngineConfig {
    EngineConfig {
        synthesis_workers: 2,
        memory_budget: budget,
        ..EngineConfig::default()
    }
}

fn cpu() -> Vec<Arc<dyn Backend>> {
    vec![Arc::new(CpuBackend)]
}

fn job(
    id: &str,
    params: &Arc<Parameters>,
    spec_str: &str,
    seeds: std::ops::Range<u64>,
) -> (Job, Vec<BuiltinCircuit>) {
    let circuits: Vec<_> = seeds.map(|s| spec(spec_str).instance(s)).collect();
    let (r, s) = groth16::draw_randomness(circuits.len(), &mut rng(circuits.len() as u64));
    (
        Job::new(id, params.clone(), circuits.clone()).with_randomness(r, s),
        circuits,
    )
}

#[test]
fn engine_proofs_equal_the_plain_provers() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let engine = Engine::start(config(4 << 30), cpu()).unwrap();
    let circuits: Vec<_> = (0..3).map(|s| spec("sha256:64").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(3, &mut rng(2));
    let handle = engine
        .submit(
            Job::new("a", params.clone(), circuits.clone()).with_randomness(r.clone(), s.clone()),
        )
        .unwrap();
    let got = handle.wait().unwrap();
    let expected = Prover::new(Arc::new(CpuBackend), params.clone())
        .unwrap()
        .prove_batch(circuits, &r, &s)
        .unwrap();
    assert_eq!(got, expected);
    let summary = engine.shutdown();
    assert_eq!(summary.proofs, 3);
    for stage in [
        "synthesis",
        "h",
        "msm_l",
        "b_g2",
        "assemble",
        "verify",
        "dealloc",
        "queue_device",
    ] {
        assert!(
            summary.stages.contains_key(stage),
            "no {stage} in {:?}",
            summary.stages.keys()
        );
    }
    // The cpu backend makes B_G2 beside the G1 MSMs: the stage is that time,
    // once a proof, not the finalizer's few microseconds of handing it on.
    let b_g2 = &summary.stages["b_g2"];
    assert_eq!(b_g2.count, 3);
    assert!(b_g2.p50_ms > 0.02, "b_g2 p50 {} ms", b_g2.p50_ms);
}

#[test]
fn a_backend_error_fails_only_its_job_and_leaks_nothing() {
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let device = SimulatedDevice::failing_at(Duration::from_millis(5), 3).shared();
    let engine = Engine::start(
        EngineConfig {
            synthesis_workers: 1,
            ..config(1 << 30)
        },
        vec![device],
    )
    .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            engine
                .submit(job(&format!("j{i}"), &params, "cubic", i * 2..i * 2 + 2).0)
                .unwrap()
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.wait()).collect();
    let failed: Vec<_> = results.iter().filter(|r| r.is_err()).collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    assert!(failed[0]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("injected failure"));
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 3);
    assert_drained(&engine);
}

struct Unsatisfied;
impl Circuit<Scalar> for Unsatisfied {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
        let y = cs.alloc_input(|| "y", || Ok(Scalar::from(10u64)))?;
        cs.enforce(|| "x*x = y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        Ok(())
    }
}

#[test]
fn an_invalid_witness_fails_its_job_only() {
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let bad_params =
        Arc::new(groth16::generate_random_parameters(Unsatisfied, &mut rng(1), None).unwrap());
    let engine = Engine::start(config(1 << 30), cpu()).unwrap();
    let good = engine
        .submit(job("good", &params, "cubic", 0..3).0)
        .unwrap();
    let bad = engine
        .submit(Job::new("bad", bad_params, vec![Unsatisfied]))
        .unwrap();
    assert!(matches!(bad.wait(), Err(Error::Unsatisfied { row: 0, .. })));
    assert_eq!(good.wait().unwrap().len(), 3);
    assert_drained(&engine);
}

/// A benchmark job proves an unsatisfied witness (no row check, no verification);
/// its proof does not verify, and the same circuit in a checked job still fails.
#[test]
fn an_unchecked_benchmark_job_proves_an_unsatisfied_witness() {
    let params =
        Arc::new(groth16::generate_random_parameters(Unsatisfied, &mut rng(1), None).unwrap());
    let engine = Engine::start(config(1 << 30), cpu()).unwrap();
    let proofs = engine
        .submit(Job::new("bench", params.clone(), vec![Unsatisfied]).unchecked_benchmark())
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(proofs.len(), 1);
    assert!(!verifies(&params, &proofs[0], &[Scalar::from(10u64)]));
    let checked = engine
        .submit(Job::new("checked", params, vec![Unsatisfied]))
        .unwrap();
    assert!(matches!(
        checked.wait(),
        Err(Error::Unsatisfied { row: 0, .. })
    ));
    assert_drained(&engine);
}

#[test]
fn wait_ready_returns_once_every_device_is_warm() {
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let slow = Duration::from_millis(400);
    let devices = vec![
        SimulatedDevice::new(Duration::from_millis(5))
            .with_id(0)
            .shared(),
        SimulatedDevice::new(Duration::from_millis(5))
            .with_id(1)
            .with_warm_up(slow)
            .shared(),
    ];
    let started = std::time::Instant::now();
    let engine = Engine::start(config(1 << 30), devices).unwrap();
    engine.wait_ready();
    assert!(
        started.elapsed() >= slow,
        "wait_ready returned after {:?}, before the slow warm-up ended",
        started.elapsed()
    );
    engine.wait_ready(); // at once, the second time
    let h = engine
        .submit(job("after", &params, "cubic", 0..2).0)
        .unwrap();
    assert_eq!(h.wait().unwrap().len(), 2);
    assert_drained(&engine);
}

#[test]
fn cancelling_releases_memory() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let device = SimulatedDevice::new(Duration::from_millis(30)).shared();
    let engine = Engine::start(config(1 << 30), vec![device]).unwrap();
    let (long, _) = job("long", &params, "sha256:64", 0..12);
    let h = engine.submit(long).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    h.cancel();
    assert!(matches!(h.wait(), Err(Error::Cancelled(ref id)) if id == "long"));
    assert!(
        !engine.cancel("long"),
        "a finished job cannot be cancelled again"
    );
    assert_drained(&engine);
}

#[test]
fn submissions_are_checked() {
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let device = SimulatedDevice::new(Duration::from_millis(50)).shared();
    let engine = Engine::start(config(1 << 30), vec![device]).unwrap();
    let first = engine
        .submit(job("same", &params, "cubic", 0..2).0)
        .unwrap();
    let e = engine
        .submit(job("same", &params, "cubic", 0..2).0)
        .unwrap_err();
    assert!(matches!(e, Error::DuplicateJob(ref id) if id == "same"));
    assert!(matches!(
        engine.submit(Job::new(
            "empty",
            params.clone(),
            Vec::<BuiltinCircuit>::new()
        )),
        Err(Error::EmptyBatch)
    ));
    let wrong = Job::new("rs", params.clone(), vec![spec("cubic").instance(0)])
        .with_randomness(vec![], vec![]);
    assert!(engine.submit(wrong).is_err());
    first.wait().unwrap();
    // The id is free again once the job resolved.
    engine
        .submit(job("same", &params, "cubic", 0..1).0)
        .unwrap()
        .wait()
        .unwrap();

    let tiny = Engine::start(config(1000), cpu()).unwrap();
    let e = tiny
        .submit(job("big", &params, "cubic", 0..1).0)
        .unwrap_err();
    assert!(matches!(e, Error::JobTooLarge { .. }), "{e}");
    if let Some(resident) = crossgroth::engine::resident_anon_bytes() {
        // What the process holds counts: a budget that the test binary alone
        // fills refuses even a circuit that would fit an empty process.
        let held = Engine::start(config(resident / 2), cpu()).unwrap();
        let e = held
            .submit(job("held", &params, "cubic", 0..1).0)
            .unwrap_err();
        assert!(
            matches!(e, Error::JobTooLarge { held, .. } if held > 0),
            "{e}"
        );
    }
}

#[test]
fn high_priority_jobs_pass_queued_low_priority_synthesis() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let device = SimulatedDevice::new(Duration::from_millis(20)).shared();
    let engine = Engine::start(
        EngineConfig {
            synthesis_workers: 1,
            ..config(1 << 30)
        },
        vec![device],
    )
    .unwrap();
    let low = engine
        .submit(
            job("low", &params, "sha256:64", 0..10)
                .0
                .with_priority(Priority::Low),
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let high = engine
        .submit(
            job("high", &params, "sha256:64", 20..21)
                .0
                .with_priority(Priority::High),
        )
        .unwrap();
    let order = Arc::new(std::sync::Mutex::new(vec![]));
    let o = order.clone();
    let t = std::thread::spawn(move || {
        low.wait().unwrap();
        o.lock().unwrap().push("low");
    });
    high.wait().unwrap();
    order.lock().unwrap().push("high");
    t.join().unwrap();
    assert_eq!(*order.lock().unwrap(), vec!["high", "low"]);
}

#[test]
fn several_devices_share_the_work_and_give_the_same_bytes() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let circuits: Vec<_> = (0..4).map(|s| spec("sha256:64").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(12, &mut rng(9));
    let run = |devices: usize| {
        let backends: Vec<Arc<dyn Backend>> = (0..devices)
            .map(|id| {
                SimulatedDevice::new(Duration::from_millis(40))
                    .with_id(id)
                    .shared()
            })
            .collect();
        let engine = Engine::start(
            EngineConfig {
                finalizer_workers: devices,
                ..config(1 << 30)
            },
            backends,
        )
        .unwrap();
        // Three jobs of four partitions, as a sector's partitions would come.
        let handles: Vec<_> = (0..3)
            .map(|j| {
                let rs = r[j * 4..j * 4 + 4].to_vec();
                let ss = s[j * 4..j * 4 + 4].to_vec();
                engine
                    .submit(
                        Job::new(format!("sector-{j}"), params.clone(), circuits.clone())
                            .with_randomness(rs, ss),
                    )
                    .unwrap()
            })
            .collect();
        let proofs: Vec<_> = handles
            .into_iter()
            .flat_map(|h| h.wait().unwrap())
            .collect();
        (proofs, engine.shutdown())
    };
    let (one, _) = run(1);
    let (three, summary) = run(3);
    assert_eq!(one, three, "results do not depend on the number of devices");
    assert_eq!(summary.devices.len(), 3);
    for d in &summary.devices {
        assert!(
            d.units > 0,
            "device {} got no work: {:?}",
            d.device,
            summary.devices
        );
        assert_eq!(d.busy_measured_by, "device events");
    }
    assert_eq!(summary.devices.iter().map(|d| d.units).sum::<usize>(), 12);
}

#[test]
fn a_devices_bases_are_refused_by_another_device() {
    use crossgroth::backend::Placement;
    use crossgroth::groth16::{steps, PreparedParams};
    use crossgroth::synthesis::synthesize;
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let a = SimulatedDevice::new(Duration::from_millis(1)).with_id(0);
    let b = SimulatedDevice::new(Duration::from_millis(1)).with_id(1);
    let plain = Placement::PLAIN;
    let on_a = PreparedParams::with_placement(&a, params.clone(), plain, plain).unwrap();
    let mut asg = synthesize(spec("cubic").instance(1)).unwrap();
    let e = steps::g1_side(&b, &on_a, &mut asg, steps::Pending::default(), &mut drop).unwrap_err();
    assert!(
        e.to_string()
            .contains("resident on device 0 used on device 1"),
        "{e}"
    );
    let mut asg = synthesize(spec("cubic").instance(1)).unwrap();
    assert!(steps::g1_side(&a, &on_a, &mut asg, steps::Pending::default(), &mut drop).is_ok());
}

#[test]
fn parameters_beyond_the_device_budget_fail_their_job_clearly() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let small = SimulatedDevice::new(Duration::from_millis(1))
        .with_memory(1 << 20)
        .shared();
    let engine = Engine::start(config(1 << 30), vec![small]).unwrap();
    let e = engine
        .submit(job("big", &params, "sha256:64", 0..1).0)
        .unwrap()
        .wait()
        .unwrap_err();
    assert!(e.to_string().contains("over the device budget"), "{e}");
    assert_drained(&engine);
}

#[test]
fn parameters_beyond_the_device_budget_are_streamed_where_the_backend_can() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let device = Arc::new(
        SimulatedDevice::new(Duration::from_millis(1))
            .with_memory(16 << 20) // the working buffers fit, the bases do not
            .with_streaming(),
    );
    let engine = Engine::start(config(1 << 30), vec![device.clone() as Arc<dyn Backend>]).unwrap();
    let circuits: Vec<_> = (0..2).map(|s| spec("sha256:64").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(2, &mut rng(5));
    let j = Job::new("big", params.clone(), circuits.clone()).with_randomness(r.clone(), s.clone());
    let proofs = engine.submit(j).unwrap().wait().unwrap();
    let expected = Prover::new(Arc::new(CpuBackend), params.clone())
        .unwrap()
        .prove_batch(circuits, &r, &s)
        .unwrap();
    assert_eq!(proofs, expected);
    // h, l, a, b_g1 and b_g2, prepared once for both proofs
    assert_eq!(device.streamed_sets(), 5);
    assert_drained(&engine);
}

#[test]
fn the_device_budget_counts_what_resident_bases_really_take() {
    // Two parameter sets whose bases fit the device together as host bytes
    // (2b + w of a 3.5b + w budget), on a device that keeps 3 copies of resident
    // bases: the first set takes 3b, so the second (3b + b + w > 3.5b + w) must
    // be streamed (3b + w fits).
    let first = Arc::new(params_for(&spec("sha256:64"), 1));
    let second = Arc::new(params_for(&spec("sha256:64"), 2));
    let b = first.heap_bytes() as f64;
    let w = (6 * (first.h.len() + 1) * std::mem::size_of::<Scalar>()) as f64;
    let total = ((3.5 * b + w) / 0.9) as usize;
    let device = Arc::new(
        SimulatedDevice::new(Duration::from_millis(1))
            .with_memory(total)
            .with_resident_copies(3)
            .with_streaming(),
    );
    let engine = Engine::start(config(1 << 30), vec![device.clone() as Arc<dyn Backend>]).unwrap();
    // (other circuits for the second set: the simulated device replays results
    // by witness, whatever the parameters)
    for (id, params, seeds) in [("first", &first, 0..1), ("second", &second, 1..2)] {
        let proofs = engine
            .submit(job(id, params, "sha256:64", seeds).0)
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(proofs.len(), 1);
    }
    // the first set resident, the second's five base sets streamed
    assert_eq!(device.streamed_sets(), 5);
    assert_drained(&engine);
}

/// Submits `count` jobs of one cubic circuit each (ids prefix0, prefix1, ...)
/// and waits for all of them.
fn one_circuit_jobs(
    engine: &Engine,
    params: &Arc<Parameters>,
    prefix: &str,
    count: u64,
) -> Vec<Result<Vec<groth16::Proof>, Error>> {
    let handles: Vec<_> = (0..count)
        .map(|i| {
            engine
                .submit(job(&format!("{prefix}{i}"), params, "cubic", i..i + 1).0)
                .unwrap()
        })
        .collect();
    handles.into_iter().map(|h| h.wait()).collect()
}

#[test]
fn a_device_that_keeps_failing_is_taken_out_of_service() {
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let good = SimulatedDevice::new(Duration::from_millis(20))
        .with_id(0)
        .shared();
    let bad = SimulatedDevice::failing_from(Duration::from_millis(1), 1)
        .with_id(1)
        .shared();
    let engine = Engine::start(config(1 << 30), vec![good, bad]).unwrap();
    let results = one_circuit_jobs(&engine, &params, "j", 12);
    let failed = results.iter().filter(|r| r.is_err()).count();
    assert_eq!(
        failed, 3,
        "the bad device fails three circuits, then leaves: {results:?}"
    );
    assert_eq!(engine.status().out_of_service, vec![false, true]);
    assert_drained(&engine);

    // With no device left, circuits fail instead of waiting forever.
    let bad = SimulatedDevice::failing_from(Duration::from_millis(1), 1).shared();
    let engine = Engine::start(config(1 << 30), vec![bad]).unwrap();
    for r in one_circuit_jobs(&engine, &params, "k", 6) {
        assert!(r.is_err());
    }
    assert_drained(&engine);
}

#[test]
fn recorded_jobs_give_the_same_proofs() {
    use crossgroth::synthesis::RecordedShape;
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let shape = Arc::new(RecordedShape::record(spec("sha256:64").blank()).unwrap().0);
    let circuits: Vec<_> = (0..2).map(|s| spec("sha256:64").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(2, &mut rng(3));
    let engine = Engine::start(config(1 << 30), cpu()).unwrap();
    let direct = engine
        .submit(
            Job::new("direct", params.clone(), circuits.clone())
                .with_randomness(r.clone(), s.clone()),
        )
        .unwrap();
    let recorded = engine
        .submit(Job::recorded("recorded", params.clone(), shape, circuits).with_randomness(r, s))
        .unwrap();
    assert_eq!(direct.wait().unwrap(), recorded.wait().unwrap());
    assert_drained(&engine);
}

/// Witness-only jobs on a device that holds the circuit's constraint matrices:
/// a, b and c are computed there (the cuda backend's path, here on a simulated
/// device), and the proofs are the direct ones, byte for byte. Matrices too large
/// for the device's memory are computed on the host, with the same proofs.
#[test]
fn witness_only_jobs_on_a_device_with_the_matrices_give_the_same_proofs() {
    use crossgroth::synthesis::RecordedShape;
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let shape = Arc::new(RecordedShape::record(spec("sha256:64").blank()).unwrap().0);
    let circuits: Vec<_> = (0..3).map(|s| spec("sha256:64").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(3, &mut rng(3));
    let cpu_engine = Engine::start(config(1 << 30), cpu()).unwrap();
    let direct = cpu_engine
        .submit(
            Job::new("direct", params.clone(), circuits.clone())
                .with_randomness(r.clone(), s.clone()),
        )
        .unwrap()
        .wait()
        .unwrap();
    for (matrices_bytes, on_device) in [(1 << 20, true), (1 << 40, false)] {
        let device = Arc::new(
            SimulatedDevice::new(Duration::from_millis(1))
                .with_memory(8 << 30)
                .with_matrices(matrices_bytes),
        );
        let engine = Engine::start(config(1 << 30), vec![device.clone()]).unwrap();
        let recorded = engine
            .submit(
                Job::recorded("recorded", params.clone(), shape.clone(), circuits.clone())
                    .with_randomness(r.clone(), s.clone()),
            )
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(recorded, direct, "matrices on the device: {on_device}");
        assert_eq!(device.matrices_prepared(), usize::from(on_device));
        assert_drained(&engine);
    }
    assert_drained(&cpu_engine);
}

/// Where the device computes a, b and c, a recorded job's circuits are charged
/// their witness from the first, so a budget too small for full assignments
/// still takes them; the same job with a, b, c on the host is refused.
#[test]
fn witness_only_jobs_are_charged_their_witness_from_the_first_circuit() {
    use crossgroth::synthesis::RecordedShape;
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let shape = Arc::new(RecordedShape::record(spec("sha256:64").blank()).unwrap().0);
    let scalar = std::mem::size_of::<Scalar>();
    let domain = shape.num_rows().next_power_of_two();
    let witness = (shape.num_inputs() + shape.num_aux()) * scalar;
    // The witness and one device's H fit, with room to spare; a, b and c do not.
    let budget = witness + 2 * domain * scalar;
    assert!(budget < 3 * domain * scalar + 2 * witness);
    let circuits: Vec<_> = (0..2).map(|s| spec("sha256:64").instance(s)).collect();
    let device = SimulatedDevice::new(Duration::from_millis(1))
        .with_memory(8 << 30)
        .with_matrices(1 << 20)
        .shared();
    let config = EngineConfig {
        evict_idle_sets_after: Some(Duration::from_secs(60)),
        ..config(budget)
    };
    let engine = Engine::start(config.clone(), vec![device]).unwrap();
    let proofs = engine
        .submit(Job::recorded(
            "witness-only",
            params.clone(),
            shape.clone(),
            circuits.clone(),
        ))
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(proofs.len(), 2);
    let e = engine
        .submit(Job::new("direct", params.clone(), circuits.clone()))
        .unwrap_err();
    assert!(matches!(e, Error::JobTooLarge { .. }), "{e}");
    assert_drained(&engine);
    // A backend without constraint matrices computes a, b, c on the host right
    // after synthesis: the same job is charged in full.
    let cpu_engine = Engine::start(config, cpu()).unwrap();
    let e = cpu_engine
        .submit(Job::recorded("host-abc", params, shape, circuits))
        .unwrap_err();
    assert!(matches!(e, Error::JobTooLarge { .. }), "{e}");
}

/// With `release_host_copies`, the G1 queries leave host memory once the
/// device holds them, the proofs stay the same, and a device that must place
/// them again after a fault fails its jobs naming the released query.
#[test]
fn host_copies_are_released_once_the_device_holds_the_bases() {
    use crossgroth::groth16::placement::PlacementConfig;
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let (direct, _) = job("cpu", &params, "cubic", 0..2);
    let cpu_engine = Engine::start(config(1 << 30), cpu()).unwrap();
    let expected = cpu_engine.submit(direct).unwrap().wait().unwrap();
    // Its second device call fails, as a device fault would.
    let device = SimulatedDevice::failing_at(Duration::from_millis(1), 3)
        .with_memory(8 << 30)
        .shared();
    let engine = Engine::start(
        EngineConfig {
            synthesis_workers: 1,
            placement: PlacementConfig {
                release_host_copies: true,
                ..PlacementConfig::default()
            },
            ..config(1 << 30)
        },
        vec![device],
    )
    .unwrap();
    let (first, _) = job("released", &params, "cubic", 0..2);
    assert_eq!(engine.submit(first).unwrap().wait().unwrap(), expected);
    for q in params.g1_queries() {
        assert!(!q.is_on_host(), "{q:?}");
    }
    assert!(params.b_g2.is_on_host());
    assert_eq!(
        params.heap_bytes(),
        params.b_g2.len() * std::mem::size_of::<crossgroth::G2Affine>()
    );
    let (faulty, _) = job("fault", &params, "cubic", 2..3);
    let e = engine.submit(faulty).unwrap().wait().unwrap_err();
    assert!(e.to_string().contains("injected failure"), "{e}");
    let (after, _) = job("after", &params, "cubic", 3..4);
    let e = engine.submit(after).unwrap().wait().unwrap_err();
    assert!(e.to_string().contains("h query was released"), "{e}");
    assert_drained(&engine);
}

/// An unsatisfied witness found by the device's row check fails its job, names
/// the row and the circuit, and leaves the device in service.
#[test]
fn an_unsatisfied_witness_found_on_the_device_fails_its_job_only() {
    use crossgroth::synthesis::RecordedShape;
    let bad_params =
        Arc::new(groth16::generate_random_parameters(Unsatisfied, &mut rng(1), None).unwrap());
    let bad_shape = Arc::new(RecordedShape::record(Unsatisfied).unwrap().0);
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let shape = Arc::new(RecordedShape::record(spec("cubic").blank()).unwrap().0);
    let device = Arc::new(SimulatedDevice::new(Duration::from_millis(1)).with_matrices(1 << 10));
    let engine = Engine::start(config(1 << 30), vec![device.clone()]).unwrap();
    for _ in 0..4 {
        let bad = engine.submit(Job::recorded(
            "bad",
            bad_params.clone(),
            bad_shape.clone(),
            vec![Unsatisfied],
        ));
        match bad.unwrap().wait() {
            Err(Error::Unsatisfied {
                row: 0,
                path: Some(path),
                circuit: Some(0),
            }) => assert!(path.contains("x*x = y"), "{path}"),
            other => panic!("{other:?}"),
        }
    }
    let circuits: Vec<_> = (0..2).map(|s| spec("cubic").instance(s)).collect();
    let good = engine
        .submit(Job::recorded("good", params, shape, circuits))
        .unwrap();
    assert_eq!(good.wait().unwrap().len(), 2);
    assert_eq!(engine.status().out_of_service, vec![false]);
    assert_eq!(device.matrices_prepared(), 2);
    assert_drained(&engine);
}

/// Eight cubic circuits proved on a simulated device that is the bound (its
/// critical path takes 40 ms, synthesis far less, so circuits wait in its
/// queue while one runs), `device` made from that one, each job made by
/// `job` from the circuits and (r, s): the proofs equal the cpu backend's
/// direct ones, and the device sent ahead at least half of the circuits'
/// vectors, each of them used by its H. Returns the device and the circuits.
fn sent_ahead_matches_cpu(
    device: impl FnOnce(SimulatedDevice) -> SimulatedDevice,
    job: impl FnOnce(Vec<BuiltinCircuit>, Vec<Scalar>, Vec<Scalar>) -> Job,
) -> (Arc<SimulatedDevice>, Vec<BuiltinCircuit>) {
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let circuits: Vec<_> = (0..8).map(|s| spec("cubic").instance(s)).collect();
    let (r, s) = groth16::draw_randomness(circuits.len(), &mut rng(8));
    let cpu_engine = Engine::start(config(1 << 30), cpu()).unwrap();
    let direct = cpu_engine
        .submit(Job::new("direct", params, circuits.clone()).with_randomness(r.clone(), s.clone()))
        .unwrap()
        .wait()
        .unwrap();
    let device = Arc::new(device(
        SimulatedDevice::new(Duration::from_millis(40)).with_memory(8 << 30),
    ));
    let engine = Engine::start(config(1 << 30), vec![device.clone()]).unwrap();
    let proofs = engine
        .submit(job(circuits.clone(), r, s))
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(proofs, direct);
    let (staged, used) = device.witnesses_staged();
    assert!(staged >= 4, "{staged} of 8 circuits' vectors sent ahead");
    assert_eq!(staged, used, "every copy sent ahead is used");
    assert_drained(&engine);
    assert_drained(&cpu_engine);
    (device, circuits)
}

/// On a device that stages witnesses, the next circuit of the same shape has
/// its witness sent ahead while the current one runs, every staged witness is
/// the one its H computation uses, and the proofs are the cpu backend's.
#[test]
fn witnesses_are_sent_ahead_while_the_previous_circuit_runs() {
    use crossgroth::synthesis::RecordedShape;
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let shape = Arc::new(RecordedShape::record(spec("cubic").blank()).unwrap().0);
    let (device, circuits) = sent_ahead_matches_cpu(
        |d| d.with_matrices(1 << 10),
        |circuits, r, s| {
            Job::recorded("staged", params.clone(), shape.clone(), circuits).with_randomness(r, s)
        },
    );
    let before = device.witnesses_staged();

    // Turned off, none is.
    let engine = Engine::start(
        EngineConfig {
            stage_witnesses: false,
            ..config(1 << 30)
        },
        vec![device.clone()],
    )
    .unwrap();
    let again = engine
        .submit(Job::recorded("unstaged", params, shape, circuits))
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(again.len(), 8);
    assert_eq!(device.witnesses_staged(), before);
    assert_drained(&engine);
}

/// On a device that takes a, b and c ahead (as wgpu does), the next circuit of
/// the same parameters has them sent while the current one runs, every copy
/// sent is the one its H uses, and the proofs are the cpu backend's.
#[test]
fn a_b_and_c_are_sent_ahead_while_the_previous_circuit_runs() {
    let params = Arc::new(params_for(&spec("cubic"), 1));
    let (device, circuits) = sent_ahead_matches_cpu(
        |d| d.with_abc_staging().with_msm_plans(),
        |circuits, r, s| Job::new("staged", params, circuits).with_randomness(r, s),
    );
    // As on wgpu, the G1 side planned its L, A and B MSMs beside H's, and
    // each MSM took its plan (one made for other scalars would be refused).
    let (made, used) = device.msm_plans();
    assert_eq!(made, 3 * circuits.len(), "L, A and B planned a proof");
    assert_eq!(used, made, "every plan used by its MSM");
}

/// A proof whose B_G2 runs on the device after its G1 side (in the finalizer:
/// no witness kept on the device) counts that MSM in the device's busy time
/// too: a simulated device holds itself for `g1` on each critical path and
/// for `g1 / 2` off it, so two partitions keep it busy for three holds of
/// `g1`, not two.
#[test]
fn a_b_g2_on_the_device_counts_in_its_busy_time() {
    let circuit = spec("chain:17");
    let params = Arc::new(params_for(&circuit, 3));
    let g1 = Duration::from_millis(300);
    let device = Arc::new(
        SimulatedDevice::new(g1)
            .with_off_path_time(g1 / 2)
            .with_msm_plans(),
    );
    let engine = Engine::start(config(1 << 31), vec![device.clone()]).unwrap();
    let (j, circuits) = job("chain", &params, "chain:17", 0..2);
    let proofs = engine.submit(j).unwrap().wait().unwrap();
    let summary = engine.shutdown();
    assert_eq!(proofs.len(), circuits.len());
    // B_G1's plan reached the B_G2 made after the G1 side.
    assert_eq!(device.msm_plans(), (3 * 2, 4 * 2), "plans made and used");
    let d = &summary.devices[0];
    assert_eq!(d.units, 2);
    assert_eq!(d.busy_measured_by, "device events");
    let holds = d.busy_s / g1.as_secs_f64();
    assert!(
        (2.95..3.05).contains(&holds),
        "busy {:.2} s: {holds:.2} holds of the device for two partitions, not 3",
        d.busy_s
    );
}

//! `crossgroth filecoin bench-porep`: BENCHMARK of PoRep C2 at a real sector
//! size (32 GiB: ten partitions of ~130 M constraints) on fabricated vanilla
//! proofs, with parameters generated in memory. The proofs it makes are never
//! valid (the witnesses are not satisfied) and are discarded; what it measures is
//! the prover's work on the real constraint system, densities and scalar mix.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use crossgroth::backend::{open_backends, BackendKind};
use crossgroth::engine::{Engine, EngineConfig, Job};
use crossgroth::groth16::placement::PlacementConfig;
use crossgroth::groth16::{self, SetupOptions};
use crossgroth::synthesis::RecordedShape;
use crossgroth_filecoin::benchmark::PoRepBenchmark;
use crossgroth_filecoin::registered;
use rand_core::SeedableRng;

use super::backend_flags;
use super::output::Output;
use super::progress::Stage;

#[derive(clap::Args)]
pub struct BenchPoRepArgs {
    /// Sector size: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long, default_value = "32GiB")]
    sector_size: String,
    /// Partitions per job (default: the sector size's, 10 at 32 GiB).
    #[arg(long)]
    partitions: Option<usize>,
    /// C2-shaped jobs submitted back to back.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Backend to prove on (the parameters are generated on its device when it
    /// has setup kernels).
    #[arg(long, default_value_t = BackendKind::Auto)]
    backend: BackendKind,
    /// Upper bound for resident memory, e.g. 64GiB (default: 80% of available).
    #[arg(long)]
    memory_budget: Option<bytesize::ByteSize>,
    /// Partitions synthesized at once (default: the number of cores).
    #[arg(long)]
    synthesis_workers: Option<usize>,
    /// Synthesize directly instead of from the recorded shape.
    #[arg(long)]
    direct: bool,
    /// Before the jobs, time one partition's synthesis both ways (wall time and
    /// the process's core-seconds).
    #[arg(long)]
    compare_synthesis: bool,
    /// Stop after the synthesis comparison: no parameters, no proofs.
    #[arg(long, requires = "compare_synthesis")]
    synthesis_only: bool,
    /// Time the witness pass of one fabricated partition alone and stop (no
    /// shape, no parameters): wall time and core-seconds, user and system (the
    /// kernel's share is mostly the witness's fresh pages), then again on the
    /// same vectors. For profiling. With --direct, the same partition's direct
    /// synthesis is timed too, on the same cores, and the witness pass's share of
    /// its core-seconds printed.
    #[arg(long, conflicts_with_all = ["compare_synthesis"])]
    witness_pass: bool,
    /// Free the host copy of the G1 parameter queries (H, L, A, B_G1) once the
    /// device holds them resident: host memory for more partitions at once; a
    /// device fault then fails the jobs instead of placing them again.
    #[arg(long)]
    release_host_copies: bool,
    /// Seed of the fabricated proofs, of the parameters' toxic waste and of
    /// every proof's r and s (so that two backends' bytes can be compared).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where the parameters' fixed-base products run: cpu, cuda or wgpu (the same
    /// bytes either way). Default: the proving backend's device where it has
    /// setup kernels, else the CPU.
    #[arg(long, conflicts_with_all = ["witness_pass", "synthesis_only"])]
    setup_backend: Option<BackendKind>,
    /// Write every job's proofs here (192 bytes each, job after job, partition
    /// after partition), to compare backends' bytes for one --seed. They are
    /// BENCHMARK proofs: never valid.
    #[arg(long, conflicts_with_all = ["witness_pass", "synthesis_only"])]
    proofs: Option<std::path::PathBuf>,
    /// After the jobs, this many evict-and-reload cycles of the parameter set:
    /// each evicts it (host copy and device bases), prints resident and device
    /// memory against their level before it was loaded, then generates it
    /// again and proves one partition so that the device holds it again.
    #[arg(long, default_value_t = 0)]
    evict_cycles: usize,
    /// After the jobs, prove the same jobs (same seeds, r and s, the same
    /// parameters in memory) on this backend too, once the first engine has
    /// shut down and freed its device, and compare the proofs' bytes job by
    /// job; exits non-zero where they differ. Saves a second recording and
    /// generation of the shape and parameters.
    #[arg(long, conflicts_with_all = ["witness_pass", "synthesis_only", "evict_cycles", "release_host_copies"])]
    compare_backend: Option<BackendKind>,
}

pub fn run(args: BenchPoRepArgs) -> Result<()> {
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let size = registered::parse_sector_size(&args.sector_size)?;
    let name = registered::sector_size_name(size);
    println!("BENCHMARK: PoRep C2 {name} on fabricated vanilla proofs; its proofs are never valid");
    if args.witness_pass {
        return time_witness_pass(size, args.seed, args.direct);
    }
    // Checked before minutes of recording and generation.
    let proofs_out = args
        .proofs
        .as_deref()
        .map(|p| Output::check(p, "--proofs"))
        .transpose()?;
    let backends = open_backends(args.backend, None, backend_flags::backend_options())?;

    let stage = Stage::start(&format!("recording the {name} PoRep partition's shape"));
    let bench = PoRepBenchmark::record(size)?;
    stage.finish();
    let shape = &bench.shape;
    let log = crossgroth::synthesis::log_domain(shape.num_rows())?;
    let (na, nb, nc) = shape.nonzeros();
    println!(
        "shape: {} constraints, {} inputs, {} aux (domain 2^{log}); A/B/C nonzeros {na}/{nb}/{nc}; \
         A aux density {}, B aux density {}; recorded in {:.1} s, holding {}",
        shape.num_rows(),
        shape.num_inputs(),
        shape.num_aux(),
        shape.a_aux_density().count(),
        shape.b_aux_density().count(),
        bench.recorded_in.as_secs_f64(),
        bytesize::ByteSize(shape.heap_bytes() as u64)
    );
    let partitions = match args.partitions {
        Some(p) => p,
        None => bench.partitions()?,
    };

    if args.compare_synthesis {
        use crossgroth::engine::resident_anon_bytes;
        for recorded in [false, true] {
            let unit = bench
                .synthesizers(0..1, args.seed, recorded)?
                .pop()
                .expect("one");
            let before = resident_anon_bytes().unwrap_or(0);
            let (asg, secs, cpu) = core_timed(unit);
            let mut asg = asg?;
            let after = resident_anon_bytes().unwrap_or(0);
            println!(
                "one partition synthesized {} in {secs:.2} s, {cpu} ({} rows): assignment {}, resident +{}",
                if recorded {
                    "from the recorded shape, witness only (a, b, c left to the device)"
                } else {
                    "directly"
                },
                asg.num_rows(),
                bytesize::ByteSize(asg.heap_bytes() as u64),
                bytesize::ByteSize(after.saturating_sub(before) as u64),
            );
            if recorded {
                print_scalar_mix(&asg);
                let (_, secs, cpu) = core_timed(|| asg.evaluate());
                println!(
                    "its a, b, c on the host (sparse products over the recorded matrices): \
                     {secs:.2} s, {cpu}; assignment {}",
                    bytesize::ByteSize(asg.heap_bytes() as u64)
                );
            }
        }
    }

    if args.synthesis_only {
        return Ok(());
    }

    let mut config = EngineConfig {
        placement: PlacementConfig {
            release_host_copies: args.release_host_copies,
            ..backend_flags::placement()
        },
        ..EngineConfig::default()
    };
    if let Some(w) = args.synthesis_workers {
        config.synthesis_workers = w;
    }
    if let Some(b) = args.memory_budget {
        config.memory_budget = b.as_u64() as usize;
    }
    config.finalizer_workers = config.finalizer_workers.max(backends.len());
    println!(
        "engine: {} jobs × {partitions} partitions on {} ({}), {} synthesis workers, memory budget {}",
        args.jobs,
        backends[0].name(),
        backends[0].device(),
        config.synthesis_workers,
        bytesize::ByteSize(config.memory_budget as u64)
    );
    let setup_backend = match args.setup_backend {
        Some(kind) => open_backends(kind, None, backend_flags::backend_options())?
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("--setup-backend {kind}: no device"))?,
        None => backends[0].clone(),
    };
    let config_for_compare = config.clone();
    let engine = Engine::start(config, backends)?;
    engine.wait_ready();
    // The level the set's eviction must return to.
    let level = memory_now(&engine);
    // Generated into the engine's resident sets, as a daemon loads a file:
    // charged to the budget before it starts, freed by eviction.
    let set_name = format!("bench-porep-{name}");
    let expected = expected_params_bytes(shape);
    type Generated = (groth16::Parameters, Option<Arc<RecordedShape>>);
    let generate = || -> std::result::Result<Generated, crossgroth::Error> {
        let stage = Stage::start("generating parameters (insecure, in memory)");
        let report = |what: &str, done: usize, total: usize| stage.step(what, done, total);
        let options = SetupOptions {
            device: Some(setup_backend.clone()),
            progress: Some(&report),
        };
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(args.seed);
        let params = groth16::generate_random_parameters_for_shape(shape, &mut rng, &options)?;
        let setup_s = stage.finish();
        println!(
            "parameters: {} in memory, generated in {setup_s:.1} s ({} h, {} l, {} a, {} b points)",
            bytesize::ByteSize(params.heap_bytes() as u64),
            params.h.len(),
            params.l.len(),
            params.a.len(),
            params.b_g1.len()
        );
        // The shape is the set's, as in the daemon: its matrices on the
        // device are released with the set's bases.
        Ok((params, Some(bench.shape.clone())))
    };
    let (lease, _) = engine.acquire_set_with_shape(&set_name, expected, generate)?;
    let params = lease.params().clone();
    let (proof_bytes, done_at) = prove_jobs(&engine, &params, &bench, partitions, &args)?;
    if let Some(out) = &proofs_out {
        out.write_bytes(&proof_bytes)?;
        println!(
            "{} BENCHMARK proofs ({} bytes) written to {}",
            proof_bytes.len() / groth16::PROOF_BYTES,
            proof_bytes.len(),
            out.path().display()
        );
    }
    // The compared backend proves with these parameters after the engine is gone.
    let kept = args.compare_backend.map(|_| params.clone());
    drop((lease, params));
    for cycle in 1..=args.evict_cycles {
        engine.wait_idle();
        let with_set = memory_now(&engine);
        let evicted = engine
            .evict_set(&set_name)
            .ok_or_else(|| anyhow::anyhow!("{set_name} was not resident"))?;
        let after = memory_now(&engine);
        println!(
            "evict cycle {cycle}: resident {} with the set, {} after its eviction, level {}; \
             device memory in use {} with, {} after, level {}; freed {} of host and {} of device memory",
            bytes(with_set.0),
            bytes(after.0),
            bytes(level.0),
            bytes(with_set.1),
            bytes(after.1),
            bytes(level.1),
            bytes(evicted.host_bytes),
            bytes(evicted.device_bytes),
        );
        if cycle == args.evict_cycles {
            break;
        }
        let (lease, _) = engine.acquire_set_with_shape(&set_name, expected, generate)?;
        let units = bench.synthesizers(0..1, args.seed, !args.direct)?;
        let mut job =
            Job::from_synthesizers(format!("reload-{cycle}"), lease.params().clone(), units)
                .unchecked_benchmark();
        if !args.direct {
            job = job.with_recorded_shape(bench.shape.clone());
        }
        engine.submit(job)?.wait()?;
    }
    let summary = engine.shutdown();
    super::engine_run::print_summary(&summary);
    if done_at.len() > 1 {
        let steady = (done_at[done_at.len() - 1] - done_at[0]) / (done_at.len() - 1) as f64;
        println!(
            "steady state: {steady:.1} s a C2 ({} jobs after the first)",
            done_at.len() - 1
        );
    }
    println!(
        "first C2 in {:.1} s; {} C2s in {:.1} s",
        done_at[0],
        done_at.len(),
        done_at[done_at.len() - 1]
    );
    // The setup backend may be the engine's own device: the last handle to it,
    // with the context and whatever it still holds there, goes before the
    // compared backend needs the room.
    drop(setup_backend);
    if let (Some(kind), Some(params)) = (args.compare_backend, kept) {
        compare_backend(
            kind,
            config_for_compare,
            &params,
            &bench,
            partitions,
            &args,
            &proof_bytes,
        )?;
    }
    Ok(())
}

/// Submits the run's jobs to `engine` and waits for them: every proof's bytes,
/// job after job, and the seconds since the first submission at which each
/// job was done. The seeds, r and s depend only on `args.seed` and the job's
/// index, so that another backend given the same jobs must give the same bytes.
fn prove_jobs(
    engine: &Engine,
    params: &Arc<groth16::Parameters>,
    bench: &PoRepBenchmark,
    partitions: usize,
    args: &BenchPoRepArgs,
) -> Result<(Vec<u8>, Vec<f64>)> {
    let started = Instant::now();
    let mut handles = vec![];
    for j in 0..args.jobs {
        let units = bench.synthesizers(0..partitions, args.seed + j as u64, !args.direct)?;
        let (r, s) = groth16::draw_randomness(
            partitions,
            &mut rand_chacha::ChaCha20Rng::seed_from_u64(args.seed ^ (0x7273 << 32) ^ j as u64),
        );
        let mut job = Job::from_synthesizers(format!("c2-{j}"), params.clone(), units)
            .unchecked_benchmark()
            .with_randomness(r, s);
        if !args.direct {
            job = job.with_recorded_shape(bench.shape.clone());
        }
        handles.push(engine.submit(job)?);
    }
    let mut done_at = vec![];
    let mut proof_bytes = vec![];
    for h in handles {
        let id = h.id().to_string();
        for p in h.wait()? {
            proof_bytes.extend_from_slice(&p.to_bytes());
        }
        let t = started.elapsed().as_secs_f64();
        let st = engine.status();
        println!(
            "{id}: done at {t:.1} s; resident {}, charged {}",
            bytesize::ByteSize(st.memory.resident as u64),
            bytesize::ByteSize(st.memory.charged as u64)
        );
        done_at.push(t);
    }
    Ok((proof_bytes, done_at))
}

/// `--compare-backend`: the same jobs on `kind`, in an engine of its own, and
/// their bytes against `expected` (the first backend's).
fn compare_backend(
    kind: BackendKind,
    config: EngineConfig,
    params: &Arc<groth16::Parameters>,
    bench: &PoRepBenchmark,
    partitions: usize,
    args: &BenchPoRepArgs,
    expected: &[u8],
) -> Result<()> {
    let backends = open_backends(kind, None, backend_flags::backend_options())?;
    println!(
        "compare: the same {} jobs on {} ({})",
        args.jobs,
        backends[0].name(),
        backends[0].device()
    );
    let engine = Engine::start(config, backends)?;
    engine.wait_ready();
    let (bytes, _) = prove_jobs(&engine, params, bench, partitions, args)?;
    let summary = engine.shutdown();
    super::engine_run::print_summary(&summary);
    let differing: Vec<usize> = (0..expected.len() / groth16::PROOF_BYTES)
        .filter(|&i| {
            let r = i * groth16::PROOF_BYTES..(i + 1) * groth16::PROOF_BYTES;
            bytes.get(r.clone()) != expected.get(r)
        })
        .collect();
    if differing.is_empty() && bytes.len() == expected.len() {
        println!(
            "compare: {kind}'s {} proofs equal {}'s byte for byte",
            bytes.len() / groth16::PROOF_BYTES,
            args.backend
        );
        Ok(())
    } else {
        bail!(
            "compare: {kind}'s proofs differ from {}'s (proofs {differing:?} of {}, {} against {} bytes)",
            args.backend,
            expected.len() / groth16::PROOF_BYTES,
            bytes.len(),
            expected.len()
        )
    }
}

/// One fabricated partition's witness pass, run twice: the first learns the
/// variable counts, the second is sized as the engine sizes it (from the
/// recorded shape) and is the one reported. With `direct`, the partition's
/// direct synthesis (a, b, c and the witness) is timed after it.
fn time_witness_pass(size: u64, seed: u64, direct: bool) -> Result<()> {
    use crossgroth::synthesis::WitnessSystem;
    use crossgroth::{Circuit, ConstraintSystem, Scalar};
    use crossgroth_filecoin::fabricated::PoRepPartition;
    let circuit = || crossgroth_filecoin::fabricated::porep_partition_for_size(size, 0, seed);
    // Each timed region is synthesis alone: the circuit (fabricated vanilla
    // proofs) is built before it and the vectors are freed after it.
    let pass = |mut ws: WitnessSystem, circuit: PoRepPartition| -> Result<WitnessSystem> {
        ws.alloc_input(|| "one", || Ok(<Scalar as ff::Field>::ONE))?;
        circuit.synthesize(&mut ws)?;
        Ok(ws)
    };
    let stage = Stage::start("a first witness pass (learning the variable counts)");
    let first = pass(WitnessSystem::new(0, 0), circuit()?)?;
    stage.finish();
    let hint = (first.inputs_slice().len(), first.aux_slice().len());
    drop(first);
    let c = circuit()?;
    let (ws, secs, witness_cpu) = core_timed(|| pass(WitnessSystem::new(hint.0, hint.1), c));
    println!(
        "one partition's witness pass ({} inputs, {} aux, {}): {secs:.2} s, {witness_cpu}",
        hint.0,
        hint.1,
        bytesize::ByteSize((hint.1 * std::mem::size_of::<Scalar>()) as u64)
    );
    let (input, aux) = ws?.into_witness();
    let c = circuit()?;
    let (ws, secs, reused_cpu) = core_timed(|| pass(WitnessSystem::reusing(input, aux), c));
    drop(ws?);
    println!(
        "the same pass on the last pass's vectors (no fresh pages): {secs:.2} s, {reused_cpu}"
    );
    if direct {
        let circuit = circuit()?;
        let (asg, secs, direct_cpu) = core_timed(|| crossgroth::synthesis::synthesize(circuit));
        println!(
            "the same partition synthesized directly ({} rows): {secs:.2} s, {direct_cpu}",
            asg?.num_rows()
        );
        if let (Some(w), Some(d)) = (witness_cpu.total(), direct_cpu.total()) {
            println!(
                "witness pass / direct synthesis: {:.2} of the core-seconds",
                w / d
            );
        }
    }
    Ok(())
}

/// Core-seconds a piece of work took, user and system, where the system can
/// tell.
struct CoreSeconds(Option<(f64, f64)>);

impl CoreSeconds {
    fn total(&self) -> Option<f64> {
        self.0.map(|(user, system)| user + system)
    }
}

impl std::fmt::Display for CoreSeconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some((user, system)) => write!(
                f,
                "{:.1} core-seconds ({user:.1} user, {system:.1} system)",
                user + system
            ),
            None => f.write_str("core-seconds not measured on this system"),
        }
    }
}

/// Runs `f`: its result, wall seconds, and the process's core-seconds.
fn core_timed<T>(f: impl FnOnce() -> T) -> (T, f64, CoreSeconds) {
    let cpu = process_cpu_seconds();
    let t = Instant::now();
    let out = f();
    let secs = t.elapsed().as_secs_f64();
    let cpu = match (cpu, process_cpu_seconds()) {
        (Some((u0, s0)), Some((u1, s1))) => CoreSeconds(Some((u1 - u0, s1 - s0))),
        _ => CoreSeconds(None),
    };
    (out, secs, cpu)
}

/// User and system CPU time of the whole process so far, in seconds.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn process_cpu_seconds() -> Option<(f64, f64)> {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut u) == 0).then_some(u)
    }?;
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some((secs(usage.ru_utime), secs(usage.ru_stime)))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn process_cpu_seconds() -> Option<(f64, f64)> {
    None
}

/// How many of the MSMs' aux scalars are 0, 1 or wider: sums of bases for the
/// 0/1 scalars are plain additions, far cheaper than a bucket MSM.
fn print_scalar_mix(asg: &crossgroth::synthesis::Assignment) {
    use ff::Field;
    use rayon::prelude::*;
    let mix = |density: Option<&crossgroth::density::Density>| {
        asg.aux
            .par_iter()
            .enumerate()
            .filter(|(i, _)| density.is_none_or(|d| d.get(*i)))
            .map(|(_, s)| {
                if s.is_zero_vartime() {
                    (1usize, 0usize, 0usize)
                } else if *s == crossgroth::Scalar::ONE {
                    (0, 1, 0)
                } else {
                    (0, 0, 1)
                }
            })
            .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
    };
    for (name, density) in [
        ("L", None),
        ("A", Some(&asg.a_aux_density)),
        ("B", Some(&asg.b_aux_density)),
    ] {
        let (zero, one, wide) = mix(density);
        let n = (zero + one + wide).max(1) as f64;
        println!(
            "{name} aux scalars: {zero} zero ({:.1}%), {one} one ({:.1}%), {wide} wider ({:.1}%)",
            100.0 * zero as f64 / n,
            100.0 * one as f64 / n,
            100.0 * wide as f64 / n
        );
    }
}

/// The process's anonymous resident memory and the first device's memory in
/// use, both as the system reports them.
fn memory_now(engine: &Engine) -> (usize, usize) {
    let resident = crossgroth::engine::resident_anon_bytes().unwrap_or(0);
    let device = engine
        .device_memory()
        .first()
        .copied()
        .flatten()
        .map_or(0, |(free, total)| total - free);
    (resident, device)
}

fn bytes(n: usize) -> bytesize::ByteSize {
    bytesize::ByteSize(n as u64)
}

/// The parameters' host bytes for `shape`, as bellperson lays them out: H over
/// the domain, L over the aux, A and B_G1 over their densities (inputs
/// included), B_G2 (twice a G1 point) over B's.
fn expected_params_bytes(shape: &crossgroth::synthesis::RecordedShape) -> usize {
    const G1: usize = 96;
    let domain = shape.num_rows().next_power_of_two();
    let a = shape.num_inputs() + shape.a_aux_density().count();
    let b = shape.b_input_density().count() + shape.b_aux_density().count();
    (domain + shape.num_aux() + a + b) * G1 + b * 2 * G1
}

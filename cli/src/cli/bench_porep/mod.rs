//! `crossgroth filecoin bench-porep`: BENCHMARK of PoRep C2 at a real sector
//! size (32 GiB: ten partitions of ~130 M constraints) on fabricated vanilla
//! proofs, with parameters generated in memory. The proofs it makes are never
//! valid (the witnesses are not satisfied) and are discarded; what it measures is
//! the prover's work on the real constraint system, densities and scalar mix.

use std::sync::Arc;

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

mod drill;
mod jobs;
mod synthesis;

use jobs::{compare_backend, prove_jobs};

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
    /// Devices to prove on, e.g. 0,1 (default: every device of the backend);
    /// the parameters are generated on the first.
    #[arg(long, value_delimiter = ',')]
    devices: Option<Vec<usize>>,
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
    /// A drill: once the engine's device DEVICE (its place in --devices, from
    /// 0) has finished AFTER circuits, fault it on purpose (cuda: a trapping kernel, which spoils the device for the rest
    /// of the process), e.g. 1:3. Its circuit in flight goes to the other
    /// devices; the run reports which devices ended out of service. Keep the
    /// host copies (no --release-host-copies) so that the others can prove.
    #[arg(long, value_name = "DEVICE:AFTER")]
    lose_device: Option<drill::LoseDevice>,
    /// The compared engine does not send the next partition's witness to the
    /// device ahead (see EngineConfig::stage_witnesses): with
    /// `--compare-backend` of the same kind, its times against the first
    /// engine's are the staging's gain, in one process.
    #[arg(long, requires = "compare_backend")]
    compare_without_staging: bool,
}

pub fn run(args: BenchPoRepArgs) -> Result<()> {
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let size = registered::parse_sector_size(&args.sector_size)?;
    let name = registered::sector_size_name(size);
    println!("BENCHMARK: PoRep C2 {name} on fabricated vanilla proofs; its proofs are never valid");
    if args.witness_pass {
        return synthesis::time_witness_pass(size, args.seed, args.direct);
    }
    // Checked before minutes of recording and generation.
    let proofs_out = args
        .proofs
        .as_deref()
        .map(|p| Output::check(p, "--proofs"))
        .transpose()?;
    let backends = open_backends(
        args.backend,
        args.devices.as_deref(),
        backend_flags::backend_options(),
    )?;

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
        synthesis::compare_synthesis(&bench, args.seed)?;
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
    let config_for_compare = EngineConfig {
        stage_witnesses: !args.compare_without_staging,
        ..config.clone()
    };
    let drilled = match args.lose_device {
        Some(l) => Some((
            l,
            backends.get(l.device).cloned().ok_or_else(|| {
                anyhow::anyhow!(
                    "--lose-device {}:{}: the engine has {} device(s)",
                    l.device,
                    l.after,
                    backends.len()
                )
            })?,
        )),
        None => None,
    };
    let engine = Engine::start(config, backends)?;
    engine.wait_ready();
    // The level the set's eviction must return to.
    let level = memory_now(&engine);
    // Generated into the engine's resident sets, as a daemon loads a file:
    // charged to the budget before it starts, freed by eviction.
    let set_name = format!("bench-porep-{name}");
    let setup_options = SetupOptions {
        device: Some(setup_backend.clone()),
        progress: None,
    };
    // The generator's scratch is charged with the set while it runs.
    let expected =
        expected_params_bytes(shape) + groth16::setup_scratch_bytes(shape, &setup_options)?;
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
    let done = std::sync::atomic::AtomicBool::new(false);
    let (proof_bytes, done_at) = std::thread::scope(|scope| {
        if let Some((lose, backend)) = &drilled {
            scope.spawn(|| drill::run(&engine, backend, *lose, &done));
        }
        let proved = prove_jobs(&engine, &params, &bench, partitions, &args);
        done.store(true, std::sync::atomic::Ordering::Release);
        proved
    })?;
    if drilled.is_some() {
        println!(
            "drill: every job completed; devices out of service: {:?}",
            engine.status().out_of_service
        );
    }
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

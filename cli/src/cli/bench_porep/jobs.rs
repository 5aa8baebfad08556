//! The jobs of `bench-porep`: submitted to an engine and waited for, and
//! proved again on a second backend to compare their bytes
//! (`--compare-backend`).

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use crossgroth::backend::{open_backends, BackendKind};
use crossgroth::engine::{Engine, EngineConfig, Job};
use crossgroth::groth16;
use crossgroth_filecoin::benchmark::PoRepBenchmark;
use rand_core::SeedableRng;

use super::super::backend_flags;
use super::BenchPoRepArgs;

/// Submits the run's jobs to `engine` and waits for them: every proof's bytes,
/// job after job, and the seconds since the first submission at which each
/// job was done. The seeds, r and s depend only on `args.seed` and the job's
/// index, so that another backend given the same jobs must give the same bytes.
pub(super) fn prove_jobs(
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
pub(super) fn compare_backend(
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
        "compare: the same {} jobs on {} ({}){}",
        args.jobs,
        backends[0].name(),
        backends[0].device(),
        if config.stage_witnesses {
            ""
        } else {
            ", witnesses not sent ahead"
        }
    );
    // What the first engine left on the device decides the compared one's
    // placement (its bases stream where the room is short).
    if let Some((free, total)) = backends[0].memory() {
        println!(
            "compare: {} of {} device memory in use before the compared engine starts",
            bytesize::ByteSize(total.saturating_sub(free) as u64),
            bytesize::ByteSize(total as u64)
        );
    }
    let engine = Engine::start(config, backends)?;
    engine.wait_ready();
    let (bytes, _) = prove_jobs(&engine, params, bench, partitions, args)?;
    let summary = engine.shutdown();
    super::super::engine_run::print_summary(&summary);
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

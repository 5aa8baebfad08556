//! The synthesis side of `bench-porep`: one partition's witness pass timed
//! alone (`--witness-pass`), direct against recorded synthesis
//! (`--compare-synthesis`), and the core-seconds both report.

use std::time::Instant;

use anyhow::Result;
use crossgroth_filecoin::benchmark::PoRepBenchmark;

use super::super::progress::Stage;

/// `--compare-synthesis`: one partition synthesized directly and from the
/// recorded shape (witness only), each timed in wall and core-seconds with
/// the resident memory it added; then the recorded one's scalar mix and its
/// a, b, c computed on the host.
pub(super) fn compare_synthesis(bench: &PoRepBenchmark, seed: u64) -> Result<()> {
    use crossgroth::engine::resident_anon_bytes;
    for recorded in [false, true] {
        let unit = bench
            .synthesizers(0..1, seed, recorded)?
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
    Ok(())
}

/// One fabricated partition's witness pass, run twice: the first learns the
/// variable counts, the second is sized as the engine sizes it (from the
/// recorded shape) and is the one reported. With `direct`, the partition's
/// direct synthesis (a, b, c and the witness) is timed after it.
pub(super) fn time_witness_pass(size: u64, seed: u64, direct: bool) -> Result<()> {
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

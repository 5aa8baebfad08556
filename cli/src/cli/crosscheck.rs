//! `crossgroth crosscheck`: the same inputs through every available backend, each
//! operation's output and the final proof bytes compared with the cpu backend.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use crossgroth::backend::{open_backend_with, Backend, BackendKind, CpuBackend, Msm, MsmInput};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::placement;
use crossgroth::groth16::steps::{a_inputs, b_inputs};
use crossgroth::groth16::PreparedParams;
use crossgroth::groth16::{self, Parameters, Prover};
use crossgroth::synthesis::{synthesize, Assignment};
use crossgroth::Scalar;
use ff::Field;
use rand_core::SeedableRng;

/// One compared operation: its name, whether it matched, and both times.
struct Outcome {
    op: &'static str,
    matched: bool,
    cpu_s: f64,
    other_s: f64,
}

/// One G1 MSM of the comparison: its name, which prepared bases, its inputs.
type G1Op<'a> = (
    &'static str,
    fn(&PreparedParams) -> &crossgroth::backend::G1Bases,
    Vec<MsmInput<'a>>,
);
fn timed<T>(
    f: impl FnOnce() -> crossgroth::error::Result<T>,
) -> crossgroth::error::Result<(T, f64)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed().as_secs_f64()))
}

pub fn run(circuit: CircuitSpec, params_path: Option<PathBuf>, seed: u64) -> Result<()> {
    let command = format!("crosscheck --circuit {circuit}");
    match &params_path {
        Some(p) => super::prove::check_prove_memory(&command, p, &circuit)?,
        None => super::setup::check_setup_memory(&command, &circuit)?,
    }
    let asg = synthesize(circuit.instance(seed))?;
    let params = Arc::new(match &params_path {
        Some(p) => {
            // The shape first, as `prove` does: a mismatch is named here, before
            // the long read, not found deep inside an MSM.
            super::params::lengths(p)?
                .check_shape(&asg.shape())
                .with_context(|| p.display().to_string())?;
            let (params, loaded) = super::params::load(p, false)?;
            println!("{}: {}", p.display(), loaded.summary());
            params
        }
        None => groth16::generate_random_parameters(
            circuit.blank(),
            &mut rand_chacha::ChaCha20Rng::seed_from_u64(seed),
            None,
        )?,
    });
    let cpu: Arc<dyn Backend> = Arc::new(CpuBackend);
    let others: Vec<Arc<dyn Backend>> = [BackendKind::Cuda, BackendKind::Wgpu]
        .into_iter()
        .filter_map(
            |k| match open_backend_with(k, super::backend_flags::backend_options()) {
                Ok(b) => Some(b),
                Err(e) => {
                    println!("{k}: skipped, {e}");
                    None
                }
            },
        )
        .collect();
    let mut failures = 0;
    for other in &others {
        // Pipelines and the like are built once per process: not part of any
        // operation's time below.
        let t = Instant::now();
        other.warm_up()?;
        println!(
            "{} ({}) against cpu, {circuit} (warm-up {:.2} s, not counted below):",
            other.name(),
            other.device(),
            t.elapsed().as_secs_f64()
        );
        for o in compare(&cpu, other, &params, &asg, seed)? {
            println!(
                "  {:10} {:8}  cpu {:8.4} s  {} {:8.4} s",
                o.op,
                if o.matched { "match" } else { "MISMATCH" },
                o.cpu_s,
                other.name(),
                o.other_s
            );
            failures += usize::from(!o.matched);
        }
    }
    if others.is_empty() {
        println!("only the cpu backend is available here: nothing to compare it with");
    }
    if failures > 0 {
        bail!("{failures} operations differ from the cpu backend");
    }
    Ok(())
}

fn compare(
    cpu: &Arc<dyn Backend>,
    other: &Arc<dyn Backend>,
    params: &Arc<Parameters>,
    asg: &Assignment,
    seed: u64,
) -> Result<Vec<Outcome>> {
    let mut out = vec![];
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let m = asg.num_rows().next_power_of_two();
    let values: Vec<Scalar> = (0..m).map(|_| Scalar::random(&mut rng)).collect();
    let (mut x, mut y) = (values.clone(), values);
    let ((), cpu_s) = timed(|| cpu.ntt(&mut x, false))?;
    let ((), other_s) = timed(|| other.ntt(&mut y, false))?;
    out.push(Outcome {
        op: "ntt",
        matched: x == y,
        cpu_s,
        other_s,
    });

    let h_of = |backend: &Arc<dyn Backend>| {
        let (mut a, mut b, mut c) = (asg.a.clone(), asg.b.clone(), asg.c.clone());
        backend.compute_h(&mut a, &mut b, &mut c).map(|()| a)
    };
    let (h_cpu, cpu_s) = timed(|| h_of(cpu))?;
    let (h_other, other_s) = timed(|| h_of(other))?;
    out.push(Outcome {
        op: "h",
        matched: h_cpu == h_other,
        cpu_s,
        other_s,
    });

    let placed = super::backend_flags::placement();
    let (pc, _) = placement::place(cpu.as_ref(), params, &placed, 0)?;
    let (po, _) = placement::place(other.as_ref(), params, &placed, 0)?;
    let g1_ops: [G1Op<'_>; 4] = [
        ("msm h", |p| &p.h, vec![MsmInput::dense(&h_cpu)]),
        ("msm l", |p| &p.l, vec![MsmInput::dense(&asg.aux)]),
        ("msm a", |p| &p.a, a_inputs(asg).to_vec()),
        ("msm b_g1", |p| &p.b_g1, b_inputs(asg).to_vec()),
    ];
    for (op, bases, inputs) in g1_ops {
        let (c, cpu_s) = timed(|| cpu.msm(bases(&pc), &inputs))?;
        let (o, other_s) = timed(|| other.msm(bases(&po), &inputs))?;
        out.push(Outcome {
            op,
            matched: c == o,
            cpu_s,
            other_s,
        });
    }
    let (c, cpu_s) = timed(|| cpu.msm(&pc.b_g2, &b_inputs(asg)))?;
    let (o, other_s) = timed(|| other.msm(&po.b_g2, &b_inputs(asg)))?;
    out.push(Outcome {
        op: "msm b_g2",
        matched: c == o,
        cpu_s,
        other_s,
    });

    let (r, s) = groth16::draw_randomness(1, &mut rng);
    // The proof with the parameters prepared above: no second upload of the bases.
    let (cpu_prover, other_prover) = (
        Prover::from_prepared(cpu.clone(), pc),
        Prover::from_prepared(other.clone(), po),
    );
    let (p_cpu, cpu_s) = timed(|| cpu_prover.prove_assignments(vec![asg.clone()], &r, &s))?;
    let (p_other, other_s) = timed(|| other_prover.prove_assignments(vec![asg.clone()], &r, &s))?;
    out.push(Outcome {
        op: "proof",
        matched: p_cpu[0].to_bytes() == p_other[0].to_bytes(),
        cpu_s,
        other_s,
    });
    Ok(out)
}

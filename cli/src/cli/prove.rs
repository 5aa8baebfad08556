//! `crossgroth prove` (one proof, without the engine) and `crossgroth verify`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use crossgroth::backend::{open_backend_with, BackendKind};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{self, Proof, ProveOptions, Prover};
use crossgroth::synthesis;
use crossgroth::Error;
use rand_core::{OsRng, SeedableRng};

use super::files::PublicInputsFile;
use super::output::Output;
use super::progress::Stage;
use super::{backend_flags, fault, memory, output, params};

pub(super) struct ProveArgs {
    pub(super) circuit: CircuitSpec,
    pub(super) params: PathBuf,
    pub(super) proof: PathBuf,
    pub(super) inputs: PathBuf,
    pub(super) backend: BackendKind,
    pub(super) seed: Option<u64>,
    pub(super) witness_seed: u64,
    pub(super) check: bool,
    pub(super) trust_params: bool,
}

/// Refuses a prove run whose parameters and one proof's buffers would not fit.
pub(super) fn check_prove_memory(
    command: &str,
    params: &Path,
    circuit: &CircuitSpec,
) -> Result<()> {
    let file = std::fs::metadata(params).map_or(0, |m| m.len());
    let (rows, vars, _) = memory::circuit_size(circuit);
    let domain = rows.max(1).next_power_of_two();
    memory::ensure_fits(
        command,
        memory::BASE + file + memory::proof_bytes(domain, vars),
        file,
        &format!(
            "{} of parameters and {circuit}'s {} rows",
            memory::size(file),
            memory::rows_text(rows)
        ),
    )
}

/// Names the namespace path of an unsatisfied row by synthesizing the circuit
/// again, this time tracking names (only once a row has failed: proving itself
/// never pays for names).
pub(super) fn name_unsatisfied(e: Error, circuit: impl FnOnce() -> fault::CliCircuit) -> Error {
    match e {
        Error::Unsatisfied {
            row,
            path: None,
            circuit: place,
        } => {
            let path = synthesis::synthesize_with_names(circuit())
                .ok()
                .and_then(|(_, names)| names.get(row).cloned())
                .filter(|p| !p.is_empty());
            Error::Unsatisfied {
                row,
                path,
                circuit: place,
            }
        }
        e => e,
    }
}

pub(super) fn prove(args: ProveArgs) -> Result<()> {
    let started = Instant::now();
    // Everything that can fail fast fails before the parameters are read.
    let proof_out = Output::check(&args.proof, "--proof")?;
    let inputs_out = Output::check(&args.inputs, "--inputs")?;
    output::check_distinct(
        &[("--proof", &proof_out), ("--inputs", &inputs_out)],
        &[("--params", &args.params)],
    )?;
    check_prove_memory(
        &format!("prove --circuit {}", args.circuit),
        &args.params,
        &args.circuit,
    )?;
    let backend = open_backend_with(args.backend, backend_flags::backend_options())?;
    // The parameters' lengths against the circuit: milliseconds, before the read.
    let lengths = params::lengths(&args.params)?;
    let circuit = fault::instance(&args.circuit, args.witness_seed);
    let public_inputs = circuit.public_inputs();
    let t = Instant::now();
    let asg = synthesis::synthesize(circuit)?;
    let synthesis_s = t.elapsed().as_secs_f64();
    lengths
        .check_shape(&asg.shape())
        .with_context(|| args.params.display().to_string())?;
    let (params, loaded) = params::load(&args.params, args.trust_params)?;
    let params = Arc::new(params);
    let prover = Prover::with_placement(backend, params.clone(), &backend_flags::placement())?
        .with_options(ProveOptions {
            check_witness: args.check,
        });
    let (r, s) = match args.seed {
        Some(seed) => {
            groth16::draw_randomness(1, &mut rand_chacha::ChaCha20Rng::seed_from_u64(seed))
        }
        None => groth16::draw_randomness(1, &mut OsRng),
    };
    let stage = Stage::start(&format!(
        "proving {} on {}",
        args.circuit,
        prover.backend().name()
    ));
    let t = Instant::now();
    let proof = prover
        .prove_assignments(vec![asg], &r, &s)
        .map(|mut p| p.remove(0))
        .map_err(|e| name_unsatisfied(e, || fault::instance(&args.circuit, args.witness_seed)))?;
    let prove_s = synthesis_s + t.elapsed().as_secs_f64();
    stage.finish();
    let inputs_file = PublicInputsFile::new(&args.circuit, &public_inputs, args.seed.is_some());
    output::commit(vec![
        proof_out.stage(|w| Ok(w.write_all(&proof.to_bytes())?))?,
        inputs_out.stage(|w| inputs_file.write_to(w))?,
    ])?;
    println!(
        "proved {} on {} in {:.3} s ({}; {:.1} s in all): proof {}, public inputs {}{}",
        args.circuit,
        prover.backend().name(),
        prove_s,
        loaded.summary(),
        started.elapsed().as_secs_f64(),
        args.proof.display(),
        args.inputs.display(),
        if args.seed.is_some() {
            " (seeded r, s: reproducible, not for production)"
        } else {
            ""
        }
    );
    Ok(())
}

pub(super) fn verify(
    params: Option<PathBuf>,
    vk: Option<PathBuf>,
    proof: PathBuf,
    inputs: PathBuf,
) -> Result<()> {
    let (vk, key_path) = match (params, vk) {
        (_, Some(path)) => (params::load_vk_file(&path)?, path),
        (Some(path), None) => (params::load_vk(&path)?, path),
        (None, None) => bail!("give --params or --vk"),
    };
    let bytes = std::fs::read(&proof).map_err(|e| Error::io(&proof, e))?;
    let proof_value = Proof::from_bytes(&bytes).with_context(|| proof.display().to_string())?;
    let (public, circuit) = PublicInputsFile::read_with_circuit(&inputs)?;
    let expected = vk.ic.len() - 1;
    if public.len() != expected {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        bail!(
            "{} belongs to a circuit with {expected} public input{}, but {} holds {} ({}): \
             the key and the proof are of different circuits",
            key_path.display(),
            plural(expected),
            inputs.display(),
            public.len(),
            circuit.map_or_else(|| "unknown circuit".to_string(), |c| format!("for {c}")),
        );
    }
    let pvk = groth16::prepare_verifying_key(&vk);
    if groth16::verify_proof(&pvk, &proof_value, &public)? {
        println!(
            "valid: {} verifies against {} public inputs",
            proof.display(),
            public.len()
        );
        Ok(())
    } else {
        bail!(
            "invalid: {} does not verify against these public inputs and key",
            proof.display()
        )
    }
}

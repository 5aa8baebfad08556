//! `crossgroth devices` and `crossgroth demo`: what this machine can prove on, and
//! one proof end to end on it.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};
use crossgroth::backend::{available_backends, open_backend_with, BackendKind};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{self, Prover};
use crossgroth::synthesis;
use rand_core::OsRng;

use super::backend_flags;
use super::setup::{check_setup_memory, generate};

pub(super) fn devices() -> Result<()> {
    for report in available_backends(backend_flags::backend_options()) {
        match report.status {
            Ok(device) => println!("{:5} available    {device}", report.name),
            Err(reason) => println!("{:5} unavailable  {reason}", report.name),
        }
    }
    Ok(())
}

pub(super) fn demo(circuit: CircuitSpec, backend: BackendKind) -> Result<()> {
    check_setup_memory(&format!("demo --circuit {circuit}"), &circuit)?;
    let backend = open_backend_with(backend, backend_flags::backend_options())?;
    println!(
        "crossgroth demo: {circuit} on the {} backend ({})",
        backend.name(),
        backend.device()
    );
    let t = Instant::now();
    let params = Arc::new(generate(circuit, None, Some(backend.clone()))?);
    println!(
        "  setup (insecure, random)  {:8.3} s",
        t.elapsed().as_secs_f64()
    );
    let prover = Prover::with_placement(backend, params.clone(), &backend_flags::placement())?;
    let instance = circuit.instance(1);
    let inputs = instance.public_inputs();
    let t = Instant::now();
    let asg = synthesis::synthesize(instance)?;
    println!(
        "  synthesis                 {:8.3} s  ({} rows, {} aux)",
        t.elapsed().as_secs_f64(),
        asg.num_rows(),
        asg.aux.len()
    );
    let (r, s) = groth16::draw_randomness(1, &mut OsRng);
    let t = Instant::now();
    let proof = prover.prove_assignments(vec![asg], &r, &s)?.remove(0);
    println!(
        "  prove                     {:8.3} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let ok = groth16::verify_proof(&groth16::prepare_verifying_key(&params.vk), &proof, &inputs)?;
    println!(
        "  verify                    {:8.3} s  ({})",
        t.elapsed().as_secs_f64(),
        if ok { "valid" } else { "INVALID" }
    );
    if !ok {
        bail!("the demo proof did not verify");
    }
    println!("  proof: {}", hex::encode(proof.to_bytes()));
    Ok(())
}

//! Helpers shared by the integration tests.
#![allow(dead_code)]

use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{generate_random_parameters, Parameters, Proof};
use crossgroth::Scalar;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

pub type BpParams = bellperson::groth16::Parameters<blstrs::Bls12>;

pub fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

pub fn spec(s: &str) -> CircuitSpec {
    s.parse().unwrap()
}

/// crossgroth-generated parameters for a built-in circuit.
pub fn params_for(spec: &CircuitSpec, seed: u64) -> Parameters {
    generate_random_parameters(spec.blank(), &mut rng(seed), None).unwrap()
}

pub fn to_bellperson(params: &Parameters) -> BpParams {
    let mut bytes = vec![];
    params.write(&mut bytes).unwrap();
    BpParams::read(&bytes[..], false).unwrap()
}

pub fn from_bellperson(params: &BpParams) -> Parameters {
    let mut bytes = vec![];
    params.write(&mut bytes).unwrap();
    Parameters::from_bytes(&bytes, true).unwrap()
}

pub fn bp_proof_bytes(p: &bellperson::groth16::Proof<blstrs::Bls12>) -> Vec<u8> {
    let mut v = vec![];
    p.write(&mut v).unwrap();
    v
}

pub fn param_bytes(params: &Parameters) -> Vec<u8> {
    let mut bytes = vec![];
    params.write(&mut bytes).unwrap();
    bytes
}

pub fn random_rs(seed: u64) -> (Scalar, Scalar) {
    use ff::Field;
    let mut r = rng(seed);
    (Scalar::random(&mut r), Scalar::random(&mut r))
}

pub fn verifies(params: &Parameters, proof: &Proof, inputs: &[Scalar]) -> bool {
    let pvk = crossgroth::groth16::prepare_verifying_key(&params.vk);
    crossgroth::groth16::verify_proof(&pvk, proof, inputs).unwrap()
}

/// Says that GPU tests were skipped, past the test harness's output capture (which
/// only intercepts `print!`/`eprint!`), so that a skip is seen, not only counted.
pub fn report_skipped(what: &str, why: &dyn std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED: {what}: {why} ***\n");
}

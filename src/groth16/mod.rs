//! Groth16 over BLS12-381, one file per protocol role (arkworks' layout): parameters
//! and their file format, proofs, the generator, the prover and the verifier.

mod generator;
mod params;
mod proof;
mod prover;
mod verifier;

pub use generator::{generate_random_parameters, SetupProgress};
pub use params::{Digest, Parameters, ParamsLengths, ReadReport, SubgroupChecks, VerifyingKey};
pub use proof::{Proof, PROOF_BYTES};
pub use prover::{
    assemble, create_proof, create_proof_batch, create_random_proof, create_random_proof_batch,
    draw_randomness, ProveOptions, Prover,
};
pub use verifier::{
    prepare_verifying_key, verify_proof, verify_proofs_batch, PreparedVerifyingKey,
};

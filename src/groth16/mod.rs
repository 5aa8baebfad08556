//! Groth16 over BLS12-381, one file per protocol role (arkworks' layout): parameters
//! and their file format, proofs, the generator, the steps of one proof, the prover
//! that runs them, and the verifier.

mod affine_batch;
mod aux_plans;
mod encoding;
mod generator;
mod params;
pub mod placement;
mod proof;
mod prover;
mod qap;
mod query;
pub mod steps;
mod verifier;

pub use encoding::Digest;
pub use generator::{
    generate_random_parameters, generate_random_parameters_for_shape,
    generate_random_parameters_with, setup_scratch_bytes, SetupOptions, SetupProgress,
};
pub use params::{Parameters, ParamsLengths, ReadReport, SubgroupChecks, VerifyingKey};
pub use proof::{Proof, PROOF_BYTES};
pub use prover::{
    create_proof, create_proof_batch, create_random_proof, create_random_proof_batch,
    draw_randomness, ProveOptions, Prover,
};
pub use query::Query;
pub use steps::{assemble, G1Side, PreparedParams, StageTimes};
pub use verifier::{
    prepare_verifying_key, verify_proof, verify_proofs_batch, PreparedVerifyingKey,
};

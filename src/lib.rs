//! crossgroth — a Groth16 prover for BLS12-381 whose proofs are byte-identical to
//! bellperson 0.27's, with CPU, CUDA and WGSL/wgpu backends behind one [`Backend`] trait.
//!
//! The public API keeps bellperson's names and shapes ([`groth16::Parameters`],
//! [`groth16::create_proof`], [`groth16::create_proof_batch`],
//! [`groth16::prepare_verifying_key`], [`groth16::verify_proof`]) so that moving to
//! crossgroth is a dependency change, plus a backend choice.

pub mod backend;
pub mod circuits;
pub mod density;
pub mod engine;
pub mod error;
pub mod groth16;
pub mod synthesis;
mod zeroed;

pub use backend::{Backend, BackendKind, Msm};
pub use error::Error;

pub use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
/// The scalar field and groups every part of crossgroth speaks.
pub use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

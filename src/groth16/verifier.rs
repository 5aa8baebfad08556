//! Verification with blst pairings: e(A,B) = e(α,β)·e(IC(inputs),γ)·e(C,δ).

use blstrs::{Bls12, G2Prepared, Gt};
use ff::{Field, PrimeField};
use group::{Curve, Group};
use pairing::{MillerLoopResult, MultiMillerLoop};
use rand_core::RngCore;

use super::{Proof, VerifyingKey};
use crate::error::{Error, Result};
use crate::{G1Affine, G1Projective, Scalar};

/// A verifying key with its pairing-side work done once.
pub struct PreparedVerifyingKey {
    alpha_g1: G1Affine,
    alpha_beta: Gt,
    beta_g2: G2Prepared,
    neg_gamma_g2: G2Prepared,
    neg_delta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

pub fn prepare_verifying_key(vk: &VerifyingKey) -> PreparedVerifyingKey {
    PreparedVerifyingKey {
        alpha_g1: vk.alpha_g1,
        alpha_beta: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
        beta_g2: G2Prepared::from(vk.beta_g2),
        neg_gamma_g2: G2Prepared::from(-vk.gamma_g2),
        neg_delta_g2: G2Prepared::from(-vk.delta_g2),
        ic: vk.ic.clone(),
    }
}

impl PreparedVerifyingKey {
    /// Number of public inputs the key expects (ONE excluded).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len() - 1
    }

    /// IC(inputs) = IC₀ + Σ inputᵢ·ICᵢ₊₁.
    fn ic_sum(&self, inputs: &[Scalar]) -> Result<G1Projective> {
        if inputs.len() + 1 != self.ic.len() {
            return Err(Error::PublicInputCount {
                expected: self.ic.len() - 1,
                found: inputs.len(),
            });
        }
        let mut acc = G1Projective::from(self.ic[0]);
        for (x, p) in inputs.iter().zip(&self.ic[1..]) {
            acc += *p * x;
        }
        Ok(acc)
    }
}

/// Ok(true) when the proof is valid for these public inputs, Ok(false) when it is
/// not, Err when the inputs do not fit the key.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Scalar],
) -> Result<bool> {
    let acc = pvk.ic_sum(public_inputs)?.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma_g2),
        (&proof.c, &pvk.neg_delta_g2),
    ]);
    Ok(ml.final_exponentiation() == pvk.alpha_beta)
}

/// Checks many proofs with one final exponentiation: a random linear combination
/// (128-bit coefficients) of their equations, as bellperson's batch verifier.
pub fn verify_proofs_batch<R: RngCore>(
    pvk: &PreparedVerifyingKey,
    rng: &mut R,
    proofs: &[&Proof],
    public_inputs: &[Vec<Scalar>],
) -> Result<bool> {
    if proofs.len() != public_inputs.len() {
        return Err(Error::Invalid(format!(
            "{} proofs but {} public-input vectors",
            proofs.len(),
            public_inputs.len()
        )));
    }
    if proofs.is_empty() {
        return Ok(true);
    }
    let mut sum_z = Scalar::ZERO;
    let mut acc_ic = G1Projective::identity();
    let mut acc_c = G1Projective::identity();
    let mut scaled_a = Vec::with_capacity(proofs.len());
    let mut bs = Vec::with_capacity(proofs.len());
    for (proof, inputs) in proofs.iter().zip(public_inputs) {
        let z = Scalar::from_u128(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128);
        sum_z += z;
        acc_ic += pvk.ic_sum(inputs)? * z;
        acc_c += proof.c * z;
        scaled_a.push((proof.a * z).to_affine());
        bs.push(G2Prepared::from(proof.b));
    }
    let neg_alpha = (-(pvk.alpha_g1 * sum_z)).to_affine();
    let acc_ic = acc_ic.to_affine();
    let acc_c = acc_c.to_affine();
    let mut terms: Vec<(&G1Affine, &G2Prepared)> = scaled_a.iter().zip(bs.iter()).collect();
    terms.push((&acc_ic, &pvk.neg_gamma_g2));
    terms.push((&acc_c, &pvk.neg_delta_g2));
    terms.push((&neg_alpha, &pvk.beta_g2));
    Ok(bool::from(
        Bls12::multi_miller_loop(&terms)
            .final_exponentiation()
            .is_identity(),
    ))
}

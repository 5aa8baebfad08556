//! N public inputs y_i = x_i², plus aux variables that are missing from some
//! densities: u_i appears only in C, v_i only in A, w_i only in B. It exercises the
//! density-dependent base offsets of A and B (bellperson's layout: the aux
//! bases of A and B follow the bases of the inputs their densities include).

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::Field;

use crate::Scalar;

#[derive(Clone, Debug)]
pub struct MultiInput {
    pub inputs: usize,
    pub xs: Option<Vec<Scalar>>,
}

impl MultiInput {
    pub fn from_seed(inputs: usize, seed: u64) -> Self {
        let mut rng = super::witness_rng(seed, "multi");
        MultiInput {
            inputs,
            xs: Some((0..inputs).map(|_| Scalar::random(&mut rng)).collect()),
        }
    }

    pub fn public_inputs(&self) -> Vec<Scalar> {
        match &self.xs {
            Some(xs) => xs.iter().map(|x| x.square()).collect(),
            None => vec![Scalar::ZERO; self.inputs],
        }
    }
}

impl Circuit<Scalar> for MultiInput {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        for i in 0..self.inputs {
            let x_val = self.xs.as_ref().map(|xs| xs[i]);
            let x = cs.alloc(|| format!("x{i}"), || x_val.ok_or_else(missing))?;
            let y = cs.alloc_input(
                || format!("y{i}"),
                || x_val.map(|x| x.square()).ok_or_else(missing),
            )?;
            cs.enforce(
                || format!("x{i}^2 = y{i}"),
                |lc| lc + x,
                |lc| lc + x,
                |lc| lc + y,
            );
            // u = x + 1, u only in C.
            let u = cs.alloc(
                || format!("u{i}"),
                || x_val.map(|x| x + Scalar::ONE).ok_or_else(missing),
            )?;
            cs.enforce(
                || format!("u{i}"),
                |lc| lc + x + CS::one(),
                |lc| lc + CS::one(),
                |lc| lc + u,
            );
            // v only in A: v·1 = 2x (coefficient terms that cancel stay out of B).
            let v = cs.alloc(
                || format!("v{i}"),
                || x_val.map(|x| x.double()).ok_or_else(missing),
            )?;
            cs.enforce(
                || format!("v{i}"),
                |lc| lc + v,
                |lc| lc + CS::one() + v - v,
                |lc| lc + (Scalar::from(2u64), x),
            );
            // w only in B: 1·w = x².
            let w = cs.alloc(
                || format!("w{i}"),
                || x_val.map(|x| x.square()).ok_or_else(missing),
            )?;
            cs.enforce(
                || format!("w{i}"),
                |lc| lc + CS::one(),
                |lc| lc + w,
                |lc| lc + y,
            );
        }
        Ok(())
    }
}

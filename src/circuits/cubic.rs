//! x³ + x + 5 = out: the smallest circuit with a public input.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::Field;

use crate::Scalar;

#[derive(Clone, Debug)]
pub struct Cubic {
    pub x: Option<Scalar>,
}

impl Cubic {
    pub fn from_seed(seed: u64) -> Self {
        Cubic {
            x: Some(Scalar::random(super::witness_rng(seed, "cubic"))),
        }
    }

    pub fn public_inputs(&self) -> Vec<Scalar> {
        let x = self.x.unwrap_or(Scalar::ZERO);
        vec![x.square() * x + x + Scalar::from(5u64)]
    }
}

impl Circuit<Scalar> for Cubic {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x_val = self.x;
        let x = cs.alloc(|| "x", || x_val.ok_or(SynthesisError::AssignmentMissing))?;
        let x2_val = x_val.map(|x| x.square());
        let x2 = cs.alloc(|| "x^2", || x2_val.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "x*x = x^2", |lc| lc + x, |lc| lc + x, |lc| lc + x2);
        let x3_val = x2_val.zip(x_val).map(|(a, b)| a * b);
        let x3 = cs.alloc(|| "x^3", || x3_val.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "x^2*x = x^3", |lc| lc + x2, |lc| lc + x, |lc| lc + x3);
        let out_val = x3_val.zip(x_val).map(|(a, b)| a + b + Scalar::from(5u64));
        let out = cs.alloc_input(
            || "out",
            || out_val.ok_or(SynthesisError::AssignmentMissing),
        )?;
        cs.enforce(
            || "(x^3 + x + 5) * 1 = out",
            |lc| lc + x3 + x + (Scalar::from(5u64), CS::one()),
            |lc| lc + CS::one(),
            |lc| lc + out,
        );
        Ok(())
    }
}

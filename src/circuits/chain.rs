//! A squaring chain x_{i+1} = x_i², its last value public, sized so that the rows —
//! the chain, one output row and the two input rows — fill a 2^K domain exactly. Every
//! value is a random-looking field element: the MSM worst case.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use ff::Field;

use crate::Scalar;

#[derive(Clone, Debug)]
pub struct SquaringChain {
    pub log_rows: u32,
    pub x0: Option<Scalar>,
}

impl SquaringChain {
    pub fn from_seed(log_rows: u32, seed: u64) -> Self {
        SquaringChain {
            log_rows,
            x0: Some(Scalar::random(super::witness_rng(seed, "chain"))),
        }
    }

    /// Squarings in the chain: 2^K rows minus the output row and the two input rows.
    pub fn length(&self) -> usize {
        (1usize << self.log_rows) - 3
    }

    pub fn public_inputs(&self) -> Vec<Scalar> {
        let mut x = self.x0.unwrap_or(Scalar::ZERO);
        for _ in 0..self.length() {
            x = x.square();
        }
        vec![x]
    }
}

impl Circuit<Scalar> for SquaringChain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut val = self.x0;
        let mut x = cs.alloc(|| "x0", || val.ok_or(SynthesisError::AssignmentMissing))?;
        for _ in 0..self.length() {
            let next_val = val.map(|v| v.square());
            let next = cs.alloc(|| "x", || next_val.ok_or(SynthesisError::AssignmentMissing))?;
            cs.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + next);
            x = next;
            val = next_val;
        }
        let out = cs.alloc_input(|| "out", || val.ok_or(SynthesisError::AssignmentMissing))?;
        cs.enforce(|| "out", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + out);
        Ok(())
    }
}

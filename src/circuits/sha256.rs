//! SHA-256 of an N-byte preimage with bellpepper's gadget: preimage bits private,
//! digest packed into public inputs (bellpepper's multipack), as proof-of-preimage
//! circuits do.

use bellpepper::gadgets::{multipack, sha256::sha256};
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use rand_core::RngCore;
use sha2::Digest;

use crate::Scalar;

#[derive(Clone, Debug)]
pub struct Sha256Preimage {
    pub len: usize,
    pub preimage: Option<Vec<u8>>,
}

impl Sha256Preimage {
    pub fn from_seed(len: usize, seed: u64) -> Self {
        let mut bytes = vec![0u8; len];
        super::witness_rng(seed, "sha256").fill_bytes(&mut bytes);
        Sha256Preimage {
            len,
            preimage: Some(bytes),
        }
    }

    pub fn public_inputs(&self) -> Vec<Scalar> {
        let preimage = self.preimage.clone().unwrap_or_else(|| vec![0; self.len]);
        let digest = sha2::Sha256::digest(&preimage);
        multipack::compute_multipacking(&multipack::bytes_to_bits(&digest))
    }
}

impl Circuit<Scalar> for Sha256Preimage {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits: Vec<Option<bool>> = match &self.preimage {
            Some(p) => multipack::bytes_to_bits(p).into_iter().map(Some).collect(),
            None => vec![None; self.len * 8],
        };
        let bits = bits
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                AllocatedBit::alloc(cs.namespace(|| format!("preimage bit {i}")), b)
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

//! Proofs: three points, 192 bytes compressed (ZCash/IETF encoding, as bellperson).

use std::io::{Read, Write};

use group::prime::PrimeCurveAffine;

use crate::error::{Error, Result};
use crate::{G1Affine, G2Affine};

pub const PROOF_BYTES: usize = 192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(self.a.to_compressed().as_ref());
        out[48..144].copy_from_slice(self.b.to_compressed().as_ref());
        out[144..].copy_from_slice(self.c.to_compressed().as_ref());
        out
    }

    /// Decodes and checks a proof: each point on its curve, in the subgroup, and not
    /// the identity (no honest proof has one).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != PROOF_BYTES {
            return Err(Error::ProofFormat(format!(
                "{} bytes, a proof has {PROOF_BYTES}",
                bytes.len()
            )));
        }
        let a =
            Option::<G1Affine>::from(G1Affine::from_compressed(bytes[..48].try_into().unwrap()))
                .ok_or_else(|| {
                    Error::ProofFormat("point A is not a valid compressed G1 point".into())
                })?;
        let b = Option::<G2Affine>::from(G2Affine::from_compressed(
            bytes[48..144].try_into().unwrap(),
        ))
        .ok_or_else(|| Error::ProofFormat("point B is not a valid compressed G2 point".into()))?;
        let c =
            Option::<G1Affine>::from(G1Affine::from_compressed(bytes[144..].try_into().unwrap()))
                .ok_or_else(|| {
                Error::ProofFormat("point C is not a valid compressed G1 point".into())
            })?;
        for (name, identity) in [
            ("A", a.is_identity()),
            ("B", b.is_identity()),
            ("C", c.is_identity()),
        ] {
            if bool::from(identity) {
                return Err(Error::ProofFormat(format!("point {name} is the identity")));
            }
        }
        Ok(Proof { a, b, c })
    }

    pub fn write<W: Write>(&self, mut w: W) -> Result<()> {
        w.write_all(&self.to_bytes())?;
        Ok(())
    }

    pub fn read<R: Read>(mut r: R) -> Result<Self> {
        let mut buf = [0u8; PROOF_BYTES];
        r.read_exact(&mut buf)
            .map_err(|e| Error::ProofFormat(format!("cannot read {PROOF_BYTES} bytes: {e}")))?;
        Self::from_bytes(&buf)
    }
}

//! The two BLS12-381 groups as types, so that an MSM, its bases and its
//! result are written once, generic over the group (as sppark's `msm_t` is
//! templated on the point type), instead of a G1 and a G2 twin of each.

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};

/// Which of the two groups; for a kernel's name or an array index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    G1 = 0,
    G2 = 1,
}

/// One BLS12-381 group in blst's `repr(C)` types.
pub trait Curve: Send + Sync + 'static {
    /// An affine point (the bases; identity = (0, 0)).
    type Affine: Copy + Default + Send + Sync + 'static;
    /// A projective point (an MSM's result).
    type Point: Copy + Default + Send + Sync + 'static;
    const GROUP: Group;
    /// u64 words of one base-field element (Fq: 6, Fq2: 12).
    const FE_WORDS: usize;
    /// Bytes of one affine point.
    const AFFINE_BYTES: usize = 2 * Self::FE_WORDS * 8;
    /// "G1" or "G2", for messages.
    const NAME: &'static str;
}

/// G1: points over Fq.
#[derive(Clone, Copy, Debug, Default)]
pub struct G1;
/// G2: points over Fq2.
#[derive(Clone, Copy, Debug, Default)]
pub struct G2;

impl Curve for G1 {
    type Affine = blst_p1_affine;
    type Point = blst_p1;
    const GROUP: Group = Group::G1;
    const FE_WORDS: usize = 6;
    const NAME: &'static str = "G1";
}

impl Curve for G2 {
    type Affine = blst_p2_affine;
    type Point = blst_p2;
    const GROUP: Group = Group::G2;
    const FE_WORDS: usize = 12;
    const NAME: &'static str = "G2";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_sizes_match_blst() {
        assert_eq!(G1::AFFINE_BYTES, std::mem::size_of::<blst_p1_affine>());
        assert_eq!(G2::AFFINE_BYTES, std::mem::size_of::<blst_p2_affine>());
    }
}

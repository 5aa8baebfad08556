//! Many scalar multiples of one base on the host's cores, in affine coordinates:
//! each product adds its windows' table entries in turn, and the additions of one
//! window across a chunk of products share one field inversion (Montgomery's
//! trick). An affine addition then costs about six field products against eleven
//! for blst's mixed projective one, and the products come out affine, with no
//! conversion at the end.

use ff::Field;
use group::prime::PrimeCurveAffine;

use crate::{G1Affine, G2Affine, Scalar};

/// The coordinates of an affine point, over its curve's base field.
pub(crate) trait AffineCoords: PrimeCurveAffine + Copy + Send + Sync {
    type F: Field;
    fn xy(&self) -> (Self::F, Self::F);
    /// The point (x, y); the caller knows that it is on the curve.
    fn from_xy(x: Self::F, y: Self::F) -> Self;
}

impl AffineCoords for G1Affine {
    type F = blstrs::Fp;
    fn xy(&self) -> (blstrs::Fp, blstrs::Fp) {
        (self.x(), self.y())
    }
    fn from_xy(x: blstrs::Fp, y: blstrs::Fp) -> Self {
        G1Affine::from_raw_unchecked(x, y, false)
    }
}

impl AffineCoords for G2Affine {
    type F = blstrs::Fp2;
    fn xy(&self) -> (blstrs::Fp2, blstrs::Fp2) {
        (self.x(), self.y())
    }
    fn from_xy(x: blstrs::Fp2, y: blstrs::Fp2) -> Self {
        G2Affine::from_raw_unchecked(x, y, false)
    }
}

/// Reused buffers of one chunk's additions.
pub(crate) struct Scratch<A: AffineCoords> {
    /// (product index, table entry) of this window's additions.
    pairs: Vec<(usize, A)>,
    /// Running products of the denominators, then their inverses.
    prefix: Vec<A::F>,
}

impl<A: AffineCoords> Default for Scratch<A> {
    fn default() -> Self {
        Scratch {
            pairs: Vec::new(),
            prefix: Vec::new(),
        }
    }
}

/// p + q by the group's projective addition, for the cases affine addition
/// does not cover.
fn group_sum<A: AffineCoords>(p: A, q: A) -> A {
    use group::Curve;
    (p.to_curve() + q.to_curve()).to_affine()
}

/// `acc[i] += q` for every (i, q) of `pairs` (each i at most once), identities
/// included. Points with equal x (a doubling, or a sum that is the identity) take
/// the group's own addition; every other pair shares one inversion.
pub(crate) fn add_pairs<A: AffineCoords>(
    acc: &mut [A],
    pairs: &[(usize, A)],
    prefix: &mut Vec<A::F>,
) {
    prefix.clear();
    let mut running = A::F::ONE;
    for &(i, q) in pairs {
        let p = acc[i];
        let d = if bool::from(p.is_identity()) || bool::from(q.is_identity()) {
            A::F::ZERO
        } else {
            q.xy().0 - p.xy().0
        };
        // A zero denominator marks a pair for the group's addition below; it
        // stays out of the running product.
        if !bool::from(d.is_zero()) {
            running *= d;
        }
        prefix.push(running);
    }
    let mut inv = running.invert().unwrap_or(A::F::ZERO);
    for (k, &(i, q)) in pairs.iter().enumerate().rev() {
        let p = acc[i];
        if bool::from(p.is_identity()) || bool::from(q.is_identity()) {
            acc[i] = group_sum(p, q);
            continue;
        }
        let ((x1, y1), (x2, y2)) = (p.xy(), q.xy());
        let d = x2 - x1;
        if bool::from(d.is_zero()) {
            acc[i] = group_sum(p, q);
            continue;
        }
        // inv is 1 / prefix[k]; prefix[k - 1] turns it into 1 / d_k, and d_k
        // makes it 1 / prefix[k - 1] for the pair before.
        let before = if k == 0 { A::F::ONE } else { prefix[k - 1] };
        let inv_d = inv * before;
        inv *= d;
        let lambda = (y2 - y1) * inv_d;
        let x3 = lambda.square() - x1 - x2;
        let y3 = lambda * (x1 - x3) - y1;
        acc[i] = A::from_xy(x3, y3);
    }
}

/// `out[i] = scalars[i]·G` from `table`, whose entry `(w << bits) + d` is
/// d·2^(w·bits)·G: one [`add_pairs`] a window over the whole chunk.
pub(crate) fn products<A: AffineCoords>(
    table: &[A],
    bits: usize,
    scalars: &[Scalar],
    out: &mut [A],
    scratch: &mut Scratch<A>,
) {
    use ff::PrimeField;
    assert_eq!(scalars.len(), out.len());
    let reprs: Vec<_> = scalars.iter().map(|s| s.to_repr()).collect();
    let per = bits / 8;
    for o in out.iter_mut() {
        *o = A::identity();
    }
    for w in 0..256 / bits {
        scratch.pairs.clear();
        for (i, repr) in reprs.iter().enumerate() {
            let digit = &repr.as_ref()[w * per..(w + 1) * per];
            let d = digit
                .iter()
                .rev()
                .fold(0usize, |d, &byte| (d << 8) | byte as usize);
            if d == 0 {
                continue;
            }
            let q = table[(w << bits) + d];
            if bool::from(out[i].is_identity()) {
                out[i] = q;
            } else {
                scratch.pairs.push((i, q));
            }
        }
        add_pairs(out, &scratch.pairs, &mut scratch.prefix);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::{Curve, Group};
    use rand_core::SeedableRng;

    /// Every kind of pair in one batch: general points, a doubling, a point and
    /// its negation, identities on either side; each sum equals the group's.
    fn pairs_equal_group_sums<A: AffineCoords>(random: impl Fn(&mut rand_chacha::ChaCha20Rng) -> A)
    where
        A::Curve: Curve<AffineRepr = A>,
    {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let p: Vec<A> = (0..12).map(|_| random(&mut rng)).collect();
        let id = A::identity();
        let cases: Vec<(A, A)> = vec![
            (p[0], p[1]),
            (p[2], p[2]),
            (p[3], (-p[3].to_curve()).to_affine()),
            (id, p[4]),
            (p[5], id),
            (id, id),
            (p[6], p[7]),
            (p[8], p[8]),
            (p[9], p[10]),
        ];
        let mut acc: Vec<A> = cases.iter().map(|c| c.0).collect();
        let pairs: Vec<(usize, A)> = cases.iter().enumerate().map(|(i, c)| (i, c.1)).collect();
        add_pairs(&mut acc, &pairs, &mut Vec::new());
        for (i, (a, b)) in cases.iter().enumerate() {
            assert_eq!(
                acc[i],
                (a.to_curve() + b.to_curve()).to_affine(),
                "pair {i}"
            );
        }
        // No pairs: nothing changes.
        add_pairs(&mut acc[..1], &[], &mut Vec::new());
    }

    #[test]
    fn affine_pairs_equal_the_groups_sums() {
        pairs_equal_group_sums(|r| crate::G1Projective::random(r).to_affine());
        pairs_equal_group_sums(|r| crate::G2Projective::random(r).to_affine());
    }
}

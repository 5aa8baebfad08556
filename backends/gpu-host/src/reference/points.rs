//! Points and MSMs by blst, generic over the group.

use blst::*;
use rand::RngCore;

use super::{fr_random, scalar_bytes, selected};
use crate::{Curve, G1, G2};

/// blst's operations on one group, for the reference code.
pub trait RefCurve: Curve {
    fn generator() -> Self::Point;
    /// p * s.
    fn mult(p: &Self::Point, s: &blst_fr) -> Self::Point;
    /// a + b (doubling included).
    fn add(a: &Self::Point, b: &Self::Point) -> Self::Point;
    fn from_affine(a: &Self::Affine) -> Self::Point;
    /// One batched inversion for all the points.
    fn to_affines(points: &[Self::Point]) -> Vec<Self::Affine>;
    fn neg(a: &Self::Affine) -> Self::Affine;
    fn eq(a: &Self::Point, b: &Self::Point) -> bool;
    fn is_identity(p: &Self::Point) -> bool;
    /// blst's single-threaded Pippenger over `bases` and the scalars' bytes.
    fn pippenger(bases: &[Self::Affine], scalars: &[[u8; 32]]) -> Self::Point;
}

macro_rules! ref_curve {
    ($c:ty, $aff:ty, $pt:ty, $gen:ident, $mult:ident, $add:ident, $from:ident, $to_affs:ident,
     $to_aff:ident, $cneg:ident, $eq:ident, $inf:ident, $pip:ident, $scratch:ident) => {
        impl RefCurve for $c {
            fn generator() -> $pt {
                // SAFETY: blst's static generator.
                unsafe { *$gen() }
            }
            fn mult(p: &$pt, s: &blst_fr) -> $pt {
                let b = scalar_bytes(s);
                let mut r = <$pt>::default();
                // SAFETY: a valid point and 255 bits of scalar in, r out.
                unsafe { $mult(&mut r, p, b.as_ptr(), 255) };
                r
            }
            fn add(a: &$pt, b: &$pt) -> $pt {
                let mut r = <$pt>::default();
                // SAFETY: valid points in, r out.
                unsafe { $add(&mut r, a, b) };
                r
            }
            fn from_affine(a: &$aff) -> $pt {
                let mut r = <$pt>::default();
                // SAFETY: a valid affine point (or (0, 0), the identity) in.
                unsafe { $from(&mut r, a) };
                r
            }
            fn to_affines(points: &[$pt]) -> Vec<$aff> {
                let mut out = vec![<$aff>::default(); points.len()];
                if !points.is_empty() {
                    let ptrs = [points.as_ptr(), std::ptr::null()];
                    // SAFETY: points.len() points in one array, as many out.
                    unsafe { $to_affs(out.as_mut_ptr(), ptrs.as_ptr(), points.len()) };
                }
                out
            }
            fn neg(a: &$aff) -> $aff {
                let mut j = Self::from_affine(a);
                let mut r = <$aff>::default();
                // SAFETY: valid points in and out.
                unsafe {
                    $cneg(&mut j, true);
                    $to_aff(&mut r, &j);
                }
                r
            }
            fn eq(a: &$pt, b: &$pt) -> bool {
                // SAFETY: valid points in.
                unsafe { $eq(a, b) }
            }
            fn is_identity(p: &$pt) -> bool {
                // SAFETY: a valid point in.
                unsafe { $inf(p) }
            }
            fn pippenger(bases: &[$aff], scalars: &[[u8; 32]]) -> $pt {
                let n = bases.len().min(scalars.len());
                let mut out = <$pt>::default();
                if n == 0 {
                    return out;
                }
                // SAFETY: n bases and n 32-byte scalars, each in one array;
                // the scratch is as large as blst asks.
                unsafe {
                    let mut scratch = vec![0u64; $scratch(n) / 8 + 1];
                    let pp = [bases.as_ptr(), std::ptr::null()];
                    let kp = [scalars.as_ptr() as *const u8, std::ptr::null()];
                    $pip(
                        &mut out,
                        pp.as_ptr(),
                        n,
                        kp.as_ptr(),
                        255,
                        scratch.as_mut_ptr() as *mut limb_t,
                    );
                }
                out
            }
        }
    };
}

ref_curve!(
    G1,
    blst_p1_affine,
    blst_p1,
    blst_p1_generator,
    blst_p1_mult,
    blst_p1_add_or_double,
    blst_p1_from_affine,
    blst_p1s_to_affine,
    blst_p1_to_affine,
    blst_p1_cneg,
    blst_p1_is_equal,
    blst_p1_is_inf,
    blst_p1s_mult_pippenger,
    blst_p1s_mult_pippenger_scratch_sizeof
);
ref_curve!(
    G2,
    blst_p2_affine,
    blst_p2,
    blst_p2_generator,
    blst_p2_mult,
    blst_p2_add_or_double,
    blst_p2_from_affine,
    blst_p2s_to_affine,
    blst_p2_to_affine,
    blst_p2_cneg,
    blst_p2_is_equal,
    blst_p2_is_inf,
    blst_p2s_mult_pippenger,
    blst_p2s_mult_pippenger_scratch_sizeof
);

/// n distinct-looking bases: a walk from a random multiple of the generator
/// with 8 random steps (one batched conversion to affine: 2^22 in seconds).
pub fn random_bases<C: RefCurve>(rng: &mut impl RngCore, n: usize) -> Vec<C::Affine> {
    let g = C::generator();
    let steps: Vec<C::Point> = (0..8).map(|_| C::mult(&g, &fr_random(rng))).collect();
    let mut acc = C::mult(&g, &fr_random(rng));
    let mut jac = Vec::with_capacity(n);
    for i in 0..n {
        acc = C::add(&acc, &steps[i % 8]);
        jac.push(acc);
    }
    C::to_affines(&jac)
}

/// As [`random_bases`], with the identity at every i = 5 (mod 11) and a repeat of
/// the previous base at every i = 7 (mod 11).
pub fn bases_with_edges<C: RefCurve>(rng: &mut impl RngCore, n: usize) -> Vec<C::Affine> {
    let mut v = random_bases::<C>(rng, n);
    for i in 0..n {
        if i % 11 == 5 {
            v[i] = C::Affine::default();
        } else if i % 11 == 7 {
            v[i] = v[i - 1];
        }
    }
    v
}

/// The identity at every `step`-th base, from the first on.
pub fn identities_every<A: Default>(bases: &mut [A], step: usize) {
    for b in bases.iter_mut().step_by(step) {
        *b = A::default();
    }
}

/// P0, -P0, P1, -P1, ...: pairs that cancel under equal scalars.
pub fn plus_minus<C: RefCurve>(bases: &[C::Affine]) -> Vec<C::Affine> {
    bases.iter().flat_map(|b| [*b, C::neg(b)]).collect()
}

pub fn point_eq<C: RefCurve>(a: &C::Point, b: &C::Point) -> bool {
    C::eq(a, b)
}

pub fn is_identity<C: RefCurve>(p: &C::Point) -> bool {
    C::is_identity(p)
}

/// Up to this many terms [`msm`] sums the scalar multiples one by one (no
/// shared code with any MSM); above it, blst's Pippenger on every core.
pub const NAIVE_MAX: usize = 4096;

/// The sum of bases[k] * scalars[i] over the scalars the density includes
/// (all without one), the k-th included using bases[k]. Identity bases allowed.
pub fn msm<C: RefCurve>(
    bases: &[C::Affine],
    scalars: &[blst_fr],
    density: Option<&[u64]>,
) -> C::Point {
    let s = selected(scalars, density);
    let bases = &bases[..s.len()];
    if s.len() <= NAIVE_MAX {
        return msm_naive::<C>(bases, &s);
    }
    let bytes: Vec<[u8; 32]> = s.iter().map(scalar_bytes).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = s.len().div_ceil(threads);
    let parts: Vec<C::Point> = std::thread::scope(|scope| {
        let hs: Vec<_> = bases
            .chunks(per)
            .zip(bytes.chunks(per))
            .map(|(b, k)| scope.spawn(move || C::pippenger(b, k)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    parts
        .iter()
        .fold(C::Point::default(), |acc, p| C::add(&acc, p))
}

/// Term by term: the sum of bases[i] * scalars[i] over the shorter of the two.
pub fn msm_naive<C: RefCurve>(bases: &[C::Affine], scalars: &[blst_fr]) -> C::Point {
    bases
        .iter()
        .zip(scalars)
        .fold(C::Point::default(), |acc, (b, s)| {
            C::add(&acc, &C::mult(&C::from_affine(b), s))
        })
}

#[cfg(test)]
mod tests {
    use super::super::{random_density, random_scalars, rng};
    use super::*;

    fn pippenger_agrees_with_the_naive_sum<C: RefCurve>() {
        let mut r = rng(C::NAME);
        let n = NAIVE_MAX + 300;
        let s = random_scalars(&mut r, n);
        let b = bases_with_edges::<C>(&mut r, n);
        assert!(C::eq(&msm::<C>(&b, &s, None), &msm_naive::<C>(&b, &s)));
        let (d, inc) = random_density(&mut r, 2 * n, 0.6);
        let s2 = random_scalars(&mut r, 2 * n);
        let b2 = random_bases::<C>(&mut r, inc.len());
        let sel: Vec<blst_fr> = inc.iter().map(|&i| s2[i]).collect();
        assert!(C::eq(
            &msm::<C>(&b2, &s2, Some(&d)),
            &msm_naive::<C>(&b2, &sel)
        ));
        let pm = plus_minus::<C>(&b[..10]);
        let same = vec![s[0]; pm.len()];
        assert!(C::is_identity(&msm::<C>(&pm, &same, None)));
    }

    #[test]
    fn reference_msm_agrees_with_the_naive_sum_g1() {
        pippenger_agrees_with_the_naive_sum::<G1>();
    }
}

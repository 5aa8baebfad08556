//! Multi-scalar multiplication on the CPU with blst's single-threaded Pippenger,
//! split over rayon's threads (blst's own multithreaded `mult` runs on a
//! second pool beside rayon's and would oversubscribe the cores).
//!
//! Groth16 witnesses are full of 0s and 1s (bits, booleans): zeros are skipped, ones
//! are summed with blst's batched affine addition, and only the rest enter the
//! bucket pass.

use blst::*;
use ff::Field;
use rayon::prelude::*;

use crate::backend::{MsmGroup, MsmInput, G1, G2};
use crate::error::{Error, Result};
use crate::Scalar;

/// The blst calls one group needs, so G1 and G2 share one MSM driver.
pub trait CpuGroup: MsmGroup {
    fn pippenger(points: &[*const Self::Affine], scalars: &[*const u8]) -> Self::Point;
    fn sum_affine(points: &[*const Self::Affine]) -> Self::Point;
    fn add(a: &Self::Point, b: &Self::Point) -> Self::Point;
}

macro_rules! impl_group {
    ($g:ty, $aff:ty, $pt:ty, $pip:ident, $scratch:ident, $adds:ident, $add:ident) => {
        impl CpuGroup for $g {
            fn pippenger(points: &[*const $aff], scalars: &[*const u8]) -> $pt {
                let mut ret = <$pt>::default();
                if points.is_empty() {
                    return ret;
                }
                // SAFETY: points and scalars are arrays of valid pointers of equal
                // length (one per term), scratch is sized by blst for that length.
                unsafe {
                    let words = $scratch(points.len()) / 8 + 1;
                    let mut scratch = vec![0u64; words];
                    $pip(
                        &mut ret,
                        points.as_ptr(),
                        points.len(),
                        scalars.as_ptr(),
                        255,
                        scratch.as_mut_ptr() as *mut _,
                    );
                }
                ret
            }
            fn sum_affine(points: &[*const $aff]) -> $pt {
                let mut ret = <$pt>::default();
                if !points.is_empty() {
                    // SAFETY: an array of valid pointers to affine points.
                    unsafe { $adds(&mut ret, points.as_ptr(), points.len()) };
                }
                ret
            }
            fn add(a: &$pt, b: &$pt) -> $pt {
                let mut ret = <$pt>::default();
                // SAFETY: plain value arguments.
                unsafe { $add(&mut ret, a, b) };
                ret
            }
        }
    };
}

impl_group!(
    G1,
    blst_p1_affine,
    blst_p1,
    blst_p1s_mult_pippenger,
    blst_p1s_mult_pippenger_scratch_sizeof,
    blst_p1s_add,
    blst_p1_add_or_double
);
impl_group!(
    G2,
    blst_p2_affine,
    blst_p2,
    blst_p2s_mult_pippenger,
    blst_p2s_mult_pippenger_scratch_sizeof,
    blst_p2s_add,
    blst_p2_add_or_double
);

/// Smallest slice of terms worth its own Pippenger run.
const MIN_CHUNK: usize = 1 << 12;

/// Σ scalars·bases over the terms `input` selects (see [`MsmInput`]).
fn msm_raw<G: CpuGroup>(bases: &[G::Affine], input: &MsmInput<'_>) -> Result<G::Point> {
    let needed = input.bases_needed()?;
    if needed > bases.len() {
        return Err(Error::Invalid(format!(
            "MSM reads {needed} bases, only {} are present",
            bases.len()
        )));
    }
    let all = input.scalars.host("cpu")?;
    let n = all.len();
    // Chunks start on multiples of 64 so density ranks come from whole words.
    let threads = rayon::current_num_threads().max(1);
    let chunk = (n.div_ceil(threads)).max(MIN_CHUNK).next_multiple_of(64);
    let starts: Vec<usize> = (0..n).step_by(chunk.max(1)).collect();
    // Base index of each chunk's first term.
    let mut base_starts = Vec::with_capacity(starts.len());
    let mut rank = input.base_offset;
    for (k, &s) in starts.iter().enumerate() {
        base_starts.push(rank);
        let e = starts.get(k + 1).copied().unwrap_or(n);
        rank += match input.density {
            Some(d) => d.words()[s / 64..e.div_ceil(64)]
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum::<usize>(),
            None => e - s,
        };
    }
    let partials: Vec<G::Point> = starts
        .par_iter()
        .zip(base_starts.par_iter())
        .map(|(&s, &b0)| {
            let e = (s + chunk).min(n);
            let mut ones: Vec<*const G::Affine> = Vec::new();
            let mut points: Vec<*const G::Affine> = Vec::new();
            let mut scalars: Vec<blst_scalar> = Vec::new();
            let mut base = b0;
            for (i, sc) in all.iter().enumerate().take(e).skip(s) {
                if let Some(d) = input.density {
                    if !d.get(i) {
                        continue;
                    }
                }
                let p = &bases[base] as *const G::Affine;
                base += 1;
                if bool::from(sc.is_zero()) {
                    continue;
                }
                if *sc == Scalar::ONE {
                    ones.push(p);
                    continue;
                }
                let mut out = blst_scalar::default();
                // SAFETY: converts one Montgomery-form scalar to canonical bytes.
                unsafe { blst_scalar_from_fr(&mut out, &blst_fr::from(*sc)) };
                points.push(p);
                scalars.push(out);
            }
            let scalar_ptrs: Vec<*const u8> = scalars.iter().map(|s| s.b.as_ptr()).collect();
            let acc = G::pippenger(&points, &scalar_ptrs);
            G::add(&acc, &G::sum_affine(&ones))
        })
        .collect();
    Ok(partials
        .iter()
        .fold(G::Point::default(), |acc, p| G::add(&acc, p)))
}

/// Σ scalars·bases over the terms `input` selects (see [`MsmInput`]).
pub fn msm<C: CpuGroup>(bases: &[C::Base], input: &MsmInput<'_>) -> Result<C::Output> {
    msm_raw::<C>(C::raw(bases), input).map(C::from_raw)
}

//! The host's side after an MSM's device passes: each pass's window sums
//! (XYZZ points, in the device's form) folded into the MSM's point with
//! blst, for either group.

use blst::*;
use crossgroth_gpu_host::{Curve, G1, G2};

use crate::host;

/// What the device returns for one MSM: per window, T XYZZ points whose sum
/// is the window sum; partial sums of the bases with scalar 1.
pub(crate) struct MsmOut {
    pub c: u32,
    pub windows: Vec<Vec<u32>>,
    pub ones: Vec<u32>,
}

/// The host's arithmetic on a group's points, for the fold of the device's
/// window sums and the setup's normalisation: blst's base field and point
/// types, one impl a group, so that the conversion and the fold are written
/// once.
pub(crate) trait HostPoints: Curve {
    /// Fq or Fq2 (blst Montgomery form).
    type Fe: Copy;
    /// One field element from its 2 * FE_WORDS u32 words.
    fn fe(words: &[u32]) -> Self::Fe;
    fn mul(a: &Self::Fe, b: &Self::Fe) -> Self::Fe;
    fn sqr(a: &Self::Fe) -> Self::Fe;
    /// The Jacobian point (x, y, z).
    fn jacobian(x: Self::Fe, y: Self::Fe, z: Self::Fe) -> Self::Point;
    /// acc += p.
    fn add(acc: &mut Self::Point, p: &Self::Point);
    /// `out[i]` = `points[i]` in affine form, with one batched inversion
    /// (identities as (0, 0)).
    fn to_affine(points: &[Self::Point], out: &mut [Self::Affine]);
}

impl HostPoints for G1 {
    type Fe = blst_fp;
    fn fe(w: &[u32]) -> blst_fp {
        host::words_to_fp(w)
    }
    fn mul(a: &blst_fp, b: &blst_fp) -> blst_fp {
        let mut r = blst_fp::default();
        // SAFETY: valid field elements in, r out.
        unsafe { blst_fp_mul(&mut r, a, b) };
        r
    }
    fn sqr(a: &blst_fp) -> blst_fp {
        let mut r = blst_fp::default();
        // SAFETY: as above.
        unsafe { blst_fp_sqr(&mut r, a) };
        r
    }
    fn jacobian(x: blst_fp, y: blst_fp, z: blst_fp) -> blst_p1 {
        blst_p1 { x, y, z }
    }
    fn add(acc: &mut blst_p1, p: &blst_p1) {
        // SAFETY: valid points in; blst allows the output to alias an input.
        unsafe { blst_p1_add_or_double(acc, acc, p) }
    }
    fn to_affine(points: &[blst_p1], out: &mut [blst_p1_affine]) {
        let n = points.len().min(out.len());
        if n > 0 {
            // blst walks a contiguous array when the second pointer is null.
            let ptrs = [points.as_ptr(), std::ptr::null()];
            // SAFETY: n points in one array, room for n affine points.
            unsafe { blst_p1s_to_affine(out.as_mut_ptr(), ptrs.as_ptr(), n) };
        }
    }
}

impl HostPoints for G2 {
    type Fe = blst_fp2;
    fn fe(w: &[u32]) -> blst_fp2 {
        blst_fp2 {
            fp: [host::words_to_fp(&w[0..12]), host::words_to_fp(&w[12..24])],
        }
    }
    fn mul(a: &blst_fp2, b: &blst_fp2) -> blst_fp2 {
        let mut r = blst_fp2::default();
        // SAFETY: valid field elements in, r out.
        unsafe { blst_fp2_mul(&mut r, a, b) };
        r
    }
    fn sqr(a: &blst_fp2) -> blst_fp2 {
        let mut r = blst_fp2::default();
        // SAFETY: as above.
        unsafe { blst_fp2_sqr(&mut r, a) };
        r
    }
    fn jacobian(x: blst_fp2, y: blst_fp2, z: blst_fp2) -> blst_p2 {
        blst_p2 { x, y, z }
    }
    fn add(acc: &mut blst_p2, p: &blst_p2) {
        // SAFETY: valid points in; blst allows the output to alias an input.
        unsafe { blst_p2_add_or_double(acc, acc, p) }
    }
    fn to_affine(points: &[blst_p2], out: &mut [blst_p2_affine]) {
        let n = points.len().min(out.len());
        if n > 0 {
            // blst walks a contiguous array when the second pointer is null.
            let ptrs = [points.as_ptr(), std::ptr::null()];
            // SAFETY: n points in one array, room for n affine points.
            unsafe { blst_p2s_to_affine(out.as_mut_ptr(), ptrs.as_ptr(), n) };
        }
    }
}

/// XYZZ (blst Montgomery form) -> Jacobian: (X ZZ^2, Y ZZZ^2, ZZZ).
pub(crate) fn of_xyzz<H: HostPoints>(w: &[u32]) -> H::Point {
    let fw = 2 * H::FE_WORDS;
    let fe = |i: usize| H::fe(&w[i * fw..(i + 1) * fw]);
    let (x, y, zz, zzz) = (fe(0), fe(1), fe(2), fe(3));
    H::jacobian(H::mul(&x, &H::sqr(&zz)), H::mul(&y, &H::sqr(&zzz)), zzz)
}

/// The MSM from the device's output: Σ_w 2^(c w) (sum of window w's points),
/// plus the ones' partial sums. The window sums, ~2^(c-6) point additions
/// each, run on several host threads (they are the fold's bulk); then c
/// doublings a window, highest window first.
fn fold<H: HostPoints>(out: &MsmOut) -> H::Point {
    let add = H::add;
    let sum = |words: &[u32]| {
        let mut acc = H::Point::default();
        for w in words.chunks_exact(8 * H::FE_WORDS) {
            add(&mut acc, &of_xyzz::<H>(w));
        }
        acc
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(out.windows.len())
        .max(1);
    let per = out.windows.len().div_ceil(threads).max(1);
    let mut sums = vec![H::Point::default(); out.windows.len()];
    std::thread::scope(|sc| {
        for (dst, src) in sums.chunks_mut(per).zip(out.windows.chunks(per)) {
            sc.spawn(move || {
                for (d, w) in dst.iter_mut().zip(src) {
                    *d = sum(w);
                }
            });
        }
    });
    let mut acc = H::Point::default();
    for s in sums.iter().rev() {
        for _ in 0..out.c {
            let a = acc;
            add(&mut acc, &a);
        }
        add(&mut acc, s);
    }
    add(&mut acc, &sum(&out.ones));
    acc
}

/// The sum of the passes' MSMs (an MSM is linear: the passes over chunks of
/// the bases and pieces of the scalars add up to the whole).
pub(crate) fn fold_all<H: HostPoints>(outs: &[MsmOut]) -> H::Point {
    let mut acc = H::Point::default();
    for out in outs {
        H::add(&mut acc, &fold::<H>(out));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::{fold, MsmOut};
    use blst::*;
    use crossgroth_gpu_host::G1;

    fn fp_words(f: &blst_fp) -> Vec<u32> {
        f.l.iter()
            .flat_map(|l| [*l as u32, (*l >> 32) as u32])
            .collect()
    }

    /// XYZZ words of the affine point k G (ZZ = ZZZ = 1).
    fn xyzz_of(k: u64) -> (Vec<u32>, blst_p1) {
        let mut p = blst_p1::default();
        let bytes = k.to_le_bytes();
        unsafe { blst_p1_mult(&mut p, blst_p1_generator(), bytes.as_ptr(), 64) };
        let mut a = blst_p1_affine::default();
        unsafe { blst_p1_to_affine(&mut a, &p) };
        let one = unsafe { *blst_p1_generator() }.z; // 1 in Montgomery form
        let mut w = fp_words(&a.x);
        w.extend(fp_words(&a.y));
        w.extend(fp_words(&one));
        w.extend(fp_words(&one));
        (w, p)
    }

    #[test]
    fn window_sums_fold_to_the_msm() {
        let c = 5u32;
        let mut out = MsmOut {
            c,
            windows: Vec::new(),
            ones: Vec::new(),
        };
        let mut expected = blst_p1::default();
        let mut weight = 1u64; // 2^(c w)
        for w in 0..7u64 {
            let mut words = Vec::new();
            for i in 0..(3 + w) {
                let (xw, p) = xyzz_of(100 * w + i + 1);
                words.extend(xw);
                let mut term = blst_p1::default();
                let b = weight.to_le_bytes();
                unsafe {
                    blst_p1_mult(&mut term, &p, b.as_ptr(), 64);
                    blst_p1_add_or_double(&mut expected, &expected, &term);
                }
            }
            out.windows.push(words);
            weight <<= c;
        }
        for k in [7u64, 9] {
            let (xw, p) = xyzz_of(k);
            out.ones.extend(xw);
            unsafe { blst_p1_add_or_double(&mut expected, &expected, &p) };
        }
        let got = fold::<G1>(&out);
        assert!(unsafe { blst_p1_is_equal(&got, &expected) });
        // an empty MSM folds to the identity
        let none = MsmOut {
            c: 16,
            windows: Vec::new(),
            ones: Vec::new(),
        };
        let got = fold::<G1>(&none);
        assert!(unsafe { blst_p1_is_inf(&got) });
    }
}

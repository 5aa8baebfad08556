//! The MSM's choices made on the host before the device pass: the window size
//! (a cost model fitted to the H200) and whether the scalars crowd a few
//! buckets enough to take the balanced accumulation.

use blst::*;

/// Entries a chunk of the balanced accumulation (msm_acc_balanced) adds: a
/// bucket holding all n entries of a window costs n / BALANCED_CHUNK chained
/// additions instead of n.
pub(crate) const BALANCED_CHUNK: u64 = 64;

/// Whether the scalars crowd some bucket far beyond the average, so that
/// msm_acc's one invocation per bucket would chain most of a window's
/// additions on one thread: repeated values (2, r - 1, a constant) or values
/// sharing their high bits (r - small). Decided on up to 1024 evenly spaced
/// scalars: some window's (unsigned) c-bit digit taking one nonzero value in
/// at least 1/32 of them and at least 8 times. Uniform scalars (buckets of
/// 2^(c-1) ~ 2^15 values) essentially never do, and keep the measured path.
pub(crate) fn crowded(scalars: &[blst_fr], c: u32) -> bool {
    let n = scalars.len();
    let samples = n.min(1024);
    if samples < 8 {
        return false;
    }
    let canon: Vec<[u64; 4]> = (0..samples)
        .map(|i| {
            let mut l = [0u64; 4];
            // SAFETY: l has room for the 4 limbs blst writes.
            unsafe { blst_uint64_from_fr(l.as_mut_ptr(), &scalars[i * n / samples]) };
            l
        })
        .collect();
    let threshold = (samples / 32).max(8);
    let mut digits: Vec<u32> = Vec::with_capacity(samples);
    for w in 0..255u32.div_ceil(c) {
        digits.clear();
        digits.extend(canon.iter().map(|l| {
            let (bit, limb) = ((w * c) % 64, (w * c / 64) as usize);
            let mut v = l[limb] >> bit;
            if bit + c > 64 && limb + 1 < 4 {
                v |= l[limb + 1] << (64 - bit);
            }
            (v & ((1u64 << c) - 1)) as u32
        }));
        digits.sort_unstable();
        let mut run = 1;
        for k in 1..digits.len() {
            run = if digits[k] == digits[k - 1] {
                run + 1
            } else {
                1
            };
            if run >= threshold && digits[k] != 0 {
                return true;
            }
        }
    }
    false
}

/// Window size for an MSM of `n` bucketed terms, by a cost model fitted to the
/// H200 (2026-11-29): a bucket addition costs ~1.9 ns of the whole GPU's time when
/// many threads add at once, but ~17 µs in one thread's chain, and every bucket is
/// summed by one thread. So besides the additions (windows · n) and the bucket
/// reduction (windows · 2^(c-1) buckets), the model counts the longest chain: the
/// average bucket load, or the load of the top window, whose digits only reach
/// about r / 2^(c (windows - 1)) (for some c just the final carry). With unsigned
/// digits and c = 14, that window had 7 buckets at n = 2^16: 273 ms against 30 ms
/// at 2^18.
pub(crate) fn window_bits(n: u64) -> u32 {
    const LOG2_R: f64 = 254.857; // log2 of the scalar field's order
    let n = n as f64;
    let cost = |c: u32| {
        let windows = f64::from(255 / c + 1);
        let buckets = f64::from(1u32 << (c - 1));
        let top_buckets = (LOG2_R - f64::from(c) * (windows - 1.0)).exp2().max(1.0);
        let chain = (n / buckets).max(n / top_buckets);
        windows * n * 1.9 + windows * buckets * 3.8 + chain * 17_000.0
    };
    (4..=16u32)
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(16)
}

#[cfg(test)]
mod tests {
    use super::{crowded, window_bits};
    use blst::blst_fr;

    fn fr(v: u64) -> blst_fr {
        crate::host::fr_from_u64(v)
    }

    #[test]
    fn crowded_scalars_are_recognised() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // uniform below r (the top window's digits spread as in a witness)
        let random: Vec<blst_fr> = (0..5000)
            .map(|_| loop {
                let l = [next(), next(), next(), next() >> 1];
                if l[3] < 0x73ed_a753_299d_7d48 {
                    let mut f = blst_fr::default();
                    // SAFETY: l holds 4 limbs of a value below r.
                    unsafe { blst::blst_fr_from_uint64(&mut f, l.as_ptr()) };
                    break f;
                }
            })
            .collect();
        // at every window size the MSM picks, uniform scalars keep msm_acc
        for lg in 4..=26 {
            let c = window_bits(1 << lg);
            assert!(!crowded(&random, c), "uniform scalars crowded at c = {c}");
        }
        // every 10th scalar equal: a digit value in 10% of the samples
        let mut some_equal = random.clone();
        for s in some_equal.iter_mut().step_by(10) {
            *s = fr(12345);
        }
        assert!(crowded(&some_equal, 13));
        // r - small distinct values share their high digits
        let minus: Vec<blst_fr> = (0..5000u64)
            .map(|i| {
                let mut f = blst_fr::default();
                // SAFETY: blst field negation of a valid element.
                unsafe { blst::blst_fr_cneg(&mut f, &fr(i + 2), true) };
                f
            })
            .collect();
        assert!(crowded(&minus, 16));
        assert!(!crowded(&random[..5], 16));
    }

    #[test]
    fn windows_avoid_a_nearly_empty_top_window() {
        // the top window covers bits c * (255 / c) .. 255 and the last carry
        for lg in 4..=26 {
            let c = window_bits(1 << lg);
            let top_bits = 255 - c * (255 / c);
            assert!(
                top_bits + 2 >= c / 2,
                "2^{lg} terms: c = {c}, top window {top_bits} bits"
            );
        }
        assert_eq!(window_bits(1 << 22), 16);
        assert!(window_bits(16) <= 8);
    }
}

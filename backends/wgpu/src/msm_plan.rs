//! The MSM's choices made on the host before the device pass: the window size
//! (a cost model fitted to the H200) and the chunk length of the balanced
//! accumulation.

/// Entries a chunk of the balanced accumulation (msm_acc_balanced) adds: a
/// bucket holding all n entries of a window costs n / BALANCED_CHUNK chained
/// additions instead of n.
pub(crate) const BALANCED_CHUNK: u64 = 64;

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
    use super::window_bits;
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

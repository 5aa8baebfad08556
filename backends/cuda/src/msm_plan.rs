//! How an MSM is cut: window size and bucket sets (a cost model fitted to
//! measurements), passes over parts of the scalars and their ranges, scatter
//! launches.
//! Pure host arithmetic; the device side is in msm/.

/// Passes over parts of the scalars for an MSM of n terms with nb buckets
/// (`set`: [`crate::MsmOptions::passes`]). With several passes the copy lane
/// uploads pass p + 1's scalars while the kernels work on pass p, so only the
/// first part's upload is on the critical path; each later pass accumulates
/// into empty buckets of its own and merges them (one addition per bucket) and
/// runs its own levels of partial sums.
///
/// Two passes when half the upload (at ~28 GB/s from pageable memory through
/// the staging buffers) is worth more than that: ~1.5 ms of levels plus
/// ~0.65 ns per bucket merged. More passes cost more in levels, merges and
/// the accumulation's tail per pass than the smaller first upload saves.
pub(crate) fn msm_passes(set: Option<usize>, n: usize, nb: usize) -> usize {
    if let Some(p) = set {
        return p;
    }
    let upload_ms = (n * 32) as f64 / 28e6;
    let extra_pass_ms = 1.5 + nb as f64 * 0.65e-6;
    // Half the upload, although the second pass now hides more of it: with
    // the share hidden in the rule, the prover's smaller MSMs on tables took
    // two passes, whose second stream and fixed costs outweighed the little
    // upload they hid (BENCHMARKS.md).
    if upload_ms / 2.0 > extra_pass_ms {
        2
    } else {
        1
    }
}

/// Share of the scalars in the first of `passes` passes (`set`:
/// [`crate::MsmOptions::first_pass_share`]): 1 / (2 passes + 1), so that the
/// upload on the critical path, the first pass's, is small while the later
/// passes' uploads still hide behind the kernels of the pass before (a pass's
/// kernels take several times its upload).
pub(crate) fn first_pass_share(set: Option<f64>, passes: usize) -> f64 {
    set.unwrap_or(1.0 / (2 * passes.max(1) + 1) as f64)
}

/// The passes' ranges of scalars: the first about `first_share` of n, the
/// rest cut evenly; every boundary a multiple of 64 (the density's words split
/// cleanly), no range empty.
pub(crate) fn pass_ranges(n: usize, passes: usize, first_share: f64) -> Vec<(usize, usize)> {
    let align = |v: usize| v.div_ceil(64) * 64;
    if passes <= 1 || n <= 64 {
        return vec![(0, n)];
    }
    let first = align((n as f64 * first_share) as usize).clamp(64, n);
    let mut ranges = vec![(0, first)];
    let rest = n - first;
    if rest > 0 {
        let per = align(rest.div_ceil(passes - 1)).max(64);
        let mut lo = first;
        while lo < n {
            let hi = (lo + per).min(n);
            ranges.push((lo, hi));
            lo = hi;
        }
    }
    ranges
}

/// Windows per launch of the counting sort's scatter for `sets` bucket sets of
/// `nwin` windows. A bucket set per window (plain bases): one, so that a
/// launch bumps one window's 2^(c-1) bucket cursors, which stay in L2, and
/// writes one window's part of the sorted entries (each launch recomputes the
/// digits up to its window, which costs less). One set for every window (a
/// table of precomputed copies): every window's entries share the set's
/// cursors anyway, so all windows in one launch.
pub(crate) fn scatter_windows(sets: usize, nwin: usize) -> u32 {
    if sets == 1 {
        nwin as u32
    } else {
        1
    }
}

/// Bytes of bucket counters the counting sort may update at random: beyond
/// them the counters no longer stay in the 50 MB L2 cache of the GPUs the
/// model was fitted on and the count of digits takes twice as long or more
/// (BENCHMARKS.md: plain 21-bit windows, and tables of two copies for 22-
/// and 24-bit windows), which [`plan_cost`] does not see.
const MAX_COUNTER_BYTES: u64 = 32 << 20;

/// Whether wset bucket sets of c-bit windows keep their counters in L2
/// (see [`MAX_COUNTER_BYTES`]).
pub(crate) fn counters_fit(c: u32, wset: u32) -> bool {
    wset as u64 * (1u64 << (c - 1)) * 4 <= MAX_COUNTER_BYTES
}

/// Window size for an MSM of n effective terms over plain bases: the c that
/// minimises [`plan_cost`], among those whose counters fit (at most 20).
pub(crate) fn model_window_bits(n: usize) -> u32 {
    // plain windows: a bucket set per window
    let cost = |c: u32| plan_cost(n, c, 256u32.div_ceil(c));
    (4..=24)
        .filter(|&c| counters_fit(c, 256u32.div_ceil(c)))
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(16)
}

/// How an MSM cuts its scalars: c-bit windows, nwin of them, whose digits go
/// to wset bucket sets (window w to set w % wset, with copy w / wset of each
/// base); point indices are b * stride + copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WindowPlan {
    pub c: u32,
    pub nwin: u32,
    pub wset: u32,
    pub stride: u32,
}

/// Modelled cost (ns) of an MSM of n terms in c-bit windows with wset bucket
/// sets: every term costs one addition a window (digits, sort, mixed
/// addition), every bucket of every set two in the running sums; the constants
/// are fitted to G1 MSMs (BENCHMARKS.md, "G1 MSM window size").
pub(crate) fn plan_cost(n: usize, c: u32, wset: u32) -> f64 {
    const NS_PER_TERM_WINDOW: f64 = 0.54;
    const NS_PER_BUCKET: f64 = 1.6;
    let windows = 256u32.div_ceil(c) as f64;
    windows * n as f64 * NS_PER_TERM_WINDOW + wset as f64 * (1u64 << (c - 1)) as f64 * NS_PER_BUCKET
}

impl WindowPlan {
    /// The plan for an MSM of `n` effective terms over `table`: its copies
    /// where they beat plain windows in the cost model, else plain windows
    /// (copy 0 of each base). `forced_c` ([`crate::MsmOptions::window_bits`])
    /// forces plain windows of that size.
    pub(crate) fn choose(n: usize, copies: u32, table_c: u32, forced_c: Option<u32>) -> Self {
        let c = forced_c.unwrap_or_else(|| model_window_bits(n));
        let plain = WindowPlan {
            c,
            nwin: 256u32.div_ceil(c),
            wset: 256u32.div_ceil(c),
            stride: copies.max(1),
        };
        if copies <= 1 || forced_c.is_some() {
            return plain;
        }
        let nwin = 256u32.div_ceil(table_c);
        let copied = WindowPlan {
            c: table_c,
            nwin,
            wset: nwin.div_ceil(copies),
            stride: copies,
        };
        if plan_cost(n, copied.c, copied.wset) < plan_cost(n, plain.c, plain.wset) {
            copied
        } else {
            plain
        }
    }
}

/// Threads of the sum of the bases whose scalar is 1 (at most `ones` of
/// them): about 64 additions a thread, and no more threads than keep the
/// device busy, so that the tree that adds their partial sums stays short.
pub(crate) fn ones_threads(ones: usize) -> u32 {
    ones.div_ceil(64).clamp(1, 1 << 18) as u32
}

#[cfg(test)]
mod tests {
    use super::{first_pass_share, model_window_bits, pass_ranges, WindowPlan};

    #[test]
    fn copies_are_used_where_the_model_says_they_pay() {
        // a full table for 8-bit windows: one bucket set
        let p = WindowPlan::choose(1000, 32, 8, None);
        assert_eq!((p.c, p.nwin, p.wset, p.stride), (8, 32, 1, 32));
        // three copies: windows w, w + 11, w + 22 share a set
        let p = WindowPlan::choose(1000, 3, 8, None);
        assert_eq!((p.c, p.nwin, p.wset, p.stride), (8, 32, 11, 3));
        // copies for 16-bit windows do not pay for 5000 terms: plain windows
        // over copy 0 (stride 2)
        let p = WindowPlan::choose(5000, 2, 16, None);
        assert_eq!((p.wset, p.stride), (p.nwin, 2));
        assert!(p.c < 16);
        // plain bases
        let p = WindowPlan::choose(1 << 20, 1, 0, None);
        assert_eq!((p.c, p.wset, p.stride), (16, 16, 1));
        // a forced window size: plain windows of it, even over a table
        let p = WindowPlan::choose(1000, 32, 8, Some(12));
        assert_eq!((p.c, p.nwin, p.wset, p.stride), (12, 22, 22, 32));
    }

    #[test]
    fn pass_ranges_cover_the_scalars_in_order_on_64_boundaries() {
        for n in [1usize, 63, 64, 65, 1000, 4096, 1 << 20, (1 << 24) + 17] {
            for passes in 1..=5 {
                for share in [first_pass_share(None, passes), 0.5, 0.01, 1.0] {
                    let r = pass_ranges(n, passes, share);
                    assert_eq!(r[0].0, 0);
                    assert_eq!(r.last().unwrap().1, n);
                    assert!(r.len() <= passes.max(1), "{n} {passes} {share}: {r:?}");
                    for w in r.windows(2) {
                        assert_eq!(w[0].1, w[1].0);
                        assert_eq!(w[0].1 % 64, 0);
                    }
                    assert!(r.iter().all(|(lo, hi)| lo < hi), "{n} {passes}: {r:?}");
                }
            }
        }
        // two passes of 2^24: a fifth (rounded up to 64 scalars), then the rest
        let r = pass_ranges(1 << 24, 2, 0.2);
        let first = ((1usize << 24) / 5).div_ceil(64) * 64;
        assert_eq!(r, vec![(0, first), (first, 1 << 24)]);
    }

    #[test]
    fn window_size_grows_with_the_msm_and_stops_at_20() {
        assert_eq!(model_window_bits(0), 4);
        assert_eq!(model_window_bits(1 << 10), 7);
        assert_eq!(model_window_bits(1 << 20), 16);
        assert_eq!(model_window_bits(1 << 24), 20);
        assert_eq!(model_window_bits(1 << 28), 20);
        let mut last = 4;
        for lg in 0..30 {
            let c = model_window_bits(1 << lg);
            assert!(c >= last, "c fell from {last} to {c} at 2^{lg}");
            last = c;
        }
    }
}

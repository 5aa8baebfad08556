//! The device pass of a Pippenger MSM (kernels/msm/pippenger.cuh): upload and
//! prepare the scalars, sort them into buckets, accumulate, reduce, and return
//! the window sums for the host to fold.

use blst::blst_fr;
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use std::sync::Arc;

use crate::{host, CudaBackend, CudaError, Curve};

/// Per-phase device timings, printed to stderr when CROSSGROTH_CUDA_PROFILE is
/// set (CUDA events between the phases; costs nothing otherwise).
struct Profiler<'a> {
    b: &'a CudaBackend,
    marks: Vec<(std::borrow::Cow<'static, str>, cudarc::driver::CudaEvent)>,
    on: bool,
}
impl<'a> Profiler<'a> {
    pub(crate) fn new(b: &'a CudaBackend) -> Self {
        let on = std::env::var_os("CROSSGROTH_CUDA_PROFILE").is_some();
        let mut p = Profiler {
            b,
            marks: Vec::new(),
            on,
        };
        p.mark("start");
        p
    }
    pub(crate) fn mark(&mut self, what: &'static str) {
        self.mark_named(what.into());
    }
    /// A phase of one of several passes ("p1.scatter"); of a single pass, the
    /// plain phase name.
    pub(crate) fn mark_pass(&mut self, pass: usize, passes: usize, what: &'static str) {
        if !self.on {
            return;
        }
        if passes == 1 {
            self.mark_named(what.into());
        } else {
            self.mark_named(format!("p{pass}.{what}").into());
        }
    }
    fn mark_named(&mut self, what: std::borrow::Cow<'static, str>) {
        if !self.on {
            return;
        }
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        if let Ok(e) = self.b.ctx.new_event(flags) {
            if e.record(&self.b.stream).is_ok() {
                self.marks.push((what, e));
            }
        }
    }
    pub(crate) fn report(&self, title: &str) {
        if !self.on || self.marks.len() < 2 {
            return;
        }
        let mut line = format!("crossgroth-cuda profile {title}:");
        for w in self.marks.windows(2) {
            if let Ok(ms) = w[0].1.elapsed_ms(&w[1].1) {
                line += &format!(" {}={:.3}ms", w[1].0, ms);
            }
        }
        if let Ok(ms) = self.marks[0]
            .1
            .elapsed_ms(&self.marks[self.marks.len() - 1].1)
        {
            line += &format!(" total={ms:.3}ms");
        }
        eprintln!("{line}");
    }
}

/// Bucket counts per block of the offsets scan (MSM_SCAN_TILE in pippenger.cuh).
const SCAN_TILE: usize = 4096;

/// Passes over parts of the scalars for an MSM of n terms with nb buckets
/// (CROSSGROTH_CUDA_MSM_PASSES=<1..=16> overrides it). With several passes the
/// copy lane uploads pass p + 1's scalars while the kernels work on pass p, so
/// only the first part's upload is on the critical path; each later pass
/// accumulates into empty buckets of its own and merges them (one addition per
/// bucket) and runs its own levels of partial sums.
///
/// Two passes when half the upload (at ~28 GB/s from pageable memory through
/// the staging buffers) is worth more than that: ~1.5 ms of levels plus
/// ~0.65 ns per bucket merged (H200, 2026-11-30, G1 MSM 2^24: 2 passes on a
/// table of 12 copies 134.1 -> 129.4 ms, plain 145.6 -> 144.0 ms; 4 passes
/// 133.6 ms on the table: the levels, merges and the accumulation's tail per
/// pass ate what the smaller first upload saved).
fn msm_passes(set: usize, n: usize, nb: usize) -> usize {
    if set > 0 {
        return set.min(16);
    }
    if let Some(p) = std::env::var("CROSSGROTH_CUDA_MSM_PASSES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        return p.clamp(1, 16);
    }
    let upload_ms = (n * 32) as f64 / 28e6;
    let extra_pass_ms = 1.5 + nb as f64 * 0.65e-6;
    // Half the upload, although the second pass now hides more of it: with
    // the share hidden (four fifths) in the rule, proving the 2^20 chain went
    // from 164 to 210 ms (H200, 2026-12-01), most likely because the
    // prover's smaller MSMs on tables then took two passes, whose second
    // stream and fixed costs outweigh the little upload they hide.
    if upload_ms / 2.0 > extra_pass_ms {
        2
    } else {
        1
    }
}

/// Share of the scalars in the first of `passes` passes: 1 / (2 passes + 1),
/// so that the upload on the critical path, the first pass's, is small while
/// the later passes' uploads still hide behind the kernels of the pass before
/// (a pass's kernels take several times its upload).
/// CROSSGROTH_CUDA_MSM_FIRST_SHARE=<0..1> overrides it, for tuning. H200,
/// 2026-12-01, G1 MSM 2^24 on a table, two passes, first share 0.5 / 0.3 /
/// 0.25 / 0.2: 123.9 / - / 119.1 / 118.7 ms with the sort after the
/// accumulation; 117.6 / 115.6 / 114.8 ms with the later passes' sort on its
/// own stream (0.3 / 0.25 / 0.2).
fn first_pass_share(passes: usize) -> f64 {
    if let Some(s) = std::env::var("CROSSGROTH_CUDA_MSM_FIRST_SHARE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0 && *s <= 1.0)
    {
        return s;
    }
    1.0 / (2 * passes.max(1) + 1) as f64
}

/// The passes' ranges of scalars: the first about `first_share` of n, the
/// rest cut evenly; every boundary a multiple of 64 (the density's words split
/// cleanly), no range empty.
fn pass_ranges(n: usize, passes: usize, first_share: f64) -> Vec<(usize, usize)> {
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

/// Window size for an MSM of n effective terms (CROSSGROTH_CUDA_MSM_C=<4..=22>
/// overrides it, for tuning): the c that minimises a cost model fitted to G1
/// MSMs of 2^24 terms on the H200 (2026-11-29, c = 16..21): 0.54 ns per term
/// and window (digits, sort, mixed addition) plus 1.6 ns per bucket (the
/// running-sum reduction). At most 20: at 21 the bucket counters (13 windows
/// x 2^20 x 4 bytes) outgrow the L2 cache and the sort takes twice as long.
/// Measured at 2^24: c = 16 194 ms, 18 182, 19 183, 20 172, 21 203.
pub(crate) fn window_bits(n: usize) -> u32 {
    if let Some(c) = std::env::var("CROSSGROTH_CUDA_MSM_C")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        return c.clamp(4, 22);
    }
    model_window_bits(n)
}

/// Windows per launch of the counting sort's scatter for `sets` bucket sets of
/// `nwin` windows (CROSSGROTH_CUDA_MSM_SCATTER_WINDOWS overrides it, for
/// tuning). A bucket set per window (plain bases): one, so a launch bumps one
/// window's 2^(c-1) bucket cursors (2 MiB at c = 20, which stay in L2) and
/// writes one window's part of the sorted entries. On the H200 the scatter of
/// a G1 MSM of 2^24 (c = 20, 13 windows) took 12.15 ms a window at a time, 13.2
/// ms three at a time and 18.3 ms all at once, although each launch recomputes
/// the scalars' digits up to its window. One set for every window (a table of
/// precomputed copies): every window's entries share the set's cursors anyway,
/// so all windows in one launch (2^24 on a table of 12 copies, 2 passes: 7.1
/// -> 6.35 ms a pass, the MSM 125.8 -> 123.8 ms; three a launch 124.3 ms).
fn scatter_windows(sets: usize, nwin: usize) -> u32 {
    std::env::var("CROSSGROTH_CUDA_MSM_SCATTER_WINDOWS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .map_or(if sets == 1 { nwin as u32 } else { 1 }, |w| w.max(1))
}

pub(crate) fn model_window_bits(n: usize) -> u32 {
    const NS_PER_TERM_WINDOW: f64 = 0.54;
    const NS_PER_BUCKET: f64 = 1.6;
    let cost = |c: u32| {
        let windows = 256u32.div_ceil(c) as f64;
        windows * (n as f64 * NS_PER_TERM_WINDOW + (1u64 << (c - 1)) as f64 * NS_PER_BUCKET)
    };
    (4..=20)
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(16)
}

/// Resident bases as the MSM reads them: `copies` points per base, base-major
/// (index b copies + k), copy k being 2^(c wset k) times the base, where wset
/// = ceil(ceil(256 / c) / copies). One copy: plain bases (c unused).
#[derive(Clone, Copy)]
pub(crate) struct BaseTable<'a> {
    pub buf: &'a CudaSlice<u64>,
    pub len: usize,
    pub copies: u32,
    pub c: u32,
    /// Whether the MSM may upload its scalars on the copy lane beside its
    /// kernels (not while a streamed MSM's uploads hold the lane).
    pub overlap_upload: bool,
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
/// sets: every term costs one addition a window, every bucket of every set two
/// in the running sums (see window_bits).
pub(crate) fn plan_cost(n: usize, c: u32, wset: u32) -> f64 {
    const NS_PER_TERM_WINDOW: f64 = 0.54;
    const NS_PER_BUCKET: f64 = 1.6;
    let windows = 256u32.div_ceil(c) as f64;
    windows * n as f64 * NS_PER_TERM_WINDOW + wset as f64 * (1u64 << (c - 1)) as f64 * NS_PER_BUCKET
}

impl WindowPlan {
    /// The plan for an MSM of `n` effective terms over `table`: its copies
    /// where they beat plain windows in the cost model, else plain windows
    /// (copy 0 of each base). CROSSGROTH_CUDA_MSM_C forces plain windows of
    /// that size.
    pub(crate) fn choose(n: usize, copies: u32, table_c: u32) -> Self {
        let c = window_bits(n);
        let plain = WindowPlan {
            c,
            nwin: 256u32.div_ceil(c),
            wset: 256u32.div_ceil(c),
            stride: copies.max(1),
        };
        if copies <= 1 || std::env::var_os("CROSSGROTH_CUDA_MSM_C").is_some() {
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

impl CudaBackend {
    /// Runs the device MSM; returns Jacobian words (a dummy point, the wset
    /// bucket sets' sums, then the sum of the bases whose scalar is 1) and the
    /// window size, by which the host weighs set s with 2^(c s).
    pub(crate) fn msm(
        &self,
        curve: Curve,
        table: BaseTable<'_>,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<(Vec<u64>, u32), CudaError> {
        let (bases, n_bases) = (table.buf, table.len);
        let n = scalars.len();
        let jw = curve.jac_words();
        let xw = curve.xyzz_words();
        // Density: validate and build the per-word prefix counts.
        let prefix: Option<Vec<u32>> = match density {
            None => {
                if n > n_bases {
                    return Err(CudaError::InvalidInput(format!(
                        "{n} scalars but only {n_bases} bases"
                    )));
                }
                None
            }
            Some(d) => {
                if d.len() * 64 < n {
                    return Err(CudaError::InvalidInput(format!(
                        "density bitmap has {} bits for {n} scalars",
                        d.len() * 64
                    )));
                }
                let mut p = Vec::with_capacity(d.len());
                let mut acc = 0usize;
                for (i, w) in d.iter().enumerate() {
                    p.push(acc as u32);
                    let bits = if (i + 1) * 64 <= n {
                        *w
                    } else if i * 64 >= n {
                        0
                    } else {
                        w & ((1u64 << (n - i * 64)) - 1)
                    };
                    acc += bits.count_ones() as usize;
                }
                if acc > n_bases {
                    return Err(CudaError::InvalidInput(format!(
                        "density selects {acc} variables but only {n_bases} bases are present"
                    )));
                }
                Some(p)
            }
        };
        if n >= (u32::MAX / 2) as usize
            || n_bases.saturating_mul(table.copies.max(1) as usize) >= (u32::MAX / 2) as usize
        {
            return Err(CudaError::InvalidInput(format!(
                "MSM of {n} terms is too large"
            )));
        }
        let plan = WindowPlan::choose(effective_terms(n, density), table.copies, table.c);
        let c = plan.c;
        let k_per_win = 1usize << (c - 1);
        let nwin = plan.nwin as usize;
        // bucket sets: what the reduction and the host see as windows
        let nsets = plan.wset as usize;
        let nb = nsets * k_per_win;
        let max_entries = nwin * n;
        if max_entries >= u32::MAX as usize {
            return Err(CudaError::InvalidInput(format!(
                "MSM of {n} terms is too large"
            )));
        }
        // Chunk lengths of the accumulation tree: level 0 (points), levels >= 1
        // (partial sums). Small MSMs use short chunks so that tests exercise
        // several levels.
        // Level 1 on has 8 partial sums a thread: with 32 (as before 2026-11-30)
        // the few threads of level 1 ran long chains of full additions with the
        // GPU part empty; at the G1 MSM of 2^24 on a table the levels took 1.27
        // instead of 2.5 ms a pass on the H200 (L0 = 256: 1 ms more
        // accumulation a pass than it saved).
        let (l_chunk, l1): (u32, u32) = if max_entries >= 1 << 26 {
            (128, 8)
        } else if max_entries >= 1 << 22 {
            (64, 8)
        } else {
            (8, 4)
        };
        // CROSSGROTH_CUDA_MSM_L=<L0>/<L1> overrides them, for tuning
        let (l_chunk, l1) = std::env::var("CROSSGROTH_CUDA_MSM_L")
            .ok()
            .and_then(|v| {
                let (a, b) = v.split_once('/')?;
                Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
            })
            .map_or((l_chunk, l1), |(a, b)| (a.clamp(2, 4096), b.clamp(2, 4096)));
        // Passes over parts of the scalars (see msm_passes): ranges of multiples
        // of 64 scalars, so that the density's words split cleanly.
        let passes = if table.overlap_upload {
            let set = self.msm_passes.load(std::sync::atomic::Ordering::Acquire);
            msm_passes(set, n, nb)
        } else {
            1
        };
        let ranges = pass_ranges(n, passes, first_pass_share(passes));
        let m_max = ranges.iter().map(|r| r.1 - r.0).max().unwrap_or(0);
        let pass_entries = nwin * m_max;
        let nchunks = pass_entries.div_ceil(l_chunk as usize).max(1);
        // Buckets per thread of the running-sum reduction: each thread also
        // multiplies its segment's sum by the segment's first index (~1.5 c
        // additions), so long segments where there are buckets enough to keep
        // the device busy (c = 20: 64 -> 106 000 threads).
        let seg: u32 = (k_per_win as u32).min(if nb >= 1 << 22 { 64 } else { 32 });
        let nseg = k_per_win / seg as usize;

        let _g = self.guard();
        let mut prof = Profiler::new(self);
        let ck = &self.k.g[curve as usize];
        let n32 = n as u32;
        let c32 = c;
        let nwin32 = nwin as u32;
        let wset32 = plan.wset;
        let stride32 = plan.stride;
        let nsets32 = nsets as u32;
        let nb32 = nb as u32;
        let k32 = k_per_win as u32;

        let words = host::fr_as_u64s(scalars);
        let multi = ranges.len() > 1;
        // One pass: the scalars go up on this stream before anything else. Several:
        // two buffers that the copy lane fills while the kernels work on the
        // previous pass.
        let mut d_scal: Vec<CudaSlice<u64>> = Vec::with_capacity(2);
        if !multi {
            d_scal.push(self.upload_large(words, "MSM scalars")?);
        }
        let (d_density, d_prefix) = match (density, &prefix) {
            (Some(d), Some(p)) => (
                Some(self.upload_u64(d, "density")?),
                Some(
                    self.stream
                        .clone_htod(p)
                        .map_err(|e| CudaError::alloc("density prefix", p.len() * 4, e))?,
                ),
            ),
            _ => (None, None),
        };
        let null: u64 = 0;
        if !multi {
            prof.mark("upload");
        } else {
            for _ in 0..2 {
                d_scal.push(self.alloc_u64(4 * m_max, "MSM scalars")?);
            }
        }
        let mut canon = self.alloc_u64(4 * m_max, "MSM canonical scalars")?;
        let mut bidx = self.alloc_u32(n, "MSM base indices")?;
        let mut counts = self
            .stream
            .alloc_zeros::<u32>(nb)
            .map_err(|e| CudaError::alloc("bucket counts", nb * 4, e))?;
        // Sorted entries and bucket offsets: with several passes, two sets where
        // the device has room for them, so that pass p + 1 can be sorted while
        // pass p accumulates from the other; otherwise one, and each sort waits
        // for the accumulation before it (CROSSGROTH_CUDA_MSM_ENTRY_SETS=1
        // forces that, for tests).
        let mut offsets_sets = vec![self.alloc_u32(nb + 1, "bucket offsets")?];
        let mut entries_sets = vec![self.alloc_u64(pass_entries, "MSM entries")?];
        let one_set = std::env::var("CROSSGROTH_CUDA_MSM_ENTRY_SETS").is_ok_and(|v| v == "1");
        if multi && !one_set {
            if let (Ok(o), Ok(e)) = (
                self.alloc_u32(nb + 1, "bucket offsets"),
                self.alloc_u64(pass_entries, "MSM entries"),
            ) {
                offsets_sets.push(o);
                entries_sets.push(e);
            }
        }
        let sets = entries_sets.len();
        let mut cursor = self.alloc_u32(nb, "bucket cursor")?;
        // all-zero words are the XYZZ identity (ZZ = 0)
        let mut buckets = self
            .stream
            .alloc_zeros::<u64>(nb * xw)
            .map_err(|e| CudaError::alloc("buckets", nb * xw * 8, e))?;
        // Passes after the first accumulate into empty buckets of their own,
        // then merge them (see msm_bucket_merge).
        let mut pass_buckets = if multi {
            Some(self.alloc_u64(nb * xw, "pass buckets")?)
        } else {
            None
        };
        let mut heads = self.alloc_u64(nchunks * xw, "chunk partials")?;
        let mut heads2 = self.alloc_u64(nchunks.div_ceil(l1 as usize) * xw, "chunk partials")?;
        let mut segs = self.alloc_u64(nsets * nseg * xw, "bucket segments")?;
        let mut tmp = self.alloc_u64(nsets * nseg.div_ceil(32).max(1) * xw, "window partials")?;
        // Output: [dummy, nsets set sums, ones]
        let mut out = self
            .stream
            .alloc_zeros::<u64>((nsets + 2) * jw)
            .map_err(|e| CudaError::alloc("MSM out", 0, e))?;
        let tiles = nb.div_ceil(SCAN_TILE);
        let tiles32 = tiles as u32;
        let mut tile_sums = self.alloc_u32(tiles, "bucket tile sums")?;
        let mut tile_offsets = self.alloc_u32(tiles + 1, "bucket tile offsets")?;
        let mut tile_cursor = self.alloc_u32(tiles, "bucket tile offsets")?;
        prof.mark("alloc");

        // Several passes: the scalars' preparation and sort run on a stream of
        // their own, so that pass p + 1's sort (memory and atomics) runs beside
        // pass p's accumulation (the multiplier) instead of after it; the
        // accumulation waits for its pass's sort, and a sort waits until the
        // accumulation two passes back has read the entries it overwrites.
        // (H200, 2026-12-01, G1 MSM 2^24 on a table, 2 passes: 117.4 -> 115.6
        // ms; the two kernels share the SMs rather than overlap inside them,
        // since the accumulation's blocks fill the register file, so what is
        // won is the second upload's wait; a sort stream of the highest
        // priority measured the same.)
        let sort_stream = if multi {
            Some(
                self.ctx
                    .new_stream()
                    .map_err(|e| CudaError::driver("cuStreamCreate", e))?,
            )
        } else {
            None
        };
        let ss = sort_stream.as_ref().unwrap_or(&self.stream);
        let event = |st: &Arc<CudaStream>| {
            st.record_event(None)
                .map_err(|e| CudaError::driver("cuEventRecord", e))
        };
        let wait = |st: &Arc<CudaStream>, e: &CudaEvent| {
            st.wait(e)
                .map_err(|e| CudaError::driver("cuStreamWaitEvent", e))
        };
        // per scalar buffer: an event after the prepare that last read it
        let mut slot_read: [Option<CudaEvent>; 2] = [None, None];
        // per entries set: an event after the accumulation that last read it
        let mut set_read: [Option<CudaEvent>; 2] = [None, None];
        let mut lane_guard = if multi { Some(self.copy_lane()?) } else { None };
        if let Some(guard) = lane_guard.as_ref() {
            // the buffers allocated and cleared on this stream so far
            let ready = event(&self.stream)?;
            wait(ss, &ready)?;
            wait(
                &guard.as_ref().expect("copy lane initialised").stream,
                &ready,
            )?;
        }
        for (p, &(lo, hi)) in ranges.iter().enumerate() {
            let (m, m32, lo32) = (hi - lo, (hi - lo) as u32, lo as u32);
            let slot = p % 2;
            let set = p % sets;
            if let Some(guard) = lane_guard.as_mut() {
                let lane = guard.as_mut().expect("copy lane initialised");
                if let Some(read) = &slot_read[slot] {
                    // only the prepare that read this buffer two passes ago, not
                    // every kernel enqueued since (joining the whole stream would
                    // hold this upload back until the previous pass is done)
                    wait(&lane.stream, read)?;
                }
                let mut dst = d_scal[slot].slice_mut(0..4 * m);
                lane.staging
                    .upload(&lane.stream, &words[4 * lo..4 * hi], &mut dst)?;
                let uploaded = event(&lane.stream)?;
                wait(ss, &uploaded)?;
                if p == 0 {
                    wait(&self.stream, &uploaded)?;
                    prof.mark("upload");
                }
            }
            if let Some(read) = &set_read[set] {
                wait(ss, read)?;
            }
            if p > 0 {
                ss.memset_zeros(&mut counts)
                    .map_err(|e| CudaError::driver("bucket counts", e))?;
                if let Some(pb) = pass_buckets.as_mut() {
                    self.stream
                        .memset_zeros(pb)
                        .map_err(|e| CudaError::driver("pass buckets", e))?;
                }
            }
            let target = match pass_buckets.as_mut() {
                Some(pb) if p > 0 => pb,
                _ => &mut buckets,
            };
            let scal = &d_scal[if multi { slot } else { 0 }];
            {
                let mut bidx_pass = bidx.slice_mut(lo..hi);
                match (&d_density, &d_prefix) {
                    (Some(d), Some(pre)) => {
                        let (d, pre) = (d.slice(lo / 64..), pre.slice(lo / 64..));
                        launch_on!(ss, self.k.msm_prepare, m, 256; scal, &m32, &d, &pre, &lo32, &c32, &nwin32, &wset32, &mut canon, &mut bidx_pass, &mut counts)
                    }
                    _ => {
                        launch_on!(ss, self.k.msm_prepare, m, 256; scal, &m32, &null, &null, &lo32, &c32, &nwin32, &wset32, &mut canon, &mut bidx_pass, &mut counts)
                    }
                }
            }
            let bidx_pass = bidx.slice(lo..hi);
            if multi {
                slot_read[slot] = Some(event(ss)?);
            }
            let offsets = &mut offsets_sets[set];
            let entries = &mut entries_sets[set];
            if !multi {
                prof.mark_pass(p, ranges.len(), "prepare");
            }
            // Bucket offsets: tile sums, their scan (one block), each tile's scan.
            launch_on!(ss, self.k.msm_scan_tiles, tiles * 1024, 1024; &counts, &nb32, &mut tile_sums);
            launch_on!(ss, self.k.msm_scan, 1024, 1024; &tile_sums, &tiles32, &mut tile_offsets, &mut tile_cursor);
            launch_on!(ss, self.k.msm_scan_apply, tiles * 1024, 1024; &counts, &nb32, &tile_offsets, &mut *offsets, &mut cursor);
            if !multi {
                prof.mark_pass(p, ranges.len(), "scan");
            }
            let per_launch = scatter_windows(nsets, nwin);
            for w_lo in (0..nwin32).step_by(per_launch as usize) {
                let w_hi = w_lo.saturating_add(per_launch).min(nwin32);
                launch_on!(ss, self.k.msm_scatter, m, 256; &canon, &bidx_pass, &m32, &c32, &w_lo, &w_hi, &wset32, &stride32, &mut cursor, &mut *entries);
            }
            if multi {
                // the time the accumulation waits for this pass's sort
                wait(&self.stream, &event(ss)?)?;
                prof.mark_pass(p, ranges.len(), "sort_wait");
            } else {
                prof.mark_pass(p, ranges.len(), "scatter");
            }
            // The runs add to the buckets, which keep the earlier passes' sums.
            let chunks = (nwin * m).div_ceil(l_chunk as usize);
            let (entries, offsets) = (&*entries, &*offsets);
            launch!(self, ck.accumulate, chunks, 128; bases, entries, offsets, &nb32, &l_chunk, &mut *target, &mut heads);
            prof.mark_pass(p, ranges.len(), "accumulate");
            // Levels of partial sums, while the previous level may have had
            // more than one chunk (the device skips levels past the last).
            let mut prev_max = nwin * m;
            let mut prev_l = l_chunk as usize;
            let mut level: u32 = 1;
            while prev_max > prev_l {
                let cur_max = prev_max.div_ceil(prev_l);
                let threads = cur_max.div_ceil(l1 as usize);
                if level % 2 == 1 {
                    launch!(self, ck.accumulate_level, threads, 128; &heads, entries, offsets, &nb32, &l_chunk, &l1, &level, &mut *target, &mut heads2);
                } else {
                    launch!(self, ck.accumulate_level, threads, 128; &heads2, entries, offsets, &nb32, &l_chunk, &l1, &level, &mut *target, &mut heads);
                }
                prev_max = cur_max;
                prev_l = l1 as usize;
                level += 1;
            }
            if multi {
                set_read[set] = Some(event(&self.stream)?);
            }
            prof.mark_pass(p, ranges.len(), "levels");
            if p > 0 {
                if let Some(pb) = pass_buckets.as_ref() {
                    launch!(self, ck.bucket_merge, nb, 128; &mut buckets, pb, &nb32);
                }
                prof.mark_pass(p, ranges.len(), "merge");
            }
        }
        drop(lane_guard);
        launch!(self, ck.bucket_reduce, nsets * nseg, 64; &buckets, &k32, &nsets32, &seg, &mut segs);
        prof.mark("bucket_reduce");
        // Reduce each window's nseg segment sums to one point.
        let mut len = nseg as u32;
        let mut src_is_segs = true;
        while len > 1 {
            let f: u32 = len.min(32);
            let len2 = len.div_ceil(f);
            if src_is_segs {
                launch!(self, ck.sum_groups, nsets32 * len2, 64; &segs, &nsets32, &len, &f, &mut tmp, &len2);
            } else {
                launch!(self, ck.sum_groups, nsets32 * len2, 64; &tmp, &nsets32, &len, &f, &mut segs, &len2);
            }
            src_is_segs = !src_is_segs;
            len = len2;
        }
        {
            let src = if src_is_segs { &segs } else { &tmp };
            let mut dst = out.slice_mut(jw..(nsets + 1) * jw);
            launch!(self, ck.to_jacobian, nsets, 64; src, &nsets32, &mut dst);
        }
        prof.mark("window_sums");
        // Sum of the bases whose scalar is 1.
        if n > 0 {
            let f: u32 = 64;
            let t = (n as u32).div_ceil(f);
            let mut a = self.alloc_u64(t as usize * xw, "ones partials")?;
            let mut b = self.alloc_u64((t as usize).div_ceil(32) * xw, "ones partials")?;
            launch!(self, ck.ones, t, 64; bases, &stride32, &bidx, &n32, &f, &mut a, &t);
            let mut len = t;
            let mut in_a = true;
            let one: u32 = 1;
            while len > 1 {
                let f2: u32 = len.min(32);
                let len2 = len.div_ceil(f2);
                if in_a {
                    launch!(self, ck.sum_groups, len2, 64; &a, &one, &len, &f2, &mut b, &len2);
                } else {
                    launch!(self, ck.sum_groups, len2, 64; &b, &one, &len, &f2, &mut a, &len2);
                }
                in_a = !in_a;
                len = len2;
            }
            let src = if in_a { &a } else { &b };
            let mut dst = out.slice_mut((nsets + 1) * jw..(nsets + 2) * jw);
            launch!(self, ck.to_jacobian, 1, 32; src, &one, &mut dst);
        }
        prof.mark("ones");
        let words = self
            .stream
            .clone_dtoh(&out)
            .map_err(|e| CudaError::launch("MSM", e))?;
        prof.mark("download");
        self.sync("MSM")?;
        prof.report(&format!(
            "{} MSM n={n} c={c} nwin={nwin} sets={nsets} copies={} L={l_chunk}/{l1}",
            if matches!(curve, Curve::G1) {
                "G1"
            } else {
                "G2"
            },
            table.copies,
        ));
        drop((
            d_scal,
            d_density,
            d_prefix,
            canon,
            bidx,
            counts,
            offsets_sets,
            cursor,
            entries_sets,
        ));
        drop(sort_stream);
        drop((tile_sums, tile_offsets, tile_cursor));
        drop((buckets, heads, heads2, segs, tmp));
        Ok((words, c))
    }
}

/// Number of terms an MSM actually has (included variables).
pub(crate) fn effective_terms(n: usize, density: Option<&[u64]>) -> usize {
    match density {
        None => n,
        Some(d) => {
            let mut acc = 0usize;
            for (i, w) in d.iter().enumerate() {
                if i * 64 >= n {
                    break;
                }
                let bits = if (i + 1) * 64 <= n {
                    *w
                } else {
                    w & ((1u64 << (n - i * 64)) - 1)
                };
                acc += bits.count_ones() as usize;
            }
            acc
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{first_pass_share, model_window_bits, pass_ranges, WindowPlan};

    #[test]
    fn copies_are_used_where_the_model_says_they_pay() {
        // a full table for 8-bit windows: one bucket set
        let p = WindowPlan::choose(1000, 32, 8);
        assert_eq!((p.c, p.nwin, p.wset, p.stride), (8, 32, 1, 32));
        // three copies: windows w, w + 11, w + 22 share a set
        let p = WindowPlan::choose(1000, 3, 8);
        assert_eq!((p.c, p.nwin, p.wset, p.stride), (8, 32, 11, 3));
        // copies for 16-bit windows do not pay for 5000 terms: plain windows
        // over copy 0 (stride 2)
        let p = WindowPlan::choose(5000, 2, 16);
        assert_eq!((p.wset, p.stride), (p.nwin, 2));
        assert!(p.c < 16);
        // plain bases
        let p = WindowPlan::choose(1 << 20, 1, 0);
        assert_eq!((p.c, p.wset, p.stride), (16, 16, 1));
    }

    #[test]
    fn pass_ranges_cover_the_scalars_in_order_on_64_boundaries() {
        for n in [1usize, 63, 64, 65, 1000, 4096, 1 << 20, (1 << 24) + 17] {
            for passes in 1..=5 {
                for share in [first_pass_share(passes), 0.5, 0.01, 1.0] {
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

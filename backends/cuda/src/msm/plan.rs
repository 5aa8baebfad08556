//! The plan's numbers, host arithmetic only (the rules themselves are in
//! msm_plan.rs). Before anything touches the device, `PassPlan` cuts the
//! scalars into passes from a window plan for every included scalar; after
//! the classification, `Sizes` derives from the final window plan what the
//! kernels and buffers need: buckets, bucket sets, chunk lengths of the
//! accumulation tree, segments of the bucket reduction and scan tiles.

use crate::msm_plan::{first_pass_share, msm_passes, pass_ranges, WindowPlan};
use crate::{CudaError, Layout, MsmOptions};

use super::{BaseTable, Scalars};

/// Bucket counts per block of the offsets scan (MSM_SCAN_TILE in pippenger.cuh).
const SCAN_TILE: usize = 4096;
/// Buckets a bin of the two-step sort of plain windows (kernels/msm/bins.cuh)
/// holds at most: 2^10, the counts its block scans.
const BIN_BITS: u32 = 10;
/// Bins a window has at least where its buckets allow (2^8): a block sorts a
/// bin, and a window's blocks should cover the device.
const MIN_BINS_LOG: u32 = 8;
/// Bins a shared histogram of msm_count_bins holds (MSM_BINS_SHARED).
pub(super) const BINS_SHARED: usize = 8192;
/// Words between the bins' fill cursors (MSM_BIN_PAD).
pub(super) const BIN_PAD: usize = 32;

/// The window plan for an MSM of `terms` scalars over this table.
pub(super) fn choose(terms: usize, table: BaseTable<'_>, options: &MsmOptions) -> WindowPlan {
    WindowPlan::choose(terms, table.copies, table.c, options.window_bits())
}

/// How the scalars are cut into passes, and the plan they are cut by.
pub(super) struct PassPlan {
    /// The scalars are already on the device.
    pub(super) on_device: bool,
    /// The scalars the density includes (all of them without one).
    pub(super) included: usize,
    /// The window plan for every included scalar.
    pub(super) first_plan: WindowPlan,
    /// Each pass's scalars lo..hi.
    pub(super) ranges: Vec<(usize, usize)>,
    /// Whether there are several passes.
    pub(super) multi: bool,
    /// The scalars of the longest pass.
    pub(super) m_max: usize,
}

impl PassPlan {
    pub(super) fn new(
        table: BaseTable<'_>,
        scalars: Scalars<'_>,
        included: usize,
        options: &MsmOptions,
        n: usize,
    ) -> Result<PassPlan, CudaError> {
        // Passes over parts of the scalars (see msm_passes): ranges of multiples
        // of 64 scalars, so that the density's words split cleanly. They hide
        // an upload, so scalars already on the device take one. Their number
        // comes from the plan for every included scalar; a single pass plans
        // again from the general scalars once they are classified.
        let on_device = matches!(scalars, Scalars::Device { .. });
        let first_plan = choose(included, table, options);
        let passes = if table.overlap_upload && !on_device {
            let nb = first_plan.wset as usize * (1usize << (first_plan.c - 1));
            msm_passes(options.passes(), n, nb)
        } else {
            1
        };
        let share = first_pass_share(options.first_pass_share(), passes);
        let ranges = pass_ranges(n, passes, share);
        let multi = ranges.len() > 1;
        let m_max = ranges.iter().map(|r| r.1 - r.0).max().unwrap_or(0);
        if first_plan.nwin as usize * n >= u32::MAX as usize {
            return Err(CudaError::InvalidInput(format!(
                "MSM of {n} terms is too large"
            )));
        }
        Ok(PassPlan {
            on_device,
            included,
            first_plan,
            ranges,
            multi,
            m_max,
        })
    }
}

/// The numbers the kernels and buffers are sized by, from the final plan.
#[derive(Clone, Copy)]
pub(super) struct Sizes {
    pub(super) plan: WindowPlan,
    /// The general scalars, where one pass counted them.
    pub(super) terms: Option<usize>,
    /// Words of a Jacobian and of an XYZZ point.
    pub(super) jw: usize,
    pub(super) xw: usize,
    /// Window size.
    pub(super) c: u32,
    /// Buckets per window.
    pub(super) k_per_win: usize,
    pub(super) nwin: usize,
    /// Bucket sets: what the reduction and the host see as windows.
    pub(super) nsets: usize,
    /// Buckets.
    pub(super) nb: usize,
    /// The sorted entries a pass may have.
    pub(super) pass_entries: usize,
    /// Chunk lengths of the accumulation tree: level 0, levels >= 1.
    pub(super) l_chunk: u32,
    pub(super) l1: u32,
    /// Chunks of level 0 a pass may have.
    pub(super) nchunks: usize,
    /// Buckets per thread of the running-sum reduction, and segments per
    /// bucket set.
    pub(super) seg: u32,
    pub(super) nseg: usize,
    /// Tiles of the offsets scan.
    pub(super) tiles: usize,
    /// Plain windows (a bucket set per window) sort through bins of
    /// 2^bin_bits buckets (kernels/msm/bins.cuh): `bins` of them, whose
    /// offsets take the buckets' place; a table's shared sets sort by bucket.
    pub(super) binned: bool,
    pub(super) bin_bits: u32,
    pub(super) bins: usize,
}

impl Sizes {
    /// Length of the offsets the sort leaves (without their total): bins or
    /// buckets; the accumulation reads the total after them.
    pub(super) fn offsets_len(&self) -> usize {
        self.bins
    }

    /// The sizes for `plan`, where `terms` is the general scalars' count (one
    /// pass) and m_max the scalars of the longest pass (several).
    pub(super) fn new(
        layout: Layout,
        plan: WindowPlan,
        terms: Option<usize>,
        n: usize,
        m_max: usize,
    ) -> Result<Sizes, CudaError> {
        let jw = layout.jac_words();
        let xw = layout.xyzz_words();
        let c = plan.c;
        let k_per_win = 1usize << (c - 1);
        let nwin = plan.nwin as usize;
        // bucket sets: what the reduction and the host see as windows
        let nsets = plan.wset as usize;
        let nb = nsets * k_per_win;
        // the general scalars a pass may have
        let pass_terms = terms.unwrap_or(m_max);
        let max_entries = nwin * terms.unwrap_or(n);
        // Chunk lengths of the accumulation tree: level 0 (points), levels >= 1
        // (partial sums). Small MSMs use short chunks so that tests exercise
        // several levels. Level 1 on has 8 partial sums a thread: with more, the
        // few threads of level 1 run long chains of full additions while the
        // rest of the GPU idles.
        let (l_chunk, l1): (u32, u32) = if max_entries >= 1 << 26 {
            (128, 8)
        } else if max_entries >= 1 << 22 {
            (64, 8)
        } else {
            (8, 4)
        };
        let pass_entries = nwin * pass_terms;
        if max_entries >= u32::MAX as usize {
            return Err(CudaError::InvalidInput(format!(
                "MSM of {n} terms is too large"
            )));
        }
        let nchunks = pass_entries.div_ceil(l_chunk as usize).max(1);
        // Buckets per thread of the running-sum reduction: each thread also
        // multiplies its segment's sum by the segment's first index (~1.5 c
        // additions), so long segments where there are buckets enough to keep
        // the device busy (c = 20: 64 -> 106 000 threads).
        let seg: u32 = (k_per_win as u32).min(if nb >= 1 << 22 { 64 } else { 32 });
        let nseg = k_per_win / seg as usize;
        let binned = nsets == nwin;
        let bin_bits = (c - 1).saturating_sub(MIN_BINS_LOG).min(BIN_BITS);
        let bins = if binned { nb >> bin_bits } else { nb };
        let tiles = nb.div_ceil(SCAN_TILE);
        Ok(Sizes {
            plan,
            terms,
            jw,
            xw,
            c,
            k_per_win,
            nwin,
            nsets,
            nb,
            pass_entries,
            l_chunk,
            l1,
            nchunks,
            seg,
            nseg,
            tiles,
            binned,
            bin_bits,
            bins,
        })
    }
}

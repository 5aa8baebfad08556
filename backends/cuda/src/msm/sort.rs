//! The sort of a pass's general scalars into buckets, so that the
//! accumulation reads each bucket's entries in one run. Plain windows (a
//! bucket set per window) sort in two steps through bins of buckets
//! (kernels/msm/bins.cuh): count each bin's entries (msm_count_bins), scan
//! the counts into the bins' offsets, then window by window write the
//! entries into their bins' runs (msm_scatter_bins) and each bin's entries
//! to their buckets' places (msm_sort_bins). A table's windows share bucket
//! sets, and sort by bucket: count each bucket's entries (msm_count_digits),
//! scan (msm_scan_tiles, msm_scan, msm_scan_apply), and scatter one entry
//! per scalar and window to its bucket's place (msm_scatter). All on the
//! sort stream, which with several passes runs beside the accumulation.

use cudarc::driver::CudaStream;
use std::sync::Arc;

use super::buffers::{Prepared, SortBuffers};
use super::passes::Pass;
use super::plan::{Sizes, BINS_SHARED};
use crate::msm_plan::scatter_windows;
use crate::profile::Profiler;
use crate::{CudaDevice, CudaError};

/// Threads of a block of the bin kernels (their shared memory is sized for it).
const BIN_BLOCK: u32 = 256;
/// Threads of a block of msm_sort_bins, one block a bin: a window's few large
/// bins (the top window's) are what its time goes to.
const SORT_BLOCK: u32 = 1024;
/// Scalars a block of msm_scatter_bins takes (MSM_BIN_ITEMS a thread).
const BIN_TILE: usize = 256 * 16;

impl CudaDevice {
    /// Counts the pass's entries per bin (plain windows) or per bucket.
    pub(super) fn count_digits(
        &self,
        ss: &Arc<CudaStream>,
        s: &Sizes,
        pass: &Pass,
        prep: &Prepared,
        sort: &mut SortBuffers,
    ) -> Result<(), CudaError> {
        let (lo, hi) = (pass.lo, pass.hi);
        let (m, m32) = (hi - lo, (hi - lo) as u32);
        let (c32, nwin32, wset32) = (s.c, s.nwin as u32, s.plan.wset);
        let bidx_pass = prep.bidx.slice(lo..hi);
        if !s.binned {
            launch_on!(ss, self.k.msm_count_digits, m, 256; &prep.canon, &bidx_pass, &m32, &c32, &nwin32, &wset32, &mut sort.counts);
            return Ok(());
        }
        // As many windows a launch as the shared histogram holds the bins of
        // (c = 20: all 13 windows, one read of the scalars), and enough blocks
        // to fill the device, each counting many scalars before it adds its
        // histogram to memory.
        let per_window = s.bins / s.nwin;
        let group = (BINS_SHARED / per_window).max(1) as u32;
        let blocks = m.div_ceil(16 * BIN_BLOCK as usize).clamp(1, 4096);
        let f32 = s.bin_bits;
        for w_lo in (0..nwin32).step_by(group as usize) {
            let w_hi = (w_lo + group).min(nwin32);
            launch_on!(ss, self.k.msm_count_bins, blocks * BIN_BLOCK as usize, BIN_BLOCK; &prep.canon, &bidx_pass, &m32, &c32, &f32, &w_lo, &w_hi, &mut sort.counts);
        }
        Ok(())
    }

    /// Scans the counts into the pass's offsets and sorts its entries into
    /// the pass's entries set.
    pub(super) fn sort_entries(
        &self,
        ss: &Arc<CudaStream>,
        s: &Sizes,
        pass: &Pass,
        prep: &Prepared,
        sort: &mut SortBuffers,
        prof: &mut Profiler<'_>,
    ) -> Result<(), CudaError> {
        let (lo, hi) = (pass.lo, pass.hi);
        let (m, m32) = (hi - lo, (hi - lo) as u32);
        let (c32, nwin32, wset32, stride32) = (s.c, s.nwin as u32, s.plan.wset, s.plan.stride);
        let len = s.offsets_len();
        let (len32, tiles) = (len as u32, len.div_ceil(4096));
        let tiles32 = tiles as u32;
        let bidx_pass = prep.bidx.slice(lo..hi);
        let offsets = &mut sort.offsets_sets[pass.set];
        let entries = &mut sort.entries_sets[pass.set];
        // Offsets: tile sums, their scan (one block), each tile's scan.
        launch_on!(ss, self.k.msm_scan_tiles, tiles * 1024, 1024; &sort.counts, &len32, &mut sort.tile_sums);
        launch_on!(ss, self.k.msm_scan, 1024, 1024; &sort.tile_sums, &tiles32, &mut sort.tile_offsets, &mut sort.tile_cursor);
        launch_on!(ss, self.k.msm_scan_apply, tiles * 1024, 1024; &sort.counts, &len32, &sort.tile_offsets, &mut *offsets, &mut sort.cursor);
        if !pass.multi() {
            prof.mark("scan");
        }
        let Some(bins) = sort.bins.as_mut() else {
            let per_launch = scatter_windows(s.nsets, s.nwin);
            for w_lo in (0..nwin32).step_by(per_launch as usize) {
                let w_hi = w_lo.saturating_add(per_launch).min(nwin32);
                launch_on!(ss, self.k.msm_scatter, m, 256; &prep.canon, &bidx_pass, &m32, &c32, &w_lo, &w_hi, &wset32, &stride32, &mut sort.cursor, &mut *entries);
            }
            return Ok(());
        };
        ss.memset_zeros(&mut bins.fill)
            .map_err(|e| CudaError::driver("bin cursors", e))?;
        let per_window = s.bins / s.nwin;
        let f32 = s.bin_bits;
        let tiles_m = m.div_ceil(BIN_TILE);
        for w in 0..nwin32 {
            launch_on!(ss, self.k.msm_scatter_bins, tiles_m * BIN_BLOCK as usize, BIN_BLOCK; &prep.canon, &bidx_pass, &m32, &c32, &f32, &w, &stride32, &*offsets, &mut bins.fill, &mut bins.window);
            launch_on!(ss, self.k.msm_sort_bins, per_window * SORT_BLOCK as usize, SORT_BLOCK; &bins.window, &*offsets, &c32, &f32, &w, &mut *entries);
        }
        Ok(())
    }
}

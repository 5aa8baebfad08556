//! The sort of a pass's general scalars into buckets: count each bucket's
//! entries (msm_count_digits), turn the counts into offsets with a scan over
//! tiles of buckets (msm_scan_tiles, msm_scan, msm_scan_apply), and scatter
//! one entry per scalar and window to its bucket's place (msm_scatter), so
//! that the accumulation reads each bucket's entries in one run. All on the
//! sort stream, which with several passes runs beside the accumulation.

use cudarc::driver::CudaStream;
use std::sync::Arc;

use super::buffers::{Prepared, SortBuffers};
use super::passes::Pass;
use super::plan::Sizes;
use crate::msm_plan::scatter_windows;
use crate::profile::Profiler;
use crate::{CudaDevice, CudaError};

/// Scalars a thread of msm_scatter sorts (MSM_SCATTER_SCALARS in pippenger.cuh).
const SCATTER_SCALARS: usize = 4;

impl CudaDevice {
    /// Counts the pass's entries per bucket into the counts.
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
        launch_on!(ss, self.k.msm_count_digits, m, 256; &prep.canon, &bidx_pass, &m32, &c32, &nwin32, &wset32, &mut sort.counts);
        Ok(())
    }

    /// Scans the counts into the pass's bucket offsets and scatters its
    /// entries into the pass's entries set.
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
        let (nsets, nwin, nb32, tiles) = (s.nsets, s.nwin, s.nb as u32, s.tiles);
        let tiles32 = tiles as u32;
        let bidx_pass = prep.bidx.slice(lo..hi);
        let offsets = &mut sort.offsets_sets[pass.set];
        let entries = &mut sort.entries_sets[pass.set];
        // Bucket offsets: tile sums, their scan (one block), each tile's scan.
        launch_on!(ss, self.k.msm_scan_tiles, tiles * 1024, 1024; &sort.counts, &nb32, &mut sort.tile_sums);
        launch_on!(ss, self.k.msm_scan, 1024, 1024; &sort.tile_sums, &tiles32, &mut sort.tile_offsets, &mut sort.tile_cursor);
        launch_on!(ss, self.k.msm_scan_apply, tiles * 1024, 1024; &sort.counts, &nb32, &sort.tile_offsets, &mut *offsets, &mut sort.cursor);
        if !pass.multi() {
            prof.mark("scan");
        }
        let per_launch = scatter_windows(nsets, nwin);
        for w_lo in (0..nwin32).step_by(per_launch as usize) {
            let w_hi = w_lo.saturating_add(per_launch).min(nwin32);
            launch_on!(ss, self.k.msm_scatter, m.div_ceil(SCATTER_SCALARS), 256; &prep.canon, &bidx_pass, &m32, &c32, &w_lo, &w_hi, &wset32, &stride32, &mut sort.cursor, &mut *entries);
        }
        Ok(())
    }
}

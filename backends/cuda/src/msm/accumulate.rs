//! The accumulation of a pass's sorted entries into buckets: the entries
//! are cut into equal chunks of l_chunk, one a thread (accumulate), so that
//! every thread does the same additions whatever the bucket sizes; a chunk
//! adds its runs to their buckets except its first, which becomes a partial
//! sum of the next level, and levels of l1 partial sums a thread
//! (accumulate_level) repeat this until one chunk remains. A pass after the
//! first accumulates into empty buckets of its own, and bucket_merge adds
//! them to the buckets one thread a bucket, where adding runs to filled
//! buckets inside the accumulation would make a warp's lanes diverge.

use super::buffers::{SortBuffers, SumBuffers};
use super::passes::Pass;
use super::Job;
use crate::profile::Profiler;
use crate::{CudaDevice, CudaError};

impl CudaDevice {
    /// Accumulates the pass's entries set into its target buckets, then runs
    /// the levels of partial sums.
    pub(super) fn accumulate(
        &self,
        job: &Job<'_>,
        pass: &Pass,
        sort: &SortBuffers,
        sums: &mut SumBuffers,
        prof: &mut Profiler<'_>,
    ) -> Result<(), CudaError> {
        let (ck, s) = (job.ck, &job.s);
        let (nwin, general, l_chunk, l1, nb32) =
            (s.nwin, pass.general, s.l_chunk, s.l1, s.nb as u32);
        let target = match sums.pass_buckets.as_mut() {
            Some(pb) if pass.p > 0 => pb,
            _ => &mut sums.buckets,
        };
        // The runs add to the buckets, which keep the earlier passes' sums.
        let chunks = (nwin * general).div_ceil(l_chunk as usize);
        let (entries, offsets) = (&sort.entries_sets[pass.set], &sort.offsets_sets[pass.set]);
        launch!(self, ck.accumulate, chunks, 128; &job.bases, entries, offsets, &nb32, &l_chunk, &mut *target, &mut sums.heads);
        prof.mark_pass(pass.p, pass.passes, "accumulate");
        // Levels of partial sums, while the previous level may have had
        // more than one chunk (the device skips levels past the last).
        let mut prev_max = nwin * general;
        let mut prev_l = l_chunk as usize;
        let mut level: u32 = 1;
        while prev_max > prev_l {
            let cur_max = prev_max.div_ceil(prev_l);
            let threads = cur_max.div_ceil(l1 as usize);
            if level % 2 == 1 {
                launch!(self, ck.accumulate_level, threads, 128; &sums.heads, entries, offsets, &nb32, &l_chunk, &l1, &level, &mut *target, &mut sums.heads2);
            } else {
                launch!(self, ck.accumulate_level, threads, 128; &sums.heads2, entries, offsets, &nb32, &l_chunk, &l1, &level, &mut *target, &mut sums.heads);
            }
            prev_max = cur_max;
            prev_l = l1 as usize;
            level += 1;
        }
        Ok(())
    }

    /// Adds a later pass's buckets to the buckets (see msm_bucket_merge).
    pub(super) fn merge_buckets(
        &self,
        job: &Job<'_>,
        sums: &mut SumBuffers,
    ) -> Result<(), CudaError> {
        let (ck, nb) = (job.ck, job.s.nb);
        let nb32 = nb as u32;
        if let Some(pb) = sums.pass_buckets.as_ref() {
            launch!(self, ck.bucket_merge, nb, 128; &mut sums.buckets, pb, &nb32);
        }
        Ok(())
    }
}

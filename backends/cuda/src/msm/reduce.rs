//! The reduction of the buckets to what the host folds: each thread sums a
//! segment of seg buckets by running sums (bucket_reduce), trees of
//! sum_groups add each bucket set's segment sums to its window sum, and
//! to_jacobian writes the window sums out; the bases whose scalar is 1 are
//! summed apart from their list (ones, the same tree). Then the output goes
//! down to the host.

use cudarc::driver::CudaSlice;

use super::buffers::SumBuffers;
use super::Job;
use crate::msm_plan::ones_threads;
use crate::profile::Profiler;
use crate::{CudaDevice, CudaError};

/// Partial sums a thread adds in each launch of the trees that reduce the
/// segment sums to window sums and the ones' partial sums to one point. These
/// launches have few threads, so their time is the chain of dependent full
/// additions: 1024 segments at 32 a thread are two launches of 32 additions
/// in a row, at 4 five launches of 4.
pub(super) const SUM_FAN_IN: u32 = 4;

impl CudaDevice {
    /// Reduces the buckets to the bucket sets' sums, into out[1..nsets + 1].
    pub(super) fn window_sums(
        &self,
        job: &Job<'_>,
        sums: &mut SumBuffers,
        prof: &mut Profiler<'_>,
    ) -> Result<(), CudaError> {
        let (ck, s) = (job.ck, &job.s);
        let (nsets, nseg, seg, jw) = (s.nsets, s.nseg, s.seg, s.jw);
        let (k32, nsets32) = (s.k_per_win as u32, nsets as u32);
        let fan_in = SUM_FAN_IN;
        launch!(self, ck.bucket_reduce, nsets * nseg, 64; &sums.buckets, &k32, &nsets32, &seg, &mut sums.segs);
        prof.mark("bucket_reduce");
        // Reduce each window's nseg segment sums to one point, fan_in at a
        // time.
        let mut len = nseg as u32;
        let mut src_is_segs = true;
        while len > 1 {
            let f: u32 = len.min(fan_in);
            let len2 = len.div_ceil(f);
            if src_is_segs {
                launch!(self, ck.sum_groups, nsets32 * len2, 64; &sums.segs, &nsets32, &len, &f, &mut sums.tmp, &len2);
            } else {
                launch!(self, ck.sum_groups, nsets32 * len2, 64; &sums.tmp, &nsets32, &len, &f, &mut sums.segs, &len2);
            }
            src_is_segs = !src_is_segs;
            len = len2;
        }
        {
            let src = if src_is_segs { &sums.segs } else { &sums.tmp };
            let mut dst = sums.out.slice_mut(jw..(nsets + 1) * jw);
            launch!(self, ck.to_jacobian, nsets, 64; src, &nsets32, &mut dst);
        }
        prof.mark("window_sums");
        Ok(())
    }

    /// Sums the bases whose scalar is 1 (at most `ones` of them), into the
    /// last point of out.
    pub(super) fn ones_sum(
        &self,
        job: &Job<'_>,
        ones: usize,
        one_bases: &CudaSlice<u32>,
        counters: &CudaSlice<u32>,
        out: &mut CudaSlice<u64>,
        prof: &mut Profiler<'_>,
    ) -> Result<(), CudaError> {
        let (ck, s) = (job.ck, &job.s);
        let (nsets, xw, jw, stride32) = (s.nsets, s.xw, s.jw, s.plan.stride);
        let fan_in = SUM_FAN_IN;
        // Sum of the bases whose scalar is 1, from their list.
        {
            let t = ones_threads(ones);
            let mut a = self.alloc_u64(t as usize * xw, "ones partials")?;
            let mut b =
                self.alloc_u64((t as usize).div_ceil(fan_in as usize) * xw, "ones partials")?;
            let count = counters.slice(1..2);
            launch!(self, ck.ones, t, 64; &job.bases, &stride32, one_bases, &count, &mut a, &t);
            let mut len = t;
            let mut in_a = true;
            let one: u32 = 1;
            while len > 1 {
                let f2: u32 = len.min(fan_in);
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
        Ok(())
    }

    /// Downloads the output words and waits for the MSM's end.
    pub(super) fn download(
        &self,
        out: &CudaSlice<u64>,
        prof: &mut Profiler<'_>,
    ) -> Result<Vec<u64>, CudaError> {
        let words = self
            .stream
            .clone_dtoh(out)
            .map_err(|e| CudaError::launch("MSM", e))?;
        prof.mark("download");
        self.sync("MSM")?;
        Ok(words)
    }
}

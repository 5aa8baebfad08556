//! The passes over parts of the scalars, each sorted and accumulated into the
//! buckets. With one pass everything runs on the backend's stream. With
//! several, the copy lane uploads each pass's scalars into one of two
//! buffers, the classification and sort run on a stream of their own and
//! the accumulation on the backend's stream; events order them, so that one
//! pass's upload and sort run beside the previous pass's accumulation. This
//! is the one place that orders the streams.

use cudarc::driver::{CudaEvent, CudaStream};
use std::sync::Arc;

use super::buffers::{Prepared, ScalarBuffers, SortBuffers, SumBuffers};
use super::Job;
use crate::profile::Profiler;
use crate::{CudaDevice, CudaError};

/// Pass p of `passes`: scalars lo..hi, sorted into entries set `set`.
pub(super) struct Pass {
    pub(super) p: usize,
    pub(super) passes: usize,
    pub(super) lo: usize,
    pub(super) hi: usize,
    pub(super) set: usize,
    /// the pass's general scalars: counted with one pass, at most m
    pub(super) general: usize,
}

impl Pass {
    pub(super) fn multi(&self) -> bool {
        self.passes > 1
    }
}

impl CudaDevice {
    /// Runs the passes; returns the sort stream (several passes), which the
    /// caller drops once the MSM is done.
    pub(super) fn run_passes(
        &self,
        job: &Job<'_>,
        sc: &mut ScalarBuffers<'_>,
        prep: &mut Prepared,
        sort: &mut SortBuffers,
        sums: &mut SumBuffers,
        prof: &mut Profiler<'_>,
    ) -> Result<Option<Arc<CudaStream>>, CudaError> {
        let (ranges, multi) = (&job.pp.ranges, job.pp.multi);
        let words = sc.words;
        let sets = sort.entries_sets.len();
        // Several passes: the scalars' preparation and sort run on a stream of
        // their own, so that pass p + 1's sort (memory and atomics) runs beside
        // pass p's accumulation (the multiplier) instead of after it; the
        // accumulation waits for its pass's sort, and a sort waits until the
        // accumulation two passes back has read the entries it overwrites.
        // The two kernels share the SMs rather than overlap inside them (the
        // accumulation's blocks fill the register file), so what is won is the
        // wait for the second pass's upload.
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
            let m = hi - lo;
            let pass = Pass {
                p,
                passes: ranges.len(),
                lo,
                hi,
                set: p % sets,
                general: job.s.terms.unwrap_or(m),
            };
            let slot = p % 2;
            let set = pass.set;
            if let Some(guard) = lane_guard.as_mut() {
                let lane = guard.as_mut().expect("copy lane initialised");
                if let Some(read) = &slot_read[slot] {
                    // only the prepare that read this buffer two passes ago, not
                    // every kernel enqueued since (joining the whole stream would
                    // hold this upload back until the previous pass is done)
                    wait(&lane.stream, read)?;
                }
                let mut dst = sc.d_scal[slot].slice_mut(0..4 * m);
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
                ss.memset_zeros(&mut sort.counts)
                    .map_err(|e| CudaError::driver("bucket counts", e))?;
                if let Some(pb) = sums.pass_buckets.as_mut() {
                    self.stream
                        .memset_zeros(pb)
                        .map_err(|e| CudaError::driver("pass buckets", e))?;
                }
            }
            if multi {
                let scal = sc.d_scal[slot].slice(0..4 * m);
                self.classify(ss, &scal, lo, hi, sc, prep)?;
            }
            self.count_digits(ss, &job.s, &pass, prep, sort)?;
            if multi {
                slot_read[slot] = Some(event(ss)?);
            }
            if !multi {
                prof.mark("prepare");
            }
            self.sort_entries(ss, &job.s, &pass, prep, sort, prof)?;
            if multi {
                // the time the accumulation waits for this pass's sort
                wait(&self.stream, &event(ss)?)?;
                prof.mark_pass(p, ranges.len(), "sort_wait");
            } else {
                prof.mark("scatter");
            }
            self.accumulate(job, &pass, sort, sums, prof)?;
            if multi {
                set_read[set] = Some(event(&self.stream)?);
            }
            prof.mark_pass(p, ranges.len(), "levels");
            if p > 0 {
                self.merge_buckets(job, sums)?;
                prof.mark_pass(p, ranges.len(), "merge");
            }
        }
        drop(lane_guard);
        Ok(sort_stream)
    }
}

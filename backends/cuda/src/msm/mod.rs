//! The device pass of a Pippenger MSM (kernels/msm/pippenger.cuh): upload and
//! prepare the scalars, sort them into buckets, accumulate, reduce, and return
//! the window sums for the host to fold. `device_msm` runs the phases in
//! order, one module each: the input checks (validate), the plan's numbers
//! (plan), the device buffers (buffers), the scalars' classification
//! (classify), the passes with their streams and events (passes), which sort
//! (sort) and accumulate (accumulate) each part of the scalars, and the
//! reduction of the buckets to window sums and the ones' sum (reduce).

mod accumulate;
mod buffers;
mod classify;
mod passes;
mod plan;
mod reduce;
mod sort;
mod validate;

use blst::blst_fr;
use cudarc::driver::{CudaSlice, CudaView};

use crate::profile::Profiler;
use crate::{host, CudaDevice, CudaError, CurveKernels, Layout, MsmOptions};
use plan::{PassPlan, Sizes};

/// Resident bases as the MSM reads them: `copies` points per base, base-major
/// (index b copies + k), copy k being 2^(c wset k) times the base, where wset
/// = ceil(ceil(256 / c) / copies). One copy: plain bases (c unused).
#[derive(Clone, Copy)]
pub(crate) struct BaseTable<'a> {
    pub buf: &'a CudaSlice<u64>,
    pub len: usize,
    pub copies: u32,
    pub c: u32,
    /// The MSM's first base: it reads bases first.. (of len), so that an input
    /// whose bases begin further in needs no shifted copy of its scalars.
    pub first: usize,
    /// Whether the MSM may upload its scalars on the copy lane beside its
    /// kernels (not while a streamed MSM's uploads hold the lane).
    pub overlap_upload: bool,
}

/// An MSM's scalars (blst_fr in Montgomery form): in host memory, uploaded
/// by the MSM, or already on the device (four words a scalar from `start`).
#[derive(Clone, Copy)]
pub(crate) enum Scalars<'a> {
    Host(&'a [blst_fr]),
    Device {
        buf: &'a CudaSlice<u64>,
        start: usize,
        len: usize,
    },
}

impl<'a> Scalars<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Device { len, .. } => *len,
        }
    }

    /// Scalars lo..hi of these.
    pub(crate) fn sub(&self, lo: usize, hi: usize) -> Scalars<'a> {
        match *self {
            Scalars::Host(s) => Scalars::Host(&s[lo..hi]),
            Scalars::Device { buf, start, len } => {
                assert!(lo <= hi && hi <= len, "scalars {lo}..{hi} of {len}");
                Scalars::Device {
                    buf,
                    start: start + lo,
                    len: hi - lo,
                }
            }
        }
    }
}

/// What the phases after the classification read: the group's kernels, the
/// bases from the MSM's first on, how the scalars are cut into passes and
/// the plan's numbers.
struct Job<'a> {
    ck: &'a CurveKernels,
    bases: CudaView<'a, u64>,
    pp: PassPlan,
    s: Sizes,
}

impl CudaDevice {
    /// Runs the device MSM; returns Jacobian words (a dummy point, the wset
    /// bucket sets' sums, then the sum of the bases whose scalar is 1) and the
    /// window size, by which the host weighs set s with 2^(c s).
    pub(crate) fn device_msm(
        &self,
        layout: Layout,
        table: BaseTable<'_>,
        scalars: Scalars<'_>,
        density: Option<&[u64]>,
        options: &MsmOptions,
    ) -> Result<(Vec<u64>, u32), CudaError> {
        let entered = std::time::Instant::now();
        let input = validate::inputs(layout, table, scalars, density)?;
        let n = input.n;
        let pp = PassPlan::new(table, scalars, input.included, options, n)?;
        let checked = std::time::Instant::now();

        let _g = self.guard();
        let locked = std::time::Instant::now();
        let mut prof = Profiler::entered(self, entered, &[("checks", checked), ("lock", locked)]);
        let ck = &self.k.g[layout.group as usize];
        let words = match scalars {
            Scalars::Host(s) => host::fr_as_u64s(s),
            Scalars::Device { .. } => &[][..],
        };
        let (mut sc, mut prep) = self.alloc_scalars(words, density, &input, &pp, &mut prof)?;
        // One pass: classify every scalar now, and plan from the general ones.
        let (plan, terms, ones) = if pp.multi {
            (pp.first_plan, None, None)
        } else {
            let (general, ones) = self.classify_all(scalars, n, &sc, &mut prep, &mut prof)?;
            (
                plan::choose(general, table, options),
                Some(general),
                Some(ones),
            )
        };
        let s = Sizes::new(layout, plan, terms, n, pp.m_max)?;
        let (mut sort, mut sums) = self.alloc_pass_buffers(&s, pp.multi)?;
        prof.mark("alloc");
        let job = Job {
            ck,
            bases: input.bases,
            pp,
            s,
        };

        let sort_stream =
            self.run_passes(&job, &mut sc, &mut prep, &mut sort, &mut sums, &mut prof)?;
        // The sort's buffers back to the pool for what follows (the stream
        // waited for the last sort; frees are ordered on this stream).
        drop((
            sc.d_scal,
            prep.canon,
            sort.counts,
            sort.offsets_sets,
            sort.cursor,
            sort.entries_sets,
        ));
        drop((sort.tile_sums, sort.tile_offsets, sort.tile_cursor));
        self.window_sums(&job, &mut sums, &mut prof)?;
        let ones = ones.unwrap_or(job.pp.included);
        self.ones_sum(
            &job,
            ones,
            &prep.one_bases,
            &prep.counters,
            &mut sums.out,
            &mut prof,
        )?;
        let words = self.download(&sums.out, &mut prof)?;
        let (c, nwin, nsets, l_chunk, l1) =
            (job.s.c, job.s.nwin, job.s.nsets, job.s.l_chunk, job.s.l1);
        prof.report(&format!(
            "{} MSM n={n} c={c} nwin={nwin} sets={nsets} copies={} L={l_chunk}/{l1}",
            layout.name, table.copies,
        ));
        drop((
            sc.d_density,
            sc.d_prefix,
            prep.bidx,
            prep.one_bases,
            prep.counters,
        ));
        drop(sort_stream);
        drop((sums.buckets, sums.heads, sums.heads2, sums.segs, sums.tmp));
        // last, in the order they went out of scope before the phases were split
        drop((sums.out, sums.pass_buckets));
        Ok((words, c))
    }
}

//! One device pass of an MSM over one chunk of its bases: the window sums
//! of its scalars (signed digits, a counting sort into buckets, the buckets
//! summed and reduced), or the partial sums of the bases whose scalar is 1;
//! and the scratch buffers the passes of an MSM reuse.

use blst::*;
use crossgroth_gpu_host::Curve;

use crate::device::{job, WgpuDevice};
use crate::error::WgpuError;
use crate::gpu::{params, Ctx, Step};
use crate::host;
use crate::msm_fold::MsmOut;
use crate::msm_plan::{window_bits, RanksRef, BALANCED_CHUNK};
use crate::shaders::Module;
use crate::submission::Submitted;

/// The sizes of one device pass of an MSM that keep each of its buffers
/// within the binding limit `lim` (bytes), for XYZZ points of `pt_bytes`.
/// The terms of one chunk of the bases always fit one pass: their scalars
/// (32 bytes each), ranks (4) and the accumulation's chunk sums (two points a
/// BALANCED_CHUNK terms) take less than the chunk's affine points.
#[derive(Debug, PartialEq)]
pub(crate) struct PassLimits {
    /// Largest window size: a window's buckets and counts must fit.
    pub c_max: u32,
    /// Most partial sums of the ones' pass besides the empty bucket 0.
    pub ones_sums_max: u64,
}

pub(crate) fn pass_limits(lim: u64, pt_bytes: u64, name: &str) -> Result<PassLimits, WgpuError> {
    // a window of 2^(c-1) buckets: its points, and two u32 counters a bucket
    let fits = |c: u32| {
        let nb = 1u64 << (c - 1);
        nb * pt_bytes <= lim && 8 * nb <= lim
    };
    if !fits(4) {
        return Err(WgpuError::OutOfMemory(format!(
            "{name} MSM: the 8 buckets of a window need {} bytes, over the storage binding limit of {lim} bytes",
            8 * pt_bytes
        )));
    }
    Ok(PassLimits {
        c_max: (4..=16u32).rev().find(|&c| fits(c)).unwrap_or(4),
        ones_sums_max: (lim / pt_bytes).min(lim / 8) - 1,
    })
}

/// The scalars of one windows pass.
#[derive(Clone, Copy)]
pub(crate) enum PassScalars<'a> {
    Host(&'a [blst_fr]),
    /// Runs (buffer, first element, elements) of a vector the device holds,
    /// copied one after another into the pass's scalars.
    Device(&'a [(&'a wgpu::Buffer, u64, u64)]),
}

impl PassScalars<'_> {
    pub fn len(&self) -> u64 {
        match self {
            PassScalars::Host(s) => s.len() as u64,
            PassScalars::Device(runs) => runs.iter().map(|r| r.2).sum(),
        }
    }
}

/// One chunk of an MSM's bases on the device, and the rank of its first base
/// (the kernels take it off the ranks they read).
#[derive(Clone, Copy)]
pub(crate) struct BasesChunk<'a> {
    pub points: &'a wgpu::Buffer,
    pub first_rank: u32,
}

/// Device buffers that an MSM's passes reuse from chunk to chunk and from
/// batch to batch of windows, grown where a pass needs more: a driver
/// allocation a window costs more than the window's kernels at Filecoin
/// sizes. Each is cleared before a batch uses it, as a fresh buffer is zero.
#[derive(Default)]
pub(crate) struct Scratch {
    bufs: std::collections::HashMap<&'static str, wgpu::Buffer>,
}

impl Scratch {
    /// Makes sure buffer `what` holds at least `bytes`.
    fn ensure(
        &mut self,
        ctx: &crate::gpu::Ctx,
        bytes: u64,
        what: &'static str,
    ) -> Result<(), WgpuError> {
        if self.bufs.get(what).is_none_or(|b| b.size() < bytes.max(16)) {
            // the old one goes first, so that the two never coexist
            self.bufs.remove(what);
            self.bufs.insert(what, ctx.storage(bytes, what)?);
        }
        Ok(())
    }

    fn get(&self, what: &'static str) -> Result<&wgpu::Buffer, WgpuError> {
        self.bufs
            .get(what)
            .ok_or_else(|| WgpuError::gpu(what, "scratch buffer not made"))
    }
}

/// Wall time of an MSM's host-side phases, for the log of a large one.
#[derive(Default)]
pub(crate) struct Phases {
    pub split: std::time::Duration,
    /// Streamed bases: chunks written, and converted on the device.
    pub written: std::time::Duration,
    pub converted: std::time::Duration,
    pub written_bytes: u64,
    /// The device passes, from their writes to their window sums read back.
    pub passes: std::time::Duration,
    /// Within the passes: scratch buffers made, and the scalars, ranks and
    /// ones' lists written (the rest is submissions, the device and reads).
    pub made: std::time::Duration,
    pub pass_writes: std::time::Duration,
    pub pass_written_bytes: u64,
}

impl Phases {
    /// Writes `words` into `buf`, timed as one of a pass's writes.
    pub fn write(
        &mut self,
        ctx: &crate::gpu::Ctx,
        buf: &wgpu::Buffer,
        words: &[u32],
        what: &str,
    ) -> Result<(), WgpuError> {
        let t = std::time::Instant::now();
        ctx.write(buf, words, what)?;
        self.pass_writes += t.elapsed();
        self.pass_written_bytes += 4 * words.len() as u64;
        Ok(())
    }
}

/// A pass queued on the device: its window sums (or the ones' sums) come
/// back in [`PendingPass::finish`], so that the next chunk's pass can be
/// prepared and queued while the device runs this one.
pub(crate) struct PendingPass {
    /// The window size, and the u32 words of one window's sums; None for a
    /// ones' pass, whose sums are read whole.
    windows: Option<(u32, usize)>,
    subs: Vec<Submitted>,
}

impl PendingPass {
    /// Waits for the pass's submissions and reads its sums.
    pub fn finish(self, ctx: &Ctx) -> Result<MsmOut, WgpuError> {
        let mut words = Vec::new();
        for sub in self.subs {
            sub.finish(ctx, &mut |_, _, w| words.extend_from_slice(w))?;
        }
        Ok(match self.windows {
            Some((c, n)) => MsmOut {
                c,
                windows: words.chunks(n).map(<[u32]>::to_vec).collect(),
                ones: Vec::new(),
            },
            None => MsmOut {
                c: 0,
                windows: Vec::new(),
                ones: words,
            },
        })
    }
}

/// How a pass reads and converts its group's XYZZ points.
struct PointWords {
    /// u32 words a coordinate and a point.
    fw: u64,
    pt_words: u64,
    /// The curve's module.
    m: Module,
    /// Device -> blst form, run in the curve's module (the same K for either
    /// field code: 2^384 mod p).
    kfrom: [u32; 12],
}

impl WgpuDevice {
    fn point_words<C: Curve>(&self) -> PointWords {
        let fw = 2 * C::FE_WORDS as u64;
        let m = Module::Curve(C::GROUP);
        PointWords {
            fw,
            pt_words: 4 * fw,
            m,
            kfrom: self.ctx.module_radix(m).fq_k_from_dev(),
        }
    }

    /// The window sums of the scalars `sc` over the bases of ranks `idx` in
    /// `chunk`, with windows of at most `c_max` bits: every batch of windows
    /// in one submission, with one read back.
    pub(crate) fn windows_pass<C: Curve>(
        &self,
        chunk: BasesChunk<'_>,
        idx: RanksRef<'_>,
        sc: PassScalars<'_>,
        c_max: u32,
        scratch: &mut Scratch,
        phases: &mut Phases,
    ) -> Result<PendingPass, WgpuError> {
        let (bases, first_rank) = (chunk.points, chunk.first_rank);
        let PointWords {
            fw,
            pt_words,
            m,
            kfrom,
        } = self.point_words::<C>();
        let n = sc.len();
        let c = window_bits(n).min(c_max);
        // Listed ranks go up to the device; consecutive ones the scatter
        // counts from the first (parameters 6 and 7), and runs of strided
        // ones from a table of their starts (parameters 6 and 8).
        let (listed, mode): (std::borrow::Cow<'_, [u32]>, [u32; 3]) = match idx {
            RanksRef::Listed(ranks) => (ranks.into(), [0, 0, 0]),
            RanksRef::From(rank) => ((&[][..]).into(), [1, rank - first_rank, 0]),
            RanksRef::Runs { stride, ranks } => (
                ranks
                    .iter()
                    .flat_map(|&(at, rank)| [at, rank - first_rank])
                    .collect(),
                [stride, 0, ranks.len() as u32],
            ),
        };
        // signed digits: 2^(c-1) buckets a window, and one window more than
        // 255 / c to take the last carry
        let nb = 1u64 << (c - 1);
        let windows = 255 / c + 1;
        let t_per = (nb / 32).max(1);
        // Bound the buffers of one batch of windows.
        let cap = self.ctx.binding.min(1 << 28);
        // the buckets are summed in equal chunks of sorted entries
        let chunks = n.div_ceil(BALANCED_CHUNK);
        let partial_bytes = 2 * chunks * pt_words * 4;
        let per_win = (n * 8)
            .max(nb * pt_words * 4)
            .max(2 * nb * 4)
            .max(partial_bytes);
        let batch = (cap / per_win).clamp(1, windows as u64);
        let res_words = t_per * pt_words;
        // Windows a submission: as many batches as the read-back buffer of
        // their sums can hold within one binding.
        let per_read = ((self.ctx.binding / (res_words * 4)) / batch).max(1) * batch;
        for (what, bytes) in [
            ("msm scalars", n * 32),
            ("msm indices", listed.len() as u64 * 4),
            ("msm counts", 2 * batch * nb * 4),
            ("msm sorted", batch * n * 4),
            ("msm digits", batch * n * 4),
            ("msm buckets", batch * nb * pt_words * 4),
            ("msm batch sums", batch * res_words * 4),
            ("msm chunk sums", batch * partial_bytes),
            (
                "msm window sums",
                per_read.min(windows.into()) * res_words * 4,
            ),
        ] {
            let t = std::time::Instant::now();
            scratch.ensure(&self.ctx, bytes, what)?;
            phases.made += t.elapsed();
        }
        let buf = |what| scratch.get(what);
        let (scal, ib) = (buf("msm scalars")?, buf("msm indices")?);
        phases.write(&self.ctx, ib, &listed, "msm indices")?;
        let mut steps = vec![];
        match sc {
            PassScalars::Host(sc) => {
                phases.write(&self.ctx, scal, host::fr_as_words(sc), "msm scalars")?
            }
            PassScalars::Device(runs) => {
                let mut at = 0;
                for &(src, from, len) in runs {
                    steps.push(Step::Copy {
                        src,
                        from: 32 * from,
                        dst: scal,
                        at,
                        bytes: 32 * len,
                    });
                    at += 32 * len;
                }
            }
        }
        let (counts, sorted, digits) = (buf("msm counts")?, buf("msm sorted")?, buf("msm digits")?);
        let (buckets, res, partials) = (
            buf("msm buckets")?,
            buf("msm batch sums")?,
            buf("msm chunk sums")?,
        );
        let all = buf("msm window sums")?;
        let kc = self.ctx.radix.fr_k_canonical();
        steps.push(Step::Run(job(
            Module::Fr,
            "fr_mul_const",
            params(&[n as u32], &kc),
            &[(1, scal)],
            n,
        )));
        let mut subs = Vec::new();
        let mut first = 0u32;
        while first < windows {
            let upto = (u64::from(first) + per_read).min(windows.into()) as u32;
            let mut w0 = first;
            while w0 < upto {
                let nw = batch.min(u64::from(upto - w0));
                steps.extend([counts, sorted, digits, buckets, res, partials].map(Step::Clear));
                let head = [n as u32, c, nb as u32, w0, nw as u32, first_rank];
                let sp = params(&[&head[..], &mode[..2]].concat(), &mode[2..]);
                let balanced_params = |mode: u32| {
                    let (l, nc) = (BALANCED_CHUNK as u32, chunks as u32);
                    params(&[n as u32, nb as u32, nw as u32, l, nc, mode], &[])
                };
                let jobs = [
                    job(Module::Sort, "msm_digits", sp, &[(1, scal), (5, digits)], n),
                    job(Module::Sort, "msm_hist", sp, &[(3, counts), (5, digits)], n),
                    job(Module::Sort, "msm_scan", sp, &[(3, counts)], nw),
                    job(
                        Module::Sort,
                        "msm_scatter",
                        sp,
                        &[(2, ib), (3, counts), (4, sorted), (5, digits)],
                        n,
                    ),
                    job(
                        m,
                        "msm_acc_balanced",
                        balanced_params(2),
                        &[
                            (1, bases),
                            (2, sorted),
                            (3, counts),
                            (4, buckets),
                            (5, partials),
                        ],
                        nw * chunks,
                    ),
                    job(
                        m,
                        "msm_acc_balanced",
                        balanced_params(3),
                        &[(3, counts), (4, buckets), (5, partials)],
                        nw * nb,
                    ),
                    job(
                        m,
                        "msm_acc",
                        params(&[0, nb as u32, nw as u32, t_per as u32, 0, 1], &[]),
                        &[(4, buckets), (5, res)],
                        nw * t_per,
                    ),
                    job(
                        m,
                        "fq_mul_const",
                        params(&[(nw * t_per * 4 * fw / 12) as u32], &kfrom),
                        &[(1, res)],
                        nw * t_per * 4 * fw / 12,
                    ),
                ];
                steps.extend(jobs.map(Step::Run));
                steps.push(Step::Copy {
                    src: res,
                    from: 0,
                    dst: all,
                    at: u64::from(w0 - first) * res_words * 4,
                    bytes: nw * res_words * 4,
                });
                w0 += nw as u32;
            }
            let reads = [(all, 0, u64::from(upto - first) * res_words)];
            subs.push(self.ctx.submit_steps("msm", &steps, &reads)?);
            steps.clear();
            first = upto;
        }
        Ok(PendingPass {
            windows: Some((c, res_words as usize)),
            subs,
        })
    }

    /// Partial sums of the bases of ranks `ones` (the scalars 1) in `chunk`,
    /// at most `sums_max` of them (besides the empty bucket 0).
    pub(crate) fn ones_pass<C: Curve>(
        &self,
        chunk: BasesChunk<'_>,
        ones: &[u32],
        sums_max: u64,
        scratch: &mut Scratch,
        phases: &mut Phases,
    ) -> Result<PendingPass, WgpuError> {
        let (bases, first_rank) = (chunk.points, chunk.first_rank);
        let PointWords {
            fw,
            pt_words,
            m,
            kfrom,
        } = self.point_words::<C>();
        let n1 = ones.len() as u64;
        let l = n1.div_ceil(8192).max(16).max(n1.div_ceil(sums_max));
        let t = n1.div_ceil(l);
        // Bucket accumulation over host-made "buckets" 1..=t, each a chunk
        // of the list (bucket 0 stays the identity).
        let nb1 = t + 1;
        let mut cnt = vec![0u32; 2 * nb1 as usize];
        for d in 1..=t {
            let beg = (d - 1) * l;
            let end = (beg + l).min(n1);
            cnt[d as usize] = (end - beg) as u32;
            cnt[(nb1 + d) as usize] = end as u32;
        }
        // Every word the kernels read is written here (each sum is stored),
        // so the buffers of an earlier chunk serve as they are.
        for (what, bytes) in [
            ("msm ones", n1 * 4),
            ("msm ones chunks", cnt.len() as u64 * 4),
            ("msm ones sums", nb1 * pt_words * 4),
        ] {
            let t = std::time::Instant::now();
            scratch.ensure(&self.ctx, bytes, what)?;
            phases.made += t.elapsed();
        }
        let (lb, cb, res) = (
            scratch.get("msm ones")?,
            scratch.get("msm ones chunks")?,
            scratch.get("msm ones sums")?,
        );
        phases.write(&self.ctx, lb, ones, "msm ones")?;
        phases.write(&self.ctx, cb, &cnt, "msm ones chunks")?;
        let jobs = [
            job(
                m,
                "msm_acc",
                params(&[n1 as u32, nb1 as u32, 1, 0, first_rank, 0], &[]),
                &[(1, bases), (2, lb), (3, cb), (4, res)],
                nb1,
            ),
            job(
                m,
                "fq_mul_const",
                params(&[(nb1 * 4 * fw / 12) as u32], &kfrom),
                &[(1, res)],
                nb1 * 4 * fw / 12,
            ),
        ];
        let steps = jobs.map(Step::Run);
        let sub = self
            .ctx
            .submit_steps("msm ones", &steps, &[(res, 0, nb1 * pt_words)])?;
        Ok(PendingPass {
            windows: None,
            subs: vec![sub],
        })
    }
}

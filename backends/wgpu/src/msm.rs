//! Pippenger MSM, written once for both groups (shaders/msm/): the host
//! splits off scalars 0 and 1, the device cuts signed digits, sorts them into
//! buckets, sums and reduces the buckets, and the host folds the window sums.
//! An H the device holds ([`DeviceH`]) is read there, all of it through the
//! buckets.

use std::any::Any;

use blst::*;
use crossgroth_gpu_host::{Curve, Group, G1, G2};

use crate::device::{job, Bases, Store, WgpuDevice};
use crate::error::WgpuError;
use crate::gpu::{params, Step};
use crate::host;
use crate::msm_plan::{positions, split_scalars, window_bits, RanksRef, Split, BALANCED_CHUNK};
use crate::ntt::DeviceH;
use crate::ntt_chunks::rev;
use crate::shaders::Module;

/// What the device returns for one MSM: per window, T XYZZ points whose sum
/// is the window sum; partial sums of the bases with scalar 1.
struct MsmOut {
    c: u32,
    windows: Vec<Vec<u32>>,
    ones: Vec<u32>,
}

/// The host's arithmetic on a group's points, for the fold of the device's
/// window sums and the setup's normalisation: blst's base field and point
/// types, one impl a group, so that the conversion and the fold are written
/// once.
pub(crate) trait HostPoints: Curve {
    /// Fq or Fq2 (blst Montgomery form).
    type Fe: Copy;
    /// One field element from its 2 * FE_WORDS u32 words.
    fn fe(words: &[u32]) -> Self::Fe;
    fn mul(a: &Self::Fe, b: &Self::Fe) -> Self::Fe;
    fn sqr(a: &Self::Fe) -> Self::Fe;
    /// The Jacobian point (x, y, z).
    fn jacobian(x: Self::Fe, y: Self::Fe, z: Self::Fe) -> Self::Point;
    /// acc += p.
    fn add(acc: &mut Self::Point, p: &Self::Point);
    /// `out[i]` = `points[i]` in affine form, with one batched inversion
    /// (identities as (0, 0)).
    fn to_affine(points: &[Self::Point], out: &mut [Self::Affine]);
}

impl HostPoints for G1 {
    type Fe = blst_fp;
    fn fe(w: &[u32]) -> blst_fp {
        host::words_to_fp(w)
    }
    fn mul(a: &blst_fp, b: &blst_fp) -> blst_fp {
        let mut r = blst_fp::default();
        // SAFETY: valid field elements in, r out.
        unsafe { blst_fp_mul(&mut r, a, b) };
        r
    }
    fn sqr(a: &blst_fp) -> blst_fp {
        let mut r = blst_fp::default();
        // SAFETY: as above.
        unsafe { blst_fp_sqr(&mut r, a) };
        r
    }
    fn jacobian(x: blst_fp, y: blst_fp, z: blst_fp) -> blst_p1 {
        blst_p1 { x, y, z }
    }
    fn add(acc: &mut blst_p1, p: &blst_p1) {
        // SAFETY: valid points in; blst allows the output to alias an input.
        unsafe { blst_p1_add_or_double(acc, acc, p) }
    }
    fn to_affine(points: &[blst_p1], out: &mut [blst_p1_affine]) {
        let n = points.len().min(out.len());
        if n > 0 {
            // blst walks a contiguous array when the second pointer is null.
            let ptrs = [points.as_ptr(), std::ptr::null()];
            // SAFETY: n points in one array, room for n affine points.
            unsafe { blst_p1s_to_affine(out.as_mut_ptr(), ptrs.as_ptr(), n) };
        }
    }
}

impl HostPoints for G2 {
    type Fe = blst_fp2;
    fn fe(w: &[u32]) -> blst_fp2 {
        blst_fp2 {
            fp: [host::words_to_fp(&w[0..12]), host::words_to_fp(&w[12..24])],
        }
    }
    fn mul(a: &blst_fp2, b: &blst_fp2) -> blst_fp2 {
        let mut r = blst_fp2::default();
        // SAFETY: valid field elements in, r out.
        unsafe { blst_fp2_mul(&mut r, a, b) };
        r
    }
    fn sqr(a: &blst_fp2) -> blst_fp2 {
        let mut r = blst_fp2::default();
        // SAFETY: as above.
        unsafe { blst_fp2_sqr(&mut r, a) };
        r
    }
    fn jacobian(x: blst_fp2, y: blst_fp2, z: blst_fp2) -> blst_p2 {
        blst_p2 { x, y, z }
    }
    fn add(acc: &mut blst_p2, p: &blst_p2) {
        // SAFETY: valid points in; blst allows the output to alias an input.
        unsafe { blst_p2_add_or_double(acc, acc, p) }
    }
    fn to_affine(points: &[blst_p2], out: &mut [blst_p2_affine]) {
        let n = points.len().min(out.len());
        if n > 0 {
            // blst walks a contiguous array when the second pointer is null.
            let ptrs = [points.as_ptr(), std::ptr::null()];
            // SAFETY: n points in one array, room for n affine points.
            unsafe { blst_p2s_to_affine(out.as_mut_ptr(), ptrs.as_ptr(), n) };
        }
    }
}

/// XYZZ (blst Montgomery form) -> Jacobian: (X ZZ^2, Y ZZZ^2, ZZZ).
pub(crate) fn of_xyzz<H: HostPoints>(w: &[u32]) -> H::Point {
    let fw = 2 * H::FE_WORDS;
    let fe = |i: usize| H::fe(&w[i * fw..(i + 1) * fw]);
    let (x, y, zz, zzz) = (fe(0), fe(1), fe(2), fe(3));
    H::jacobian(H::mul(&x, &H::sqr(&zz)), H::mul(&y, &H::sqr(&zzz)), zzz)
}

/// The MSM from the device's output: Σ_w 2^(c w) (sum of window w's points),
/// plus the ones' partial sums. The window sums, ~2^(c-6) point additions
/// each, run on several host threads (they are the fold's bulk); then c
/// doublings a window, highest window first.
fn fold<H: HostPoints>(out: &MsmOut) -> H::Point {
    let add = H::add;
    let sum = |words: &[u32]| {
        let mut acc = H::Point::default();
        for w in words.chunks_exact(8 * H::FE_WORDS) {
            add(&mut acc, &of_xyzz::<H>(w));
        }
        acc
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(out.windows.len())
        .max(1);
    let per = out.windows.len().div_ceil(threads).max(1);
    let mut sums = vec![H::Point::default(); out.windows.len()];
    std::thread::scope(|sc| {
        for (dst, src) in sums.chunks_mut(per).zip(out.windows.chunks(per)) {
            sc.spawn(move || {
                for (d, w) in dst.iter_mut().zip(src) {
                    *d = sum(w);
                }
            });
        }
    });
    let mut acc = H::Point::default();
    for s in sums.iter().rev() {
        for _ in 0..out.c {
            let a = acc;
            add(&mut acc, &a);
        }
        add(&mut acc, s);
    }
    add(&mut acc, &sum(&out.ones));
    acc
}

/// The sum of the passes' MSMs (an MSM is linear: the passes over chunks of
/// the bases and pieces of the scalars add up to the whole).
fn fold_all<H: HostPoints>(outs: &[MsmOut]) -> H::Point {
    let mut acc = H::Point::default();
    for out in outs {
        H::add(&mut acc, &fold::<H>(out));
    }
    acc
}

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

/// Where an MSM reads its bases' chunks from.
enum Source<'a, T> {
    Resident(&'a [wgpu::Buffer]),
    /// Each chunk copied into `window` in turn.
    Streamed {
        points: &'a [T],
        window: wgpu::Buffer,
    },
}

/// Where an MSM's terms come from.
enum Terms<'a> {
    /// The host's scalars, split there.
    Host(Split<'a>),
    /// H on the device, coefficient i paired with base `first + i`.
    DeviceH { h: &'a DeviceH, first: u64 },
}

/// The scalars of one windows pass.
#[derive(Clone, Copy)]
enum PassScalars<'a> {
    Host(&'a [blst_fr]),
    /// Runs (buffer, first element, elements) of a vector the device holds,
    /// copied one after another into the pass's scalars.
    Device(&'a [(&'a wgpu::Buffer, u64, u64)]),
}

impl PassScalars<'_> {
    fn len(&self) -> u64 {
        match self {
            PassScalars::Host(s) => s.len() as u64,
            PassScalars::Device(runs) => runs.iter().map(|r| r.2).sum(),
        }
    }
}

/// The runs of H's coefficients paired with the bases of ranks lo..hi, H's
/// coefficient i pairing with base `first + i`: per buffer of H, one run of
/// consecutive elements (buffer, first element, elements) and the ranks
/// they pair with, (position in the pass, rank of its first), stepping by the
/// buffer count (the transposed layout; 1 for H in one buffer).
#[allow(clippy::type_complexity)]
fn h_runs(
    h: &DeviceH,
    first: u64,
    lo: u64,
    hi: u64,
) -> (Vec<(&wgpu::Buffer, u64, u64)>, Vec<(u32, u32)>) {
    let k = h.bufs.len() as u64;
    let kl = k.ilog2();
    // coefficients lo - first .. hi - first, within H
    let (ilo, ihi) = (
        lo.saturating_sub(first),
        hi.saturating_sub(first).min(h.len() as u64),
    );
    let (mut runs, mut ranks) = (Vec::new(), Vec::new());
    let mut at = 0u64;
    for (a, buf) in h.bufs.iter().enumerate() {
        // buffer a holds coefficients p + k q
        let p = rev(a, kl) as u64;
        let q = |i: u64| i.saturating_sub(p).div_ceil(k);
        let (qlo, qhi) = (q(ilo), q(ihi));
        if qlo < qhi {
            runs.push((buf, qlo, qhi - qlo));
            ranks.push((at as u32, (first + p + k * qlo) as u32));
            at += qhi - qlo;
        }
    }
    (runs, ranks)
}

/// One chunk of an MSM's bases on the device, and the rank of its first base
/// (the kernels take it off the ranks they read).
#[derive(Clone, Copy)]
struct BasesChunk<'a> {
    points: &'a wgpu::Buffer,
    first_rank: u32,
}

/// Device buffers that an MSM's passes reuse from chunk to chunk and from
/// batch to batch of windows, grown where a pass needs more: a driver
/// allocation a window costs more than the window's kernels at Filecoin
/// sizes. Each is cleared before a batch uses it, as a fresh buffer is zero.
#[derive(Default)]
struct Scratch {
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
struct Phases {
    split: std::time::Duration,
    /// Streamed bases: chunks written, and converted on the device.
    written: std::time::Duration,
    converted: std::time::Duration,
    written_bytes: u64,
    /// The device passes, from their writes to their window sums read back.
    passes: std::time::Duration,
    /// Within the passes: scratch buffers made, and the scalars, ranks and
    /// ones' lists written (the rest is submissions, the device and reads).
    made: std::time::Duration,
    pass_writes: std::time::Duration,
    pass_written_bytes: u64,
}

impl Phases {
    /// Writes `words` into `buf`, timed as one of a pass's writes.
    fn write(
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

/// MSMs of at least this many scalars log where their time went.
const LOGGED_MSM_TERMS: usize = 1 << 22;

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

/// `value` as the type `U` that it is: a group's blst point named through
/// `Curve::Point`. None for another type (a `Curve` impl with other types).
fn same_type<T: 'static, U: Copy + 'static>(value: T) -> Option<U> {
    (&value as &dyn Any).downcast_ref::<U>().copied()
}

impl WgpuDevice {
    // ------------------------------------------------------------- MSM

    /// Σ scalars[i] · bases[first + rank(i)] over group `C`.
    ///
    /// Without a density, rank(i) = i and `scalars.len() <= bases.len() -
    /// first`. With a density bitmap (bit i of word i / 64 set = variable i
    /// included), `scalars` holds one value per variable, variables whose bit
    /// is clear are skipped, and an included variable uses base number
    /// first + rank(i), rank(i) = number of included variables before i
    /// (bellperson's layout). The bitmap must cover `scalars.len()` bits; bits
    /// beyond it are ignored. `first` lets the part of an assignment whose
    /// bases follow another part's use them without a copy of its scalars.
    /// Scalars are blst_fr in Montgomery form; scalars 0 and 1 never reach
    /// the buckets.
    pub fn msm<C: Curve>(
        &self,
        bases: &Bases<C>,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<C::Point, WgpuError> {
        self.msm_of(bases, scalars.len(), |phases| {
            let t = std::time::Instant::now();
            let split = split_scalars(scalars, density, bases.len, first)?;
            phases.split = t.elapsed();
            self.window_sums(bases, Terms::Host(split), phases)
        })
    }

    /// Σ H[i] · bases[first + i] over an H the device holds
    /// ([`Self::compute_h_on_device`]): [`Self::msm`] of its coefficients
    /// without reading them back or sending them up again.
    pub fn msm_h<C: Curve>(
        &self,
        bases: &Bases<C>,
        first: usize,
        h: &DeviceH,
    ) -> Result<C::Point, WgpuError> {
        self.check_owner(h)?;
        if first.checked_add(h.len()).is_none_or(|n| n > bases.len) {
            return Err(WgpuError::InvalidInput(format!(
                "msm: {} coefficients of H from base {first} of {}",
                h.len(),
                bases.len
            )));
        }
        let first = first as u64;
        self.msm_of(bases, h.len(), |phases| {
            self.window_sums(bases, Terms::DeviceH { h, first }, phases)
        })
    }

    /// An MSM of `terms` scalars whose window sums `sums` makes: their fold,
    /// and a log line of where a large one's time went.
    fn msm_of<C: Curve>(
        &self,
        bases: &Bases<C>,
        terms: usize,
        sums: impl FnOnce(&mut Phases) -> Result<Vec<MsmOut>, WgpuError>,
    ) -> Result<C::Point, WgpuError> {
        if bases.owner != self.id {
            return Err(WgpuError::InvalidInput(format!(
                "msm: the {} bases were uploaded by another backend",
                C::NAME
            )));
        }
        let began = std::time::Instant::now();
        let device_before = self.ctx.clock.so_far();
        let mut phases = Phases::default();
        let outs = sums(&mut phases)?;
        let folded = std::time::Instant::now();
        let sum = match C::GROUP {
            Group::G1 => same_type(fold_all::<G1>(&outs)),
            Group::G2 => same_type(fold_all::<G2>(&outs)),
        };
        if terms >= LOGGED_MSM_TERMS {
            // Where a large MSM's time goes (device time where it is being
            // timed), for whoever tunes this path.
            let device = match (device_before, self.ctx.clock.so_far()) {
                (Some(before), Some(now)) if self.ctx.timestamps => {
                    let ns = now.saturating_sub(before);
                    format!("{:.2} s of it on the device", ns as f64 / 1e9)
                }
                _ => "device time not measured".into(),
            };
            let streamed = match bases.is_streamed() {
                true => format!(
                    "; bases: {:.1} GB written in {:.2} s, converted in {:.2} s",
                    phases.written_bytes as f64 / 1e9,
                    phases.written.as_secs_f64(),
                    phases.converted.as_secs_f64()
                ),
                false => String::new(),
            };
            log::info!(
                "wgpu: {} MSM of {} scalars over {} {} bases in {:.2} s, {device}; \
                 split {:.2} s, passes {:.2} s (buffers made in {:.2} s, {:.2} GB written \
                 in {:.2} s), fold {:.2} s{streamed}",
                C::NAME,
                terms,
                bases.len,
                if bases.is_streamed() {
                    "streamed"
                } else {
                    "resident"
                },
                began.elapsed().as_secs_f64(),
                phases.split.as_secs_f64(),
                phases.passes.as_secs_f64(),
                phases.made.as_secs_f64(),
                phases.pass_written_bytes as f64 / 1e9,
                phases.pass_writes.as_secs_f64(),
                folded.elapsed().as_secs_f64(),
            );
        }
        sum.ok_or_else(|| {
            WgpuError::InvalidInput(format!("msm: the {} point type is not blst's", C::NAME))
        })
    }

    /// The device part of [`Self::msm`]: per chunk of the bases, one pass
    /// for its window sums and one for the sums of its ones (scalars 1).
    fn window_sums<C: Curve>(
        &self,
        bases: &Bases<C>,
        terms: Terms<'_>,
        phases: &mut Phases,
    ) -> Result<Vec<MsmOut>, WgpuError> {
        let pt_bytes = 4 * 2 * C::FE_WORDS as u64 * 4;
        let pl = pass_limits(self.ctx.binding, pt_bytes, C::NAME)?;
        let _g = self.lock()?;
        let mut outs = Vec::new();
        let mut scratch = Scratch::default();
        // Streamed bases: one window of a chunk's points, refilled for each
        // chunk that has terms.
        let source = match &bases.store {
            Store::Device(chunks) => Source::Resident(chunks),
            Store::Host(host) => Source::Streamed {
                points: (**host).as_ref(),
                window: self.ctx.storage(
                    (bases.per_chunk.min(bases.len) * C::AFFINE_BYTES) as u64,
                    "streamed bases window",
                )?,
            },
        };
        // The ranks ascend, so a chunk's terms are one range of idx and one
        // of ones (of H: one run a buffer of it).
        let per = bases.per_chunk as u64;
        for k in 0..bases.chunk_count() {
            let (lo, hi) = (k as u64 * per, (k as u64 + 1) * per);
            let (host_terms, units, h_runs) = match &terms {
                Terms::Host(split) => (
                    split.idx.positions(lo, hi),
                    positions(&split.ones, lo, hi),
                    (vec![], vec![]),
                ),
                Terms::DeviceH { h, first } => (0..0, 0..0, h_runs(h, *first, lo, hi)),
            };
            if host_terms.is_empty() && units.is_empty() && h_runs.0.is_empty() {
                continue;
            }
            let buf = match &source {
                Source::Streamed { points, window } => {
                    let points = &points[lo as usize..(hi as usize).min(bases.len)];
                    self.fill_window::<C>(window, points, phases)?;
                    window
                }
                Source::Resident(chunks) => chunks.get(k).ok_or_else(|| {
                    WgpuError::InvalidInput(format!(
                        "msm: chunk {k} of {} {} bases is missing",
                        chunks.len(),
                        C::NAME
                    ))
                })?,
            };
            let t = std::time::Instant::now();
            // The ranks go up as they are; the kernels take the chunk's
            // first rank off.
            let chunk = BasesChunk {
                points: buf,
                first_rank: lo as u32,
            };
            let mut pass = |ix, sc, phases: &mut Phases| {
                let pass = self.windows_pass::<C>(chunk, ix, sc, pl.c_max, &mut scratch, phases);
                outs.push(pass?);
                Ok::<_, WgpuError>(())
            };
            if let Terms::Host(split) = &terms {
                if !host_terms.is_empty() {
                    let ix = split.idx.part(host_terms.clone());
                    pass(ix, PassScalars::Host(&split.sc[host_terms]), phases)?;
                }
            }
            if !h_runs.0.is_empty() {
                let (runs, ranks) = &h_runs;
                let stride = match &terms {
                    Terms::DeviceH { h, .. } => h.bufs.len() as u32,
                    Terms::Host(_) => 1,
                };
                pass(
                    RanksRef::Runs { stride, ranks },
                    PassScalars::Device(runs),
                    phases,
                )?;
            }
            if let (Terms::Host(split), false) = (&terms, units.is_empty()) {
                let ix = &split.ones[units];
                let pass =
                    self.ones_pass::<C>(chunk, ix, pl.ones_sums_max, &mut scratch, phases)?;
                outs.push(pass);
            }
            phases.passes += t.elapsed();
        }
        Ok(outs)
    }

    /// Copies `points` (a chunk of streamed bases) into the device window
    /// and converts them to the device's form, as an upload does.
    fn fill_window<C: Curve>(
        &self,
        window: &wgpu::Buffer,
        points: &[C::Affine],
        phases: &mut Phases,
    ) -> Result<(), WgpuError> {
        let what = "streamed bases window";
        let words = crate::device::affine_words::<C>(points)?;
        let t = std::time::Instant::now();
        self.ctx.write(window, words, what)?;
        phases.written += t.elapsed();
        phases.written_bytes += 4 * words.len() as u64;
        let t = std::time::Instant::now();
        self.to_device_form::<C>(window, points.len(), what)?;
        phases.converted += t.elapsed();
        Ok(())
    }

    /// The window sums of the scalars `sc` over the bases of ranks `idx` in
    /// `chunk`, with windows of at most `c_max` bits: every batch of windows
    /// in one submission, with one read back.
    fn windows_pass<C: Curve>(
        &self,
        chunk: BasesChunk<'_>,
        idx: RanksRef<'_>,
        sc: PassScalars<'_>,
        c_max: u32,
        scratch: &mut Scratch,
        phases: &mut Phases,
    ) -> Result<MsmOut, WgpuError> {
        let BasesChunk {
            points: bases,
            first_rank,
        } = chunk;
        // u32 words a coordinate and a point
        let fw = 2 * C::FE_WORDS as u64;
        let pt_words = 4 * fw;
        let m = Module::Curve(C::GROUP);
        // device -> blst form, run in the curve's module (the same K for
        // either field code: 2^384 mod p)
        let kfrom = self.ctx.module_radix(m).fq_k_from_dev();
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
        let mut out = MsmOut {
            c,
            windows: Vec::new(),
            ones: Vec::new(),
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
            let mut sums = Vec::with_capacity(reads[0].2 as usize);
            self.ctx
                .run_steps("msm", &steps, &reads, &mut |_, _, words| {
                    sums.extend_from_slice(words)
                })?;
            out.windows
                .extend(sums.chunks(res_words as usize).map(<[u32]>::to_vec));
            steps.clear();
            first = upto;
        }
        Ok(out)
    }

    /// Partial sums of the bases of ranks `ones` (the scalars 1) in `chunk`,
    /// at most `sums_max` of them (besides the empty bucket 0).
    fn ones_pass<C: Curve>(
        &self,
        chunk: BasesChunk<'_>,
        ones: &[u32],
        sums_max: u64,
        scratch: &mut Scratch,
        phases: &mut Phases,
    ) -> Result<MsmOut, WgpuError> {
        let BasesChunk {
            points: bases,
            first_rank,
        } = chunk;
        let fw = 2 * C::FE_WORDS as u64;
        let pt_words = 4 * fw;
        let m = Module::Curve(C::GROUP);
        let kfrom = self.ctx.module_radix(m).fq_k_from_dev();
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
        let words = self
            .ctx
            .run("msm ones", &jobs, &[(res, 0, nb1 * pt_words)])?;
        Ok(MsmOut {
            c: 0,
            windows: Vec::new(),
            ones: words.into_iter().next().unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{fold, MsmOut};
    use blst::*;
    use crossgroth_gpu_host::G1;

    fn fp_words(f: &blst_fp) -> Vec<u32> {
        f.l.iter()
            .flat_map(|l| [*l as u32, (*l >> 32) as u32])
            .collect()
    }

    /// XYZZ words of the affine point k G (ZZ = ZZZ = 1).
    fn xyzz_of(k: u64) -> (Vec<u32>, blst_p1) {
        let mut p = blst_p1::default();
        let bytes = k.to_le_bytes();
        unsafe { blst_p1_mult(&mut p, blst_p1_generator(), bytes.as_ptr(), 64) };
        let mut a = blst_p1_affine::default();
        unsafe { blst_p1_to_affine(&mut a, &p) };
        let one = unsafe { *blst_p1_generator() }.z; // 1 in Montgomery form
        let mut w = fp_words(&a.x);
        w.extend(fp_words(&a.y));
        w.extend(fp_words(&one));
        w.extend(fp_words(&one));
        (w, p)
    }

    #[test]
    fn window_sums_fold_to_the_msm() {
        let c = 5u32;
        let mut out = MsmOut {
            c,
            windows: Vec::new(),
            ones: Vec::new(),
        };
        let mut expected = blst_p1::default();
        let mut weight = 1u64; // 2^(c w)
        for w in 0..7u64 {
            let mut words = Vec::new();
            for i in 0..(3 + w) {
                let (xw, p) = xyzz_of(100 * w + i + 1);
                words.extend(xw);
                let mut term = blst_p1::default();
                let b = weight.to_le_bytes();
                unsafe {
                    blst_p1_mult(&mut term, &p, b.as_ptr(), 64);
                    blst_p1_add_or_double(&mut expected, &expected, &term);
                }
            }
            out.windows.push(words);
            weight <<= c;
        }
        for k in [7u64, 9] {
            let (xw, p) = xyzz_of(k);
            out.ones.extend(xw);
            unsafe { blst_p1_add_or_double(&mut expected, &expected, &p) };
        }
        let got = fold::<G1>(&out);
        assert!(unsafe { blst_p1_is_equal(&got, &expected) });
        // an empty MSM folds to the identity
        let none = MsmOut {
            c: 16,
            windows: Vec::new(),
            ones: Vec::new(),
        };
        let got = fold::<G1>(&none);
        assert!(unsafe { blst_p1_is_inf(&got) });
    }
}

//! Pippenger MSM, written once for both groups (shaders/msm/): the host
//! splits off scalars 0 and 1 (`msm_plan.rs`), the device cuts signed
//! digits, sorts them into buckets, sums and reduces the buckets a chunk of
//! the bases at a time (`msm_passes.rs`), and the host folds the window sums
//! (`msm_fold.rs`). This module holds the entry points and the walk over the
//! bases' chunks, resident or streamed. An H the device holds ([`DeviceH`])
//! is read there, all of it through the buckets.

use std::any::Any;

use blst::*;
use crossgroth_gpu_host::{Curve, Group, G1, G2};

use crate::device::{Bases, Store, WgpuDevice};
use crate::error::WgpuError;
use crate::msm_fold::{fold_all, MsmOut};
use crate::msm_passes::{pass_limits, BasesChunk, PassScalars, Phases, Scratch};
use crate::msm_plan::{positions, split_scalars, RanksRef, SplitAhead, SplitRef};
use crate::ntt::DeviceH;
use crate::ntt_chunks::rev;

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
    Host(SplitRef<'a>),
    /// H on the device, coefficient i paired with base `first + i`.
    DeviceH { h: &'a DeviceH, first: u64 },
}

/// The coefficients of an H the device holds that pair with one chunk of
/// the bases: per buffer of H, one run of consecutive elements.
struct HRuns<'a> {
    /// (buffer, first element, elements).
    runs: Vec<(&'a wgpu::Buffer, u64, u64)>,
    /// (position in the pass, rank of the run's first term).
    ranks: Vec<(u32, u32)>,
    /// What a run's ranks step by: the buffer count (the transposed layout;
    /// 1 for H in one buffer).
    stride: u32,
}

/// The runs of H's coefficients paired with the bases of ranks lo..hi, H's
/// coefficient i pairing with base `first + i`; None where there are none.
fn h_runs(h: &DeviceH, first: u64, lo: u64, hi: u64) -> Option<HRuns<'_>> {
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
    let stride = k as u32;
    (!runs.is_empty()).then_some(HRuns {
        runs,
        ranks,
        stride,
    })
}

/// Passes left queued on the device while the host prepares the next
/// chunk's: the passes of one chunk (its windows and its ones), so that the
/// device never waits for the host between chunks.
const PASSES_QUEUED: usize = 2;

/// MSMs of at least this many scalars log where their time went.
const LOGGED_MSM_TERMS: usize = 1 << 22;

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
            self.window_sums(bases, Terms::Host(split.as_ref()), phases)
        })
    }

    /// The host's share of [`Self::msm`] of `scalars` over `nbases` bases from
    /// `first` (the scalars split into zeros, ones and the rest), made now so
    /// that a caller can make it while the device runs other work; for
    /// [`Self::msm_split`] with the same scalars and bases.
    pub fn split_ahead(
        scalars: &[blst_fr],
        density: Option<&[u64]>,
        nbases: usize,
        first: usize,
    ) -> Result<SplitAhead, WgpuError> {
        let t = std::time::Instant::now();
        let split = SplitAhead::new(scalars, density, nbases, first)?;
        if scalars.len() >= LOGGED_MSM_TERMS {
            log::info!(
                "wgpu: {} scalars split ahead of their MSM in {:.2} s",
                scalars.len(),
                t.elapsed().as_secs_f64()
            );
        }
        Ok(split)
    }

    /// [`Self::msm`] of `scalars` from their split made ahead: the same sum,
    /// without the split on the MSM's own time. `split` must come from these
    /// scalars and density; one made for another count of scalars, other
    /// bases or another `first` is refused.
    pub fn msm_split<C: Curve>(
        &self,
        bases: &Bases<C>,
        first: usize,
        scalars: &[blst_fr],
        split: &SplitAhead,
    ) -> Result<C::Point, WgpuError> {
        let split = split.for_msm(scalars, bases.len, first)?;
        self.msm_of(bases, scalars.len(), |phases| {
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
        let mut queued = std::collections::VecDeque::new();
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
                    positions(split.ones, lo, hi),
                    None,
                ),
                Terms::DeviceH { h, first } => (0..0, 0..0, h_runs(h, *first, lo, hi)),
            };
            if host_terms.is_empty() && units.is_empty() && h_runs.is_none() {
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
                queued.push_back(pass?);
                Ok::<_, WgpuError>(())
            };
            if let Terms::Host(split) = &terms {
                if !host_terms.is_empty() {
                    let ix = split.idx.part(host_terms.clone());
                    pass(ix, PassScalars::Host(&split.sc[host_terms]), phases)?;
                }
            }
            if let Some(HRuns {
                runs,
                ranks,
                stride,
            }) = &h_runs
            {
                let ranks = RanksRef::Runs {
                    stride: *stride,
                    ranks,
                };
                pass(ranks, PassScalars::Device(runs), phases)?;
            }
            if let (Terms::Host(split), false) = (&terms, units.is_empty()) {
                let ix = &split.ones[units];
                let pass =
                    self.ones_pass::<C>(chunk, ix, pl.ones_sums_max, &mut scratch, phases)?;
                queued.push_back(pass);
            }
            // The device runs the passes just queued while the host reads the
            // earlier ones' sums and prepares the next chunk's.
            while queued.len() > PASSES_QUEUED {
                if let Some(p) = queued.pop_front() {
                    outs.push(p.finish(&self.ctx)?);
                }
            }
            phases.passes += t.elapsed();
        }
        let t = std::time::Instant::now();
        for p in queued {
            outs.push(p.finish(&self.ctx)?);
        }
        phases.passes += t.elapsed();
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
}

//! MSM bases: resident on the device, or kept in host memory and streamed,
//! and the MSM over either.
//!
//! Resident bases are uploaded once and read by every MSM. Bases that the
//! caller keeps in host memory (those that do not fit beside an MSM's working
//! buffers: a Filecoin partition's ~50 GB on a 24 GB card) are streamed: an MSM
//! then runs chunk by chunk over two device buffers, a copy stream uploading
//! chunk i + 1 (through pinned staging buffers, the host copy on several
//! threads) while the kernels work on chunk i, and the chunks' sums are added
//! on the host.

use std::any::Any;
use std::sync::mpsc;
use std::sync::Arc;

use blst::*;
use cudarc::driver::{CudaSlice, CudaStream};

use crate::msm::{BaseTable, Scalars};
use crate::witness::{DeviceWitness, WitnessPart};
use crate::{CudaDevice, CudaError, Curve, Group, Layout, MsmOptions, Staging};

/// A second stream with its own pinned staging buffers, for uploads that run
/// beside the kernels.
pub(crate) struct CopyLane {
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) staging: Staging,
}

pub use crossgroth_gpu_host::HostBases;

/// Where a set of bases lives.
pub(crate) enum Store<T> {
    /// Resident: `copies` points per base, made for windows of `c` bits (see
    /// msm::BaseTable; one copy: the plain bases).
    Device {
        buf: CudaSlice<u64>,
        copies: u32,
        c: u32,
    },
    Host(HostBases<T>),
}

/// MSM bases of group `C` (blst's affine points, identity = (0, 0)), resident
/// on the device or kept in host memory and streamed by every MSM.
pub struct Bases<C: Curve> {
    pub(crate) store: Store<C::Affine>,
    pub(crate) len: usize,
}

impl<C: Curve> Bases<C> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Whether the bases stay in host memory and are streamed per MSM.
    pub fn is_streamed(&self) -> bool {
        matches!(self.store, Store::Host(_))
    }
    /// Points kept per base and the window size they are for: (1, 0) for
    /// plain or streamed bases, else the table's precomputed copies (see
    /// [`CudaDevice::upload`]).
    pub fn copies(&self) -> (u32, u32) {
        match self.store {
            Store::Device { copies, c, .. } => (copies, c),
            Store::Host(_) => (1, 0),
        }
    }
}

/// Device bytes an MSM needs per term beside its bases: scalars in both forms,
/// base indices, the list of the bases of scalars 1, and one sorted entry per
/// window (16 windows at the largest).
pub(crate) const MSM_SCRATCH_PER_TERM: usize = 32 + 32 + 4 + 4 + 8 * 16;

/// The affine points as u64 words (`words` per point).
pub(crate) fn as_words<T>(points: &[T], words: usize) -> &[u64] {
    debug_assert_eq!(std::mem::size_of::<T>(), words * 8);
    // SAFETY: blst's affine points are repr(C) arrays of u64 limbs with no padding
    // (checked above in debug builds; Layout::of checks the type for the generic
    // entry points).
    unsafe { std::slice::from_raw_parts(points.as_ptr() as *const u64, points.len() * words) }
}

/// [`as_words`] for writing (field elements and points alike).
pub(crate) fn as_words_mut<T>(points: &mut [T], words: usize) -> &mut [u64] {
    debug_assert_eq!(std::mem::size_of::<T>(), words * 8);
    // SAFETY: as as_words; every bit pattern is a valid array of u64 limbs.
    unsafe { std::slice::from_raw_parts_mut(points.as_mut_ptr() as *mut u64, points.len() * words) }
}

/// One chunk of a streamed MSM: variables [v0, v1) (v0 a multiple of 64, so the
/// density's words split cleanly) and the bases [b0, b1) they use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub v0: usize,
    pub v1: usize,
    pub b0: usize,
    pub b1: usize,
}

/// Splits an MSM of `n` variables into chunks of at most `max_bases` bases
/// (`max_bases` >= 64). Chunks that use no base are left out.
pub(crate) fn plan_chunks(n: usize, density: Option<&[u64]>, max_bases: usize) -> Vec<Chunk> {
    let max_bases = max_bases.max(64) / 64 * 64;
    let mut chunks = Vec::new();
    match density {
        None => {
            let mut v0 = 0;
            while v0 < n {
                let v1 = (v0 + max_bases).min(n);
                chunks.push(Chunk {
                    v0,
                    v1,
                    b0: v0,
                    b1: v1,
                });
                v0 = v1;
            }
        }
        Some(d) => {
            let words = n.div_ceil(64);
            let bits = |w: usize| {
                let x = d[w];
                if (w + 1) * 64 <= n {
                    x
                } else {
                    x & ((1u64 << (n - w * 64)) - 1)
                }
                .count_ones() as usize
            };
            let (mut w0, mut b0) = (0, 0);
            while w0 < words {
                let (mut w1, mut b1) = (w0, b0);
                while w1 < words && b1 - b0 + bits(w1) <= max_bases {
                    b1 += bits(w1);
                    w1 += 1;
                }
                if b1 > b0 {
                    chunks.push(Chunk {
                        v0: w0 * 64,
                        v1: (w1 * 64).min(n),
                        b0,
                        b1,
                    });
                }
                (w0, b0) = (w1, b1);
            }
        }
    }
    chunks
}

/// Bases in host memory, as a streamed MSM reads them: `host` holds
/// `n_bases` affine points of `layout`.
struct Streamed<'a> {
    layout: Layout,
    host: &'a [u64],
    n_bases: usize,
    options: &'a MsmOptions,
}

/// blst's Jacobian points, as the host's fold of an MSM's window sums uses
/// them: one fold serves both groups.
trait HostPoint: Copy + Default + 'static {
    /// u64 words of one point (x, y, z).
    const WORDS: usize;
    fn double(&mut self);
    fn add_or_double(&mut self, other: &Self);
    /// The point from the device's Jacobian words.
    fn from_words(w: &[u64]) -> Self {
        let mut p = Self::default();
        as_words_mut(std::slice::from_mut(&mut p), Self::WORDS).copy_from_slice(w);
        p
    }
}

impl HostPoint for blst_p1 {
    const WORDS: usize = 18;
    fn double(&mut self) {
        unsafe { blst_p1_double(self, self) };
    }
    fn add_or_double(&mut self, other: &Self) {
        unsafe { blst_p1_add_or_double(self, self, other) };
    }
}

impl HostPoint for blst_p2 {
    const WORDS: usize = 36;
    fn double(&mut self) {
        unsafe { blst_p2_double(self, self) };
    }
    fn add_or_double(&mut self, other: &Self) {
        unsafe { blst_p2_add_or_double(self, self, other) };
    }
}

/// The window sums of one device MSM pass folded into a point: a dummy point,
/// the sets' sums (set s weighs 2^(c s)), then the sum of the bases whose
/// scalar is 1.
fn fold<P: HostPoint>(words: &[u64], c: u32) -> P {
    let pts: Vec<P> = words.chunks_exact(P::WORDS).map(P::from_words).collect();
    let (windows, ones) = (&pts[1..pts.len() - 1], &pts[pts.len() - 1]);
    let mut acc = P::default();
    for w in windows.iter().rev() {
        for _ in 0..c {
            acc.double();
        }
        acc.add_or_double(w);
    }
    acc.add_or_double(ones);
    acc
}

/// `p` as `Q`, which is its own type (Layout::of checked that `C::Point` is
/// blst's point of its group).
fn same_type<P: 'static, Q: 'static>(p: P) -> Result<Q, CudaError> {
    let mut slot = Some(p);
    (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<Q>>()
        .and_then(Option::take)
        .ok_or_else(|| CudaError::InvalidInput("a point type other than blst's".into()))
}

impl CudaDevice {
    /// Bases kept in host memory and streamed to the device by every MSM.
    pub fn host_bases<C: Curve>(&self, bases: HostBases<C::Affine>) -> Bases<C> {
        let len = (*bases).as_ref().len();
        Bases {
            store: Store::Host(bases),
            len,
        }
    }

    /// Device bytes an MSM of `len` terms needs beside its bases (its scalars,
    /// base indices and sorted bucket entries), whichever the group: with
    /// [`Self::resident_bytes`] and [`Self::memory`], what a caller decides
    /// placement from.
    pub fn msm_scratch_bytes(len: usize) -> usize {
        len * MSM_SCRATCH_PER_TERM
    }

    pub(crate) fn upload_bases(
        &self,
        words: &[u64],
        what: &str,
    ) -> Result<CudaSlice<u64>, CudaError> {
        let _g = self.guard();
        let buf = self.upload_large(words, what)?;
        self.sync(what)?;
        Ok(buf)
    }

    /// `Σ scalars[i] · bases[first + rank(i)]`.
    ///
    /// Without a density, rank(i) = i and `scalars.len() <= bases.len() - first`.
    /// With a density bitmap (bit i of word i / 64 set = variable i included),
    /// `scalars` holds one value per variable (the whole assignment), variables
    /// whose bit is clear are skipped, and an included variable i uses base
    /// number first + rank(i), rank(i) = number of included variables before
    /// i: the bases hold only the included variables, in order (bellperson's
    /// layout). The bitmap must cover `scalars.len()` bits; bits beyond it are
    /// ignored. `first` lets the part of an assignment whose bases follow those
    /// of another part run without a copy of its scalars. Scalars are blst_fr
    /// in Montgomery form.
    pub fn msm<C: Curve>(
        &self,
        bases: &Bases<C>,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<C::Point, CudaError> {
        self.msm_of::<C>(bases, first, Scalars::Host(scalars), density)
    }

    /// [`Self::msm`] of one of a proof's vectors already on the device
    /// ([`Self::witness_h`]), read in place.
    pub fn msm_witness<C: Curve>(
        &self,
        bases: &Bases<C>,
        first: usize,
        witness: &DeviceWitness,
        part: WitnessPart,
        density: Option<&[u64]>,
    ) -> Result<C::Point, CudaError> {
        let (buf, len) = witness.part(part);
        let scalars = Scalars::Device { buf, start: 0, len };
        self.msm_of::<C>(bases, first, scalars, density)
    }

    fn msm_of<C: Curve>(
        &self,
        bases: &Bases<C>,
        first: usize,
        scalars: Scalars<'_>,
        density: Option<&[u64]>,
    ) -> Result<C::Point, CudaError> {
        let layout = Layout::of::<C>()?;
        let store = (&bases.store, bases.len);
        match C::GROUP {
            Group::G1 => {
                same_type(self.msm_store::<blst_p1, _>(layout, store, first, scalars, density)?)
            }
            Group::G2 => {
                same_type(self.msm_store::<blst_p2, _>(layout, store, first, scalars, density)?)
            }
        }
    }

    /// One MSM over resident or streamed bases: each device pass's window sums
    /// (one pass, or one a streamed chunk) folded and added up as `P`.
    fn msm_store<P: HostPoint, T>(
        &self,
        layout: Layout,
        (store, len): (&Store<T>, usize),
        first: usize,
        scalars: Scalars<'_>,
        density: Option<&[u64]>,
    ) -> Result<P, CudaError> {
        let options = self.msm_options();
        let mut acc = P::default();
        let mut add = |words: Vec<u64>, c: u32| acc.add_or_double(&fold::<P>(&words, c));
        match store {
            Store::Device { buf, copies, c } => {
                let table = BaseTable {
                    buf,
                    len,
                    copies: *copies,
                    c: *c,
                    first,
                    overlap_upload: true,
                };
                let (words, c) = self.device_msm(layout, table, scalars, density, &options)?;
                add(words, c);
            }
            Store::Host(host) => {
                let all = (**host).as_ref();
                let Some(from_first) = all.get(first..) else {
                    return Err(CudaError::InvalidInput(format!(
                        "the MSM starts at base {first} of {len}"
                    )));
                };
                let host = as_words(from_first, layout.affine_words());
                let streamed = Streamed {
                    layout,
                    host,
                    n_bases: len - first,
                    options: &options,
                };
                self.msm_streamed(streamed, scalars, density, &mut add)?;
            }
        }
        Ok(acc)
    }

    /// Bases per streamed chunk: two chunk buffers and one chunk's MSM working
    /// buffers in half the free device memory, unless the options say.
    fn stream_chunk(&self, point_bytes: usize, options: &MsmOptions) -> usize {
        if let Some(set) = options.stream_chunk() {
            return set;
        }
        let free = self.memory().map(|(f, _)| f).unwrap_or(1 << 30);
        (free / 2 / (2 * point_bytes + MSM_SCRATCH_PER_TERM)).clamp(1 << 16, 1 << 25)
    }

    /// The stream that uploads streamed bases, and its pinned staging buffers
    /// (created on first use: a second stream turns on cudarc's cross-stream
    /// event tracking).
    pub(crate) fn copy_lane(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, Option<CopyLane>>, CudaError> {
        self.lane(&self.copy_lane)
    }

    /// The lane in `slot`, created on first use.
    pub(crate) fn lane<'a>(
        &'a self,
        slot: &'a std::sync::Mutex<Option<CopyLane>>,
    ) -> Result<std::sync::MutexGuard<'a, Option<CopyLane>>, CudaError> {
        let mut lane = slot.lock().unwrap_or_else(|p| p.into_inner());
        if lane.is_none() {
            let stream = self
                .ctx
                .new_stream()
                .map_err(|e| CudaError::driver("cuStreamCreate", e))?;
            *lane = Some(CopyLane {
                stream,
                staging: Staging::new(&self.ctx, self.options.copy_threads)?,
            });
        }
        Ok(lane)
    }

    /// An MSM over host-resident bases, chunk by chunk; `add` receives each
    /// chunk's device result and window size.
    fn msm_streamed(
        &self,
        Streamed {
            layout,
            host,
            n_bases,
            options,
        }: Streamed<'_>,
        scalars: Scalars<'_>,
        density: Option<&[u64]>,
        add: &mut dyn FnMut(Vec<u64>, u32),
    ) -> Result<(), CudaError> {
        let n = scalars.len();
        let pw = layout.affine_words();
        if let Some(d) = density {
            if d.len() * 64 < n {
                return Err(CudaError::InvalidInput(format!(
                    "density bitmap has {} bits for {n} scalars",
                    d.len() * 64
                )));
            }
        }
        let chunks = plan_chunks(n, density, self.stream_chunk(pw * 8, options));
        if let Some(last) = chunks.last() {
            if last.b1 > n_bases {
                return Err(CudaError::InvalidInput(format!(
                    "the MSM uses {} bases but only {n_bases} are present",
                    last.b1
                )));
            }
        }
        let Some(widest) = chunks.iter().map(|c| c.b1 - c.b0).max() else {
            return Ok(()); // nothing included: the sum is the identity
        };
        let mut lane_guard = self.copy_lane()?;
        let lane = lane_guard.as_mut().expect("copy lane initialised");
        let (free_tx, free_rx) = mpsc::channel::<CudaSlice<u64>>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<CudaSlice<u64>, CudaError>>();
        for _ in 0..2.min(chunks.len()) {
            free_tx
                .send(self.alloc_u64(widest * pw, "streamed bases")?)
                .expect("receiver alive");
        }
        std::thread::scope(|scope| {
            let uploads = &chunks;
            scope.spawn(move || {
                for ch in uploads {
                    let Ok(mut buf) = free_rx.recv() else { return };
                    let src = &host[ch.b0 * pw..ch.b1 * pw];
                    let r = lane
                        .staging
                        .upload(&lane.stream, src, &mut buf.slice_mut(0..src.len()))
                        .and_then(|_| {
                            lane.stream
                                .synchronize()
                                .map_err(|e| CudaError::driver("streamed bases upload", e))
                        })
                        .map(|_| buf);
                    let failed = r.is_err();
                    if ready_tx.send(r).is_err() || failed {
                        return;
                    }
                }
            });
            for ch in &chunks {
                let buf = ready_rx.recv().map_err(|_| {
                    CudaError::InvalidInput("the bases upload thread stopped".into())
                })??;
                let sub_density = density.map(|d| &d[ch.v0 / 64..ch.v1.div_ceil(64)]);
                let sub = scalars.sub(ch.v0, ch.v1);
                let table = BaseTable {
                    buf: &buf,
                    len: ch.b1 - ch.b0,
                    copies: 1,
                    c: 0,
                    first: 0,
                    overlap_upload: false,
                };
                let (words, c) = self.device_msm(layout, table, sub, sub_density, options)?;
                add(words, c);
                // a closed channel means the uploader is done
                let _ = free_tx.send(buf);
            }
            drop(free_tx);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(n: usize, density: Option<&[u64]>, max: usize) {
        let chunks = plan_chunks(n, density, max);
        let included: Vec<usize> = (0..n)
            .filter(|&i| density.is_none_or(|d| d[i / 64] >> (i % 64) & 1 == 1))
            .collect();
        let mut next_var = 0;
        let mut next_base = 0;
        for c in &chunks {
            assert_eq!(c.v0 % 64, 0);
            assert!(c.v0 >= next_var && c.v1 <= n && c.v0 < c.v1);
            assert_eq!(c.b0, next_base, "{c:?}");
            let here = included.iter().filter(|&&i| i >= c.v0 && i < c.v1).count();
            assert_eq!(c.b1 - c.b0, here);
            assert!(here >= 1 && here <= max.max(64));
            // variables skipped between chunks are all excluded
            assert!(included.iter().all(|&i| i >= c.v0 || i < next_var));
            next_var = c.v1;
            next_base = c.b1;
        }
        assert_eq!(next_base, included.len());
    }

    #[test]
    fn chunks_cover_every_included_variable_once() {
        check(0, None, 64);
        check(1000, None, 64);
        check(1000, None, 1 << 20);
        let mut d = vec![0u64; 40];
        check(2500, Some(&d), 128);
        for (i, w) in d.iter_mut().enumerate() {
            *w = match i % 4 {
                0 => u64::MAX,
                1 => 0,
                2 => 0x5555_5555_5555_5555,
                _ => 1 << (i % 64),
            };
        }
        for max in [64, 100, 128, 1000, 4096] {
            check(2500, Some(&d), max);
            check(2560, Some(&d), max);
        }
    }
}

//! MSM bases: resident on the device, or kept in host memory and streamed.
//!
//! Resident bases are uploaded once and read by every MSM. Bases that do not fit
//! beside an MSM's working buffers (a Filecoin partition's ~50 GB on a 24 GB
//! card) stay in host memory: an MSM then runs chunk by chunk over two device
//! buffers, a copy stream uploading chunk i + 1 (through pinned staging
//! buffers, the host copy on several threads) while the kernels work on chunk
//! i, and the chunks' sums are added on the host.

use std::sync::mpsc;
use std::sync::Arc;

use blst::*;
use cudarc::driver::{CudaSlice, CudaStream};

use crate::msm::BaseTable;
use crate::{CudaBackend, CudaError, Curve, Staging};

/// A second stream with its own pinned staging buffers, for uploads that run
/// beside the kernels.
pub(crate) struct CopyLane {
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) staging: Staging,
}

/// Bases in host memory, shared with their owner (no copy is made).
pub type HostBases<T> = Arc<dyn AsRef<[T]> + Send + Sync>;

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

/// G1 bases (blst_p1_affine, identity = (0, 0)), resident or streamed.
pub struct G1Bases {
    pub(crate) store: Store<blst_p1_affine>,
    pub(crate) len: usize,
}
/// G2 bases (blst_p2_affine, identity = (0, 0)), resident or streamed.
pub struct G2Bases {
    pub(crate) store: Store<blst_p2_affine>,
    pub(crate) len: usize,
}

macro_rules! bases_accessors {
    ($t:ty) => {
        impl $t {
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
            /// Points kept per base: 1, or the precomputed copies (see
            /// [`CudaBackend::set_precompute`]) and the window size they are for.
            pub fn copies(&self) -> (u32, u32) {
                match self.store {
                    Store::Device { copies, c, .. } => (copies, c),
                    Store::Host(_) => (1, 0),
                }
            }
        }
    };
}
bases_accessors!(G1Bases);
bases_accessors!(G2Bases);

/// Device bytes an MSM needs per term beside its bases: scalars in both forms,
/// base indices, and one sorted entry per window (16 windows at the largest).
pub(crate) const MSM_SCRATCH_PER_TERM: usize = 32 + 32 + 4 + 8 * 16;

/// The affine points as u64 words (`words` per point).
pub(crate) fn as_words<T>(points: &[T], words: usize) -> &[u64] {
    debug_assert_eq!(std::mem::size_of::<T>(), words * 8);
    // SAFETY: blst's affine points are repr(C) arrays of u64 limbs with no padding
    // (checked above in debug builds).
    unsafe { std::slice::from_raw_parts(points.as_ptr() as *const u64, points.len() * words) }
}

/// [`as_words`] for writing (field elements and points alike).
pub(crate) fn as_words_mut<T>(points: &mut [T], words: usize) -> &mut [u64] {
    debug_assert_eq!(std::mem::size_of::<T>(), words * 8);
    // SAFETY: as as_words; every bit pattern is a valid array of u64 limbs.
    unsafe { std::slice::from_raw_parts_mut(points.as_mut_ptr() as *mut u64, points.len() * words) }
}

/// Bytes from an environment variable given in MiB.
pub(crate) fn env_mib(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map(|m| m << 20)
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

/// The window sums of one device MSM pass folded into a point.
fn fold_g1(words: &[u64], c: u32) -> blst_p1 {
    let pts: Vec<blst_p1> = words
        .chunks_exact(18)
        .map(|w| {
            let mut p = blst_p1::default();
            p.x.l.copy_from_slice(&w[0..6]);
            p.y.l.copy_from_slice(&w[6..12]);
            p.z.l.copy_from_slice(&w[12..18]);
            p
        })
        .collect();
    let (windows, ones) = (&pts[1..pts.len() - 1], &pts[pts.len() - 1]);
    let mut acc = blst_p1::default();
    for w in windows.iter().rev() {
        for _ in 0..c {
            unsafe { blst_p1_double(&mut acc, &acc) };
        }
        unsafe { blst_p1_add_or_double(&mut acc, &acc, w) };
    }
    unsafe { blst_p1_add_or_double(&mut acc, &acc, ones) };
    acc
}

fn fold_g2(words: &[u64], c: u32) -> blst_p2 {
    let pts: Vec<blst_p2> = words
        .chunks_exact(36)
        .map(|w| {
            let mut p = blst_p2::default();
            p.x.fp[0].l.copy_from_slice(&w[0..6]);
            p.x.fp[1].l.copy_from_slice(&w[6..12]);
            p.y.fp[0].l.copy_from_slice(&w[12..18]);
            p.y.fp[1].l.copy_from_slice(&w[18..24]);
            p.z.fp[0].l.copy_from_slice(&w[24..30]);
            p.z.fp[1].l.copy_from_slice(&w[30..36]);
            p
        })
        .collect();
    let (windows, ones) = (&pts[1..pts.len() - 1], &pts[pts.len() - 1]);
    let mut acc = blst_p2::default();
    for w in windows.iter().rev() {
        for _ in 0..c {
            unsafe { blst_p2_double(&mut acc, &acc) };
        }
        unsafe { blst_p2_add_or_double(&mut acc, &acc, w) };
    }
    unsafe { blst_p2_add_or_double(&mut acc, &acc, ones) };
    acc
}

impl CudaBackend {
    /// Copies G1 bases to the device (resident until dropped), with as many
    /// precomputed copies as [`Self::set_precompute`] allows and memory holds.
    pub fn upload_g1_bases(&self, bases: &[blst_p1_affine]) -> Result<G1Bases, CudaError> {
        self.upload_g1_bases_with_copies(bases, self.precompute())
    }

    /// Copies G2 bases to the device; see [`Self::upload_g1_bases`].
    pub fn upload_g2_bases(&self, bases: &[blst_p2_affine]) -> Result<G2Bases, CudaError> {
        self.upload_g2_bases_with_copies(bases, self.precompute())
    }

    /// G1 bases kept in host memory and streamed to the device by every MSM.
    pub fn host_g1_bases(&self, bases: HostBases<blst_p1_affine>) -> G1Bases {
        let len = (*bases).as_ref().len();
        G1Bases {
            store: Store::Host(bases),
            len,
        }
    }

    /// G2 bases kept in host memory and streamed to the device by every MSM.
    pub fn host_g2_bases(&self, bases: HostBases<blst_p2_affine>) -> G2Bases {
        let len = (*bases).as_ref().len();
        G2Bases {
            store: Store::Host(bases),
            len,
        }
    }

    /// Resident G1 bases where they fit beside an MSM over all of them, else
    /// streamed ones (see [`Self::fits_resident`]).
    pub fn prepare_g1_bases(&self, bases: HostBases<blst_p1_affine>) -> Result<G1Bases, CudaError> {
        let len = (*bases).as_ref().len();
        if self.fits_resident(len, 96) {
            self.upload_g1_bases((*bases).as_ref())
        } else {
            Ok(self.host_g1_bases(bases))
        }
    }

    /// Resident G2 bases where they fit, else streamed ones.
    pub fn prepare_g2_bases(&self, bases: HostBases<blst_p2_affine>) -> Result<G2Bases, CudaError> {
        let len = (*bases).as_ref().len();
        if self.fits_resident(len, 192) {
            self.upload_g2_bases((*bases).as_ref())
        } else {
            Ok(self.host_g2_bases(bases))
        }
    }

    /// Whether `len` bases of `point_bytes` each, plus the working buffers of an
    /// MSM over all of them, take at most 90 % of the free device memory
    /// (CROSSGROTH_CUDA_RESIDENT_MIB caps the bases' bytes instead).
    pub fn fits_resident(&self, len: usize, point_bytes: usize) -> bool {
        let bytes = len * point_bytes;
        if let Some(limit) = env_mib("CROSSGROTH_CUDA_RESIDENT_MIB") {
            return bytes <= limit;
        }
        match self.memory() {
            Ok((free, _)) => bytes + len * MSM_SCRATCH_PER_TERM <= free / 10 * 9,
            Err(_) => false,
        }
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

    /// Σ scalars[i] · bases[rank(i)] over G1.
    ///
    /// Without a density, rank(i) = i and `scalars.len() <= bases.len()`.
    /// With a density bitmap (bit i of word i / 64 set = variable i included),
    /// `scalars` holds one value per variable (the whole assignment), variables
    /// whose bit is clear are skipped, and an included variable i uses base
    /// number rank(i) = number of included variables before i: the bases hold
    /// only the included variables, in order (bellperson's layout). The bitmap
    /// must cover `scalars.len()` bits; bits beyond it are ignored.
    /// Scalars are blst_fr in Montgomery form.
    pub fn msm_g1(
        &self,
        bases: &G1Bases,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p1, CudaError> {
        self.msm_g1_from(bases, 0, scalars, density)
    }

    /// [`Self::msm_g1`] over the bases from number `first` on (rank(i) counts
    /// from there): the part of an assignment whose bases follow those of
    /// another part, without a copy of its scalars.
    pub fn msm_g1_from(
        &self,
        bases: &G1Bases,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p1, CudaError> {
        let mut acc = blst_p1::default();
        self.msm_store(
            Curve::G1,
            (&bases.store, bases.len),
            first,
            scalars,
            density,
            &mut |w, c| {
                let p = fold_g1(&w, c);
                unsafe { blst_p1_add_or_double(&mut acc, &acc, &p) };
            },
        )?;
        Ok(acc)
    }

    /// Σ scalars[i] · bases[rank(i)] over G2; see [`Self::msm_g1`].
    pub fn msm_g2(
        &self,
        bases: &G2Bases,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p2, CudaError> {
        self.msm_g2_from(bases, 0, scalars, density)
    }

    /// [`Self::msm_g2`] over the bases from number `first` on (rank(i) counts
    /// from there): the part of an assignment whose bases follow those of
    /// another part, without a copy of its scalars.
    pub fn msm_g2_from(
        &self,
        bases: &G2Bases,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p2, CudaError> {
        let mut acc = blst_p2::default();
        self.msm_store(
            Curve::G2,
            (&bases.store, bases.len),
            first,
            scalars,
            density,
            &mut |w, c| {
                let p = fold_g2(&w, c);
                unsafe { blst_p2_add_or_double(&mut acc, &acc, &p) };
            },
        )?;
        Ok(acc)
    }

    /// One MSM over resident or streamed bases; `add` receives each device pass's
    /// window sums and window size (one pass, or one a streamed chunk).
    fn msm_store<T>(
        &self,
        curve: Curve,
        (store, len): (&Store<T>, usize),
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
        add: &mut dyn FnMut(Vec<u64>, u32),
    ) -> Result<(), CudaError> {
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
                let (words, c) = self.msm(curve, table, scalars, density)?;
                add(words, c);
                Ok(())
            }
            Store::Host(host) => {
                let all = (**host).as_ref();
                let Some(from_first) = all.get(first..) else {
                    return Err(CudaError::InvalidInput(format!(
                        "the MSM starts at base {first} of {len}"
                    )));
                };
                let host = as_words(from_first, 2 * curve.fe_words());
                self.msm_streamed(curve, host, len - first, scalars, density, add)
            }
        }
    }

    /// Sets the number of bases per streamed chunk (rounded down to a multiple
    /// of 64, at least 64); `None` sizes chunks from the free device memory.
    pub fn set_stream_chunk(&self, bases: Option<usize>) {
        let v = bases.map_or(0, |b| b.max(64));
        self.stream_chunk
            .store(v, std::sync::atomic::Ordering::Release);
    }

    /// Bases per streamed chunk: two chunk buffers and one chunk's MSM working
    /// buffers in half the free device memory, unless set (by
    /// [`Self::set_stream_chunk`] or CROSSGROTH_CUDA_STREAM_CHUNK).
    fn stream_chunk(&self, point_bytes: usize) -> usize {
        let set = self.stream_chunk.load(std::sync::atomic::Ordering::Acquire);
        if set > 0 {
            return set;
        }
        if let Some(c) = std::env::var("CROSSGROTH_CUDA_STREAM_CHUNK")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        {
            return c.max(64);
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
        let mut lane = self.copy_lane.lock().unwrap_or_else(|p| p.into_inner());
        if lane.is_none() {
            let stream = self
                .ctx
                .new_stream()
                .map_err(|e| CudaError::driver("cuStreamCreate", e))?;
            *lane = Some(CopyLane {
                stream,
                staging: Staging::new(&self.ctx)?,
            });
        }
        Ok(lane)
    }

    /// An MSM over host-resident bases, chunk by chunk; `add` receives each
    /// chunk's device result and window size.
    fn msm_streamed(
        &self,
        curve: Curve,
        host: &[u64],
        n_bases: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
        add: &mut dyn FnMut(Vec<u64>, u32),
    ) -> Result<(), CudaError> {
        let n = scalars.len();
        let pw = 2 * curve.fe_words(); // affine: x, y
        if let Some(d) = density {
            if d.len() * 64 < n {
                return Err(CudaError::InvalidInput(format!(
                    "density bitmap has {} bits for {n} scalars",
                    d.len() * 64
                )));
            }
        }
        let chunks = plan_chunks(n, density, self.stream_chunk(pw * 8));
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
                let sub = &scalars[ch.v0..ch.v1];
                let table = BaseTable {
                    buf: &buf,
                    len: ch.b1 - ch.b0,
                    copies: 1,
                    c: 0,
                    first: 0,
                    overlap_upload: false,
                };
                let (words, c) = self.msm(curve, table, sub, sub_density)?;
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

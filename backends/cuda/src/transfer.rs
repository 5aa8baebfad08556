//! Host-device transfers: pinned staging buffers, a chunked upload that overlaps
//! the host copy with the DMA, and the same for downloads.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};

use crate::{CudaDevice, CudaError};

/// Two pinned host buffers for chunked transfers, with an event per buffer
/// recorded after the DMA that last used it, and the host threads that copy
/// into and out of them.
pub(crate) struct Staging {
    slots: Vec<cudarc::driver::PinnedHostSlice<u64>>,
    done: Vec<cudarc::driver::CudaEvent>,
    threads: usize,
}

impl Staging {
    /// `threads`: [`crate::CudaOptions::copy_threads`].
    pub(crate) fn new(ctx: &Arc<CudaContext>, threads: Option<usize>) -> Result<Self, CudaError> {
        let mut slots = Vec::new();
        let mut done = Vec::new();
        for _ in 0..2 {
            // SAFETY: plain pinned allocation; filled before each use.
            slots.push(
                unsafe { ctx.alloc_pinned_with_flags::<u64>(STAGE_WORDS, 0) }
                    .map_err(|e| CudaError::alloc("pinned staging buffer", STAGE_WORDS * 8, e))?,
            );
            done.push(
                ctx.new_event(None)
                    .map_err(|e| CudaError::driver("cuEventCreate", e))?,
            );
        }
        Ok(Staging {
            slots,
            done,
            threads: host_threads(threads),
        })
    }

    /// Copies `src` into `dst` (as long) on `stream`: the host copies chunk i + 1
    /// into one pinned slot (several threads) while the DMA engine moves chunk i
    /// from the other. Returns once the last chunk is queued.
    pub(crate) fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        src: &[u64],
        dst: &mut cudarc::driver::CudaViewMut<'_, u64>,
    ) -> Result<(), CudaError> {
        let threads = self.threads;
        let cu_stream = stream.cu_stream();
        let cw = stage_chunk(src.len());
        for (i, chunk) in src.chunks(cw).enumerate() {
            let k = i % 2;
            // the previous DMA from this slot has finished
            self.done[k]
                .synchronize()
                .map_err(|e| CudaError::driver("staging wait", e))?;
            let host = self.slots[k]
                .as_mut_slice()
                .map_err(|e| CudaError::driver("staging wait", e))?;
            let host = &mut host[..chunk.len()];
            par_copy(host, chunk, threads);
            let mut view = dst.slice_mut(i * cw..i * cw + chunk.len());
            {
                let (dptr, _rec) = view.device_ptr_mut(stream);
                // SAFETY: host (pinned) and view have chunk.len() words; the slot
                // is not touched again before done[k] fires.
                unsafe { cudarc::driver::result::memcpy_htod_async(dptr, &*host, cu_stream) }
                    .map_err(|e| CudaError::driver("staged upload", e))?;
            }
            self.done[k]
                .record(stream)
                .map_err(|e| CudaError::driver("cuEventRecord", e))?;
        }
        Ok(())
    }
}

/// Words (u64) per pinned staging buffer: 32 MiB.
const STAGE_WORDS: usize = 1 << 22;

/// Chunk length for a staged transfer of `len` words: about a quarter of it,
/// between 4 MiB and a whole staging buffer (bigger chunks cost less per-chunk
/// overhead; at least a few chunks let the host copy overlap the DMA).
pub(crate) fn stage_chunk(len: usize) -> usize {
    (len / 4).clamp(1 << 19, STAGE_WORDS)
}
/// Transfers of at least this many words go through the pinned staging
/// buffers; smaller ones are plain (pageable) copies.
const STAGED_MIN_WORDS: usize = 1 << 19;

/// Host threads that copy into the pinned buffers: `set` (1..=64), else the
/// cores, at most 8.
fn host_threads(set: Option<usize>) -> usize {
    if let Some(t) = set {
        return t.clamp(1, 64);
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
}

/// dst.copy_from_slice(src) on several threads (host memcpy bandwidth of one
/// core is well under PCIe's).
pub(crate) fn par_copy(dst: &mut [u64], src: &[u64], threads: usize) {
    let per = src.len().div_ceil(threads.max(1)).max(1 << 16);
    if per >= src.len() {
        dst.copy_from_slice(src);
        return;
    }
    std::thread::scope(|sc| {
        for (d, s) in dst.chunks_mut(per).zip(src.chunks(per)) {
            sc.spawn(move || d.copy_from_slice(s));
        }
    });
}

/// `src` in a fresh buffer of `stream`'s, at least `min_len` words long (zero
/// past src): through `staging`'s pinned buffers where given and the copy is
/// large, else as a plain copy. Returns once the copy is queued.
pub(crate) fn upload_on(
    stream: &Arc<CudaStream>,
    staging: Option<&mut Staging>,
    src: &[u64],
    min_len: usize,
    what: &str,
) -> Result<CudaSlice<u64>, CudaError> {
    let total = min_len.max(src.len());
    match staging {
        Some(st) if src.len() >= STAGED_MIN_WORDS => {
            // SAFETY: src's words are copied in below and the rest zeroed.
            let mut dst = unsafe { stream.alloc::<u64>(total) }
                .map_err(|e| CudaError::alloc(what, total * 8, e))?;
            st.upload(stream, src, &mut dst.slice_mut(0..src.len()))?;
            if total > src.len() {
                let mut tail = dst.slice_mut(src.len()..total);
                stream
                    .memset_zeros(&mut tail)
                    .map_err(|e| CudaError::driver(what, e))?;
            }
            Ok(dst)
        }
        _ => {
            let mut dst = stream
                .alloc_zeros::<u64>(total.max(1))
                .map_err(|e| CudaError::alloc(what, total * 8, e))?;
            if !src.is_empty() {
                let mut view = dst.slice_mut(0..src.len());
                stream
                    .memcpy_htod(src, &mut view)
                    .map_err(|e| CudaError::driver(what, e))?;
            }
            Ok(dst)
        }
    }
}

impl CudaDevice {
    pub(crate) fn upload_u64(&self, v: &[u64], what: &str) -> Result<CudaSlice<u64>, CudaError> {
        if v.is_empty() {
            return self.alloc_u64(1, what);
        }
        self.stream
            .clone_htod(v)
            .map_err(|e| CudaError::alloc(what, v.len() * 8, e))
    }

    pub(crate) fn ensure_staging(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, Option<Staging>>, CudaError> {
        let mut st = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        if st.is_none() {
            *st = Some(Staging::new(&self.ctx, self.options.copy_threads)?);
        }
        Ok(st)
    }

    /// Host-to-device copy of a large buffer through two pinned staging
    /// buffers: the host copies chunk i + 1 (several threads) while the DMA
    /// engine moves chunk i. The device buffer holds at least `min_len` words
    /// (the words past src are zero).
    pub(crate) fn upload_large_padded(
        &self,
        src: &[u64],
        min_len: usize,
        what: &str,
    ) -> Result<CudaSlice<u64>, CudaError> {
        if src.len() < STAGED_MIN_WORDS {
            return upload_on(&self.stream, None, src, min_len, what);
        }
        let mut guard = self.ensure_staging()?;
        upload_on(&self.stream, guard.as_mut(), src, min_len, what)
    }

    pub(crate) fn upload_large(
        &self,
        src: &[u64],
        what: &str,
    ) -> Result<CudaSlice<u64>, CudaError> {
        self.upload_large_padded(src, 0, what)
    }

    /// Device-to-host copy of the first dst.len() words of src through the two
    /// pinned staging buffers (DMA of chunk i + 1 overlaps the host copy of
    /// chunk i). Returns when the data is on the host.
    pub(crate) fn download_large(
        &self,
        src: &CudaSlice<u64>,
        dst: &mut [u64],
        what: &str,
    ) -> Result<(), CudaError> {
        let words = dst.len();
        if words == 0 {
            return self.sync(what);
        }
        if words < STAGED_MIN_WORDS {
            let view = src.slice(0..words);
            self.stream
                .memcpy_dtoh(&view, dst)
                .map_err(|e| CudaError::launch(what, e))?;
            return self.sync(what);
        }
        let mut guard = self.ensure_staging()?;
        let st = guard.as_mut().expect("staging initialised");
        let threads = st.threads;
        let cu_stream = self.stream.cu_stream();
        let cw = stage_chunk(words);
        let nchunks = words.div_ceil(cw);
        let range = |j: usize| j * cw..((j + 1) * cw).min(words);
        for i in 0..=nchunks {
            if i < nchunks {
                let k = i % 2;
                let r = range(i);
                st.done[k]
                    .synchronize()
                    .map_err(|e| CudaError::launch(what, e))?;
                let host = st.slots[k]
                    .as_mut_slice()
                    .map_err(|e| CudaError::launch(what, e))?;
                let view = src.slice(r.clone());
                let (sptr, _rec) = view.device_ptr(&self.stream);
                // SAFETY: host[..len] and the view have the same length.
                unsafe {
                    cudarc::driver::result::memcpy_dtoh_async(&mut host[..r.len()], sptr, cu_stream)
                }
                .map_err(|e| CudaError::launch(what, e))?;
                st.done[k]
                    .record(&self.stream)
                    .map_err(|e| CudaError::driver("cuEventRecord", e))?;
            }
            if i >= 1 {
                let j = i - 1;
                let k = j % 2;
                let r = range(j);
                st.done[k]
                    .synchronize()
                    .map_err(|e| CudaError::launch(what, e))?;
                let host = st.slots[k]
                    .as_slice()
                    .map_err(|e| CudaError::launch(what, e))?;
                par_copy(&mut dst[r.clone()], &host[..r.len()], threads);
            }
        }
        self.sync(what)
    }
}

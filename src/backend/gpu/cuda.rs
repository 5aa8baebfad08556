//! The cuda backend: `crossgroth-cuda` as a [`DeviceApi`].

use blst::{blst_fr, blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
use crossgroth_cuda as cuda;
use std::sync::Arc;
use std::time::Duration;

use super::{err, raw_g1, raw_g2, CudaBackend, DeviceApi, GpuBackend};
use crate::error::{Error, Result};
use crate::{G1Affine, G2Affine};

/// A parameter file's bases seen as blst's type, for streaming from host memory
/// without a copy.
struct HostG1(Arc<Vec<G1Affine>>);
impl AsRef<[blst_p1_affine]> for HostG1 {
    fn as_ref(&self) -> &[blst_p1_affine] {
        raw_g1(&self.0)
    }
}
struct HostG2(Arc<Vec<G2Affine>>);
impl AsRef<[blst_p2_affine]> for HostG2 {
    fn as_ref(&self) -> &[blst_p2_affine] {
        raw_g2(&self.0)
    }
}

/// Says when a set of bases stays in host memory (every MSM over it then moves it
/// to the device again).
fn log_streamed(streamed: bool, len: usize, point_bytes: usize) {
    if streamed {
        log::info!(
            "cuda: {len} bases ({}) stay in host memory and are streamed to the device by each MSM",
            bytesize::ByteSize((len * point_bytes) as u64)
        );
    }
}

impl DeviceApi for cuda::CudaBackend {
    const NAME: &'static str = "cuda";
    type G1 = cuda::G1Bases;
    type G2 = cuda::G2Bases;
    type Error = cuda::CudaError;

    fn is_unavailable(e: &cuda::CudaError) -> bool {
        e.is_unavailable()
    }
    /// A launch error (an illegal address, say) poisons the whole context.
    fn is_fatal(e: &cuda::CudaError) -> bool {
        matches!(
            e,
            cuda::CudaError::Launch { .. } | cuda::CudaError::ContextLost { .. }
        )
    }
    fn describe(&self) -> String {
        let i = self.info();
        let tables = match self.precompute() {
            1 => String::new(),
            n => format!(", base tables of up to {n} copies"),
        };
        format!(
            "cuda:{} {} ({} MiB, sm_{}{}{tables})",
            i.ordinal,
            i.name,
            i.total_memory >> 20,
            i.compute_capability.0,
            i.compute_capability.1
        )
    }
    const STREAMS: bool = true;
    /// Resident where they fit beside an MSM over them, else streamed; always
    /// streamed when asked.
    fn upload_g1(
        &self,
        bases: &Arc<Vec<G1Affine>>,
        streamed: bool,
    ) -> Result<cuda::G1Bases, cuda::CudaError> {
        let host = Arc::new(HostG1(bases.clone()));
        let prepared = if streamed {
            self.host_g1_bases(host)
        } else {
            self.prepare_g1_bases(host)?
        };
        log_streamed(prepared.is_streamed(), bases.len(), 96);
        Ok(prepared)
    }
    fn upload_g2(
        &self,
        bases: &Arc<Vec<G2Affine>>,
        streamed: bool,
    ) -> Result<cuda::G2Bases, cuda::CudaError> {
        let host = Arc::new(HostG2(bases.clone()));
        let prepared = if streamed {
            self.host_g2_bases(host)
        } else {
            self.prepare_g2_bases(host)?
        };
        log_streamed(prepared.is_streamed(), bases.len(), 192);
        Ok(prepared)
    }
    fn compute_h_in_place(
        &self,
        a: &mut [blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<(), cuda::CudaError> {
        cuda::CudaBackend::compute_h_in_place(self, a, b, c, log_m)
    }
    forward_device_api!(
        cuda::CudaBackend,
        cuda::G1Bases,
        cuda::G2Bases,
        cuda::CudaError
    );
    fn memory(&self) -> Option<(usize, usize)> {
        cuda::CudaBackend::memory(self).ok()
    }
}

impl CudaBackend {
    /// Opens CUDA device 0.
    pub fn open() -> Result<Self> {
        Self::open_device(0)
    }

    pub fn open_device(ordinal: usize) -> Result<Self> {
        // The first context is the device's primary one; a rebuild after a
        // sticky error needs a fresh one (see new_in_fresh_context).
        let opened = std::sync::atomic::AtomicBool::new(false);
        GpuBackend::open_with_opener(move || {
            if opened.swap(true, std::sync::atomic::Ordering::AcqRel) {
                cuda::CudaBackend::new_in_fresh_context(ordinal)
            } else {
                cuda::CudaBackend::new(ordinal)
            }
        })
    }
}

/// Every CUDA device's ordinal, or why there is none.
pub(crate) fn ordinals() -> Result<Vec<usize>> {
    let found = cuda::probe().map_err(err::<cuda::CudaBackend>)?;
    if found.is_empty() {
        return Err(Error::BackendUnavailable {
            backend: "cuda",
            reason: "no CUDA device found".into(),
        });
    }
    Ok(found.iter().map(|d| d.ordinal).collect())
}

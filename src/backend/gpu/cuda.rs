//! The cuda backend: `crossgroth-cuda` as a [`DeviceApi`].

use std::time::Duration;

use blst::{blst_fr, blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
use crossgroth_cuda as cuda;

use super::{err, CudaBackend, DeviceApi, GpuBackend};
use crate::error::{Error, Result};

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
        matches!(e, cuda::CudaError::Launch { .. })
    }
    fn describe(&self) -> String {
        let i = self.info();
        format!(
            "cuda:{} {} ({} MiB, sm_{}{})",
            i.ordinal,
            i.name,
            i.total_memory >> 20,
            i.compute_capability.0,
            i.compute_capability.1
        )
    }
    fn upload_g1(&self, bases: &[blst_p1_affine]) -> Result<cuda::G1Bases, cuda::CudaError> {
        self.upload_g1_bases(bases)
    }
    fn upload_g2(&self, bases: &[blst_p2_affine]) -> Result<cuda::G2Bases, cuda::CudaError> {
        self.upload_g2_bases(bases)
    }
    fn g1_len(bases: &cuda::G1Bases) -> usize {
        bases.len()
    }
    fn g2_len(bases: &cuda::G2Bases) -> usize {
        bases.len()
    }
    fn msm_g1(
        &self,
        b: &cuda::G1Bases,
        s: &[blst_fr],
        d: Option<&[u64]>,
    ) -> Result<blst_p1, cuda::CudaError> {
        cuda::CudaBackend::msm_g1(self, b, s, d)
    }
    fn msm_g2(
        &self,
        b: &cuda::G2Bases,
        s: &[blst_fr],
        d: Option<&[u64]>,
    ) -> Result<blst_p2, cuda::CudaError> {
        cuda::CudaBackend::msm_g2(self, b, s, d)
    }
    fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), cuda::CudaError> {
        cuda::CudaBackend::ntt(self, data, log_n, inverse)
    }
    fn compute_h(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<Vec<blst_fr>, cuda::CudaError> {
        cuda::CudaBackend::compute_h(self, a, b, c, log_m)
    }
    fn time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<(Result<()>, Duration), cuda::CudaError> {
        cuda::CudaBackend::time(self, |_| Ok(work()))
    }
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
        GpuBackend::open_with_opener(move || cuda::CudaBackend::new(ordinal))
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

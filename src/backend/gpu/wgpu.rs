//! The wgpu backend: `crossgroth-wgpu` as a [`DeviceApi`].

use std::time::Duration;

use blst::{blst_fr, blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
use crossgroth_wgpu as wg;

use super::{DeviceApi, GpuBackend, WgpuBackend};
use crate::error::Result;

/// Which WGSL field code to use.
pub type WgpuOptions = wg::Options;

impl DeviceApi for wg::WgpuBackend {
    const NAME: &'static str = "wgpu";
    type G1 = wg::G1Bases;
    type G2 = wg::G2Bases;
    type Error = wg::WgpuError;

    fn is_unavailable(e: &wg::WgpuError) -> bool {
        matches!(e, wg::WgpuError::Unavailable(_))
    }
    fn is_fatal(e: &wg::WgpuError) -> bool {
        matches!(e, wg::WgpuError::DeviceLost(_))
    }
    fn describe(&self) -> String {
        self.info()
    }
    fn upload_g1(&self, bases: &[blst_p1_affine]) -> Result<wg::G1Bases, wg::WgpuError> {
        self.upload_g1_bases(bases)
    }
    fn upload_g2(&self, bases: &[blst_p2_affine]) -> Result<wg::G2Bases, wg::WgpuError> {
        self.upload_g2_bases(bases)
    }
    fn g1_len(bases: &wg::G1Bases) -> usize {
        bases.len()
    }
    fn g2_len(bases: &wg::G2Bases) -> usize {
        bases.len()
    }
    fn msm_g1(
        &self,
        b: &wg::G1Bases,
        s: &[blst_fr],
        d: Option<&[u64]>,
    ) -> Result<blst_p1, wg::WgpuError> {
        wg::WgpuBackend::msm_g1(self, b, s, d)
    }
    fn msm_g2(
        &self,
        b: &wg::G2Bases,
        s: &[blst_fr],
        d: Option<&[u64]>,
    ) -> Result<blst_p2, wg::WgpuError> {
        wg::WgpuBackend::msm_g2(self, b, s, d)
    }
    fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), wg::WgpuError> {
        wg::WgpuBackend::ntt(self, data, log_n, inverse)
    }
    fn compute_h(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<Vec<blst_fr>, wg::WgpuError> {
        wg::WgpuBackend::compute_h(self, a, b, c, log_m)
    }
    fn time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<(Result<()>, Duration), wg::WgpuError> {
        wg::WgpuBackend::time(self, |_| Ok(work()))
    }
    fn memory(&self) -> Option<(usize, usize)> {
        None
    }
}

impl WgpuBackend {
    /// Opens the preferred adapter (a discrete GPU first; `CROSSGROTH_WGPU_ADAPTER`
    /// picks one by name), with the SHADER_INT64 path where the adapter has it.
    pub fn open() -> Result<Self> {
        Self::open_with(WgpuOptions::default())
    }

    /// Whether the adapter is a software rasterizer (such as Mesa's lavapipe): correct,
    /// but slower than the cpu backend, so `auto` does not choose it.
    pub fn is_software(&self) -> bool {
        self.device_handle().adapter().device_type == "Cpu"
    }

    pub fn open_with(options: WgpuOptions) -> Result<Self> {
        GpuBackend::open_with_opener(move || wg::WgpuBackend::with_options(options))
    }
}

//! The wgpu backend: `crossgroth-wgpu` as a [`DeviceApi`].

use blst::{blst_fr, blst_p1, blst_p2};
use crossgroth_wgpu as wg;
use std::time::Duration;

use std::sync::Arc;

use super::{raw_g1, raw_g2, DeviceApi, GpuBackend, WgpuBackend};
use crate::error::Result;
use crate::{G1Affine, G2Affine};

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
    /// Always resident: the wgpu backend does not stream bases.
    fn upload_g1(
        &self,
        bases: &Arc<Vec<G1Affine>>,
        _streamed: bool,
    ) -> Result<wg::G1Bases, wg::WgpuError> {
        self.upload_g1_bases(raw_g1(bases))
    }
    fn upload_g2(
        &self,
        bases: &Arc<Vec<G2Affine>>,
        _streamed: bool,
    ) -> Result<wg::G2Bases, wg::WgpuError> {
        self.upload_g2_bases(raw_g2(bases))
    }
    forward_device_api!(wg::WgpuBackend, wg::G1Bases, wg::G2Bases, wg::WgpuError);
    fn memory(&self) -> Option<(usize, usize)> {
        None
    }
    fn warm_up(&self) -> Result<(), wg::WgpuError> {
        wg::WgpuBackend::warm_up(self)
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

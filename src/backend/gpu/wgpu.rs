//! The wgpu backend: `crossgroth-wgpu` as a [`DeviceApi`].

use blst::blst_fr;
use crossgroth_wgpu as wg;
use std::sync::Arc;
use std::time::Duration;

use super::{DeviceApi, GpuBackend, HostView, WgpuBackend};
use crate::backend::{Curve, MsmGroup, Placement};
use crate::error::Result;

/// Which adapter and which WGSL field code to use.
pub type WgpuOptions = wg::Options;
pub use wg::AdapterChoice;

impl DeviceApi for wg::WgpuDevice {
    const NAME: &'static str = "wgpu";
    type Bases<C: Curve> = wg::Bases<C>;
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
    const STREAMS: bool = true;
    const SETUP: bool = true;
    fn upload<C: MsmGroup>(
        &self,
        bases: &Arc<Vec<C::Base>>,
        placement: Placement,
    ) -> Result<wg::Bases<C>, wg::WgpuError> {
        match placement {
            Placement::Resident { .. } => wg::WgpuDevice::upload::<C>(self, C::raw(bases)),
            Placement::Streamed => {
                log::info!(
                    "wgpu: {} {} bases ({}) stay in host memory and are streamed to the device by each MSM",
                    bases.len(),
                    C::NAME,
                    bytesize::ByteSize((bases.len() * C::AFFINE_BYTES) as u64)
                );
                self.host_bases::<C>(Arc::new(HostView::<C>(bases.clone())))
            }
        }
    }
    forward_device_api!(wg::WgpuDevice, wg::WgpuError);
    fn memory(&self) -> Option<(usize, usize)> {
        wg::WgpuDevice::memory(self).map(|(free, total)| (free as usize, total as usize))
    }
    fn warm_up(&self) -> Result<(), wg::WgpuError> {
        wg::WgpuDevice::warm_up(self)
    }
}

impl WgpuBackend {
    /// Opens the preferred adapter (a discrete GPU first), with the
    /// SHADER_INT64 path where the adapter has it.
    pub fn open() -> Result<Self> {
        Self::open_with(WgpuOptions::default())
    }

    /// Whether the adapter is a software rasterizer (such as Mesa's lavapipe): correct,
    /// but slower than the cpu backend, so `auto` does not choose it.
    pub fn is_software(&self) -> bool {
        self.device_handle().adapter().device_type == "Cpu"
    }

    pub fn open_with(options: WgpuOptions) -> Result<Self> {
        GpuBackend::open_with_opener(move || wg::WgpuDevice::with_options(options.clone()))
    }
}

//! The wgpu backend: `crossgroth-wgpu` as a [`DeviceApi`].

use blst::blst_fr;
use crossgroth_wgpu as wg;
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use super::{DeviceApi, GpuBackend, HostView, WgpuBackend};
use crate::backend::{Curve, MsmGroup, Placement, WitnessPart};
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
    const CLOCK_PER_THREAD: bool = true;
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
    fn split_ahead(
        &self,
        nbases: usize,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, wg::WgpuError>> {
        let split = wg::WgpuDevice::split_ahead(scalars, density, nbases, first);
        Some(split.map(|s| Box::new(s) as Box<dyn Any + Send + Sync>))
    }
    fn msm_split<C: Curve>(
        &self,
        bases: &wg::Bases<C>,
        first: usize,
        scalars: &[blst_fr],
        split: &(dyn Any + Send + Sync),
    ) -> Option<Result<C::Point, wg::WgpuError>> {
        let split = split.downcast_ref::<wg::SplitAhead>()?;
        Some(self.msm_split::<C>(bases, first, scalars, split))
    }
    fn compute_h_on_device(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, wg::WgpuError>> {
        let h = wg::WgpuDevice::compute_h_on_device(self, a, b, c, log_m);
        Some(h.map(|h| Box::new(h) as Box<dyn Any + Send + Sync>))
    }
    const STAGES_ABC: bool = true;
    fn stage_abc(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, wg::WgpuError>> {
        let staged = wg::WgpuDevice::stage_abc(self, a, b, c, log_m);
        Some(staged.map(|s| Box::new(s) as Box<dyn Any + Send + Sync>))
    }
    fn compute_h_staged(
        &self,
        staged: Box<dyn Any + Send + Sync>,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, wg::WgpuError>> {
        let staged = staged.downcast::<wg::StagedAbc>().ok()?;
        let h = wg::WgpuDevice::compute_h_staged(self, *staged);
        Some(h.map(|h| Box::new(h) as Box<dyn Any + Send + Sync>))
    }
    fn msm_witness<C: Curve>(
        &self,
        bases: &wg::Bases<C>,
        first: usize,
        witness: &(dyn Any + Send + Sync),
        part: WitnessPart,
        density: Option<&[u64]>,
    ) -> Option<Result<C::Point, wg::WgpuError>> {
        let h = witness.downcast_ref::<wg::DeviceH>()?;
        Some(match (part, density) {
            (WitnessPart::H, None) => self.msm_h::<C>(bases, first, h),
            _ => Err(wg::WgpuError::InvalidInput(format!(
                "the wgpu device holds H alone, not the {part:?} scalars{}",
                if density.is_some() {
                    " through a density"
                } else {
                    ""
                }
            ))),
        })
    }
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

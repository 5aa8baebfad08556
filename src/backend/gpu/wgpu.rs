//! The wgpu backend: `crossgroth-wgpu` as a [`DeviceApi`].

use blst::blst_fr;
use crossgroth_wgpu as wg;
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use super::{device_matrices, DeviceApi, GpuBackend, HostView, WgpuBackend};
use crate::backend::{Curve, MsmGroup, Placement, WitnessPart};
use crate::error::Result;
use crate::synthesis::RecordedShape;

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
    fn matrices_bytes(&self, shape: &RecordedShape) -> Option<usize> {
        let (_, _, bytes) = device_matrices(shape).filter(|_| self.witness_on_device())?;
        Some(bytes)
    }
    fn upload_matrices(
        &self,
        shape: &RecordedShape,
    ) -> Option<Result<Arc<dyn Any + Send + Sync>, wg::WgpuError>> {
        let (csr, table, _) = device_matrices(shape).filter(|_| self.witness_on_device())?;
        let uploaded =
            wg::WgpuDevice::upload_matrices(self, csr, table, shape.num_inputs(), shape.num_aux());
        Some(uploaded.map(|m| Arc::new(m) as Arc<dyn Any + Send + Sync>))
    }
    fn witness_h(
        &self,
        matrices: &(dyn Any + Send + Sync),
        input: &[blst_fr],
        aux: &[blst_fr],
        staged: Option<Box<dyn Any + Send + Sync>>,
        log_m: u32,
        check: bool,
    ) -> Option<Result<Result<Box<dyn Any + Send + Sync>, usize>, wg::WgpuError>> {
        let matrices = matrices.downcast_ref::<wg::WgpuMatrices>()?;
        // This backend stages no witness ahead (STAGES_WITNESSES is false).
        drop(staged);
        let h = || {
            let abc = self.abc_from_witness(matrices, input, aux, log_m)?;
            if check {
                if let Some(row) = self.first_unsatisfied(&abc, matrices.rows())? {
                    return Ok(Err(row));
                }
            }
            let h = self.compute_h_staged(abc)?;
            Ok(Ok(Box::new(h) as Box<dyn Any + Send + Sync>))
        };
        Some(h())
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

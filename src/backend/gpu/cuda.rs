//! The cuda backend: `crossgroth-cuda` as a [`DeviceApi`].

use blst::blst_fr;
use crossgroth_cuda as cuda;
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use super::{device_matrices, err, CudaBackend, DeviceApi, GpuBackend, HostView};
use crate::backend::{Curve, MsmGroup, Placement, WitnessPart};
use crate::error::{Error, Result};
use crate::synthesis::RecordedShape;

/// How the cuda backend runs (kernel module, MSM tuning, streaming).
pub type CudaOptions = cuda::CudaOptions;

/// The most copies per base a table is made with; the crate's cost model picks
/// how many of them pay for each size.
const MAX_TABLE_COPIES: u32 = 64;

impl DeviceApi for cuda::CudaDevice {
    const NAME: &'static str = "cuda";
    type Bases<C: Curve> = cuda::Bases<C>;
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
    fn inject_fault_for_tests(&self) -> Option<Result<(), cuda::CudaError>> {
        Some(cuda::CudaDevice::inject_fault_for_tests(self))
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
    const SETUP: bool = true;
    const STREAMS: bool = true;
    fn max_table_copies(&self) -> u32 {
        MAX_TABLE_COPIES
    }
    fn resident_bytes<C: Curve>(&self, len: usize, max_copies: u32) -> usize {
        cuda::CudaDevice::resident_bytes::<C>(len, max_copies)
    }
    fn msm_scratch_bytes(&self, len: usize) -> usize {
        cuda::CudaDevice::msm_scratch_bytes(len)
    }
    fn upload<C: MsmGroup>(
        &self,
        bases: &Arc<Vec<C::Base>>,
        placement: Placement,
    ) -> Result<cuda::Bases<C>, cuda::CudaError> {
        match placement {
            Placement::Resident { max_copies } => self.upload::<C>(C::raw(bases), max_copies),
            Placement::Streamed => {
                log::info!(
                    "cuda: {} {} bases ({}) stay in host memory and are streamed to the device by each MSM",
                    bases.len(),
                    C::NAME,
                    bytesize::ByteSize((bases.len() * C::AFFINE_BYTES) as u64)
                );
                Ok(self.host_bases::<C>(Arc::new(HostView::<C>(bases.clone()))))
            }
        }
    }
    fn matrices_bytes(&self, shape: &RecordedShape) -> Option<usize> {
        device_matrices(shape).map(|(_, _, bytes)| bytes)
    }
    fn upload_matrices(
        &self,
        shape: &RecordedShape,
    ) -> Option<Result<Arc<dyn Any + Send + Sync>, cuda::CudaError>> {
        let (csr, table, _) = device_matrices(shape)?;
        let uploaded = self.upload_matrices(csr, table, shape.num_inputs(), shape.num_aux());
        Some(uploaded.map(|m| Arc::new(m) as Arc<dyn Any + Send + Sync>))
    }
    const STAGES_WITNESSES: bool = true;
    fn stage_witness(
        &self,
        matrices: &(dyn Any + Send + Sync),
        input: &[blst_fr],
        aux: &[blst_fr],
    ) -> Option<Result<Box<dyn Any + Send + Sync>, cuda::CudaError>> {
        let matrices = matrices.downcast_ref::<cuda::ConstraintMatrices>()?;
        Some(
            cuda::CudaDevice::stage_witness(self, matrices, input, aux)
                .map(|w| Box::new(w) as Box<dyn Any + Send + Sync>),
        )
    }
    fn witness_h(
        &self,
        matrices: &(dyn Any + Send + Sync),
        input: &[blst_fr],
        aux: &[blst_fr],
        staged: Option<Box<dyn Any + Send + Sync>>,
        log_m: u32,
        check: bool,
    ) -> Option<Result<Result<Box<dyn Any + Send + Sync>, usize>, cuda::CudaError>> {
        let matrices = matrices.downcast_ref::<cuda::ConstraintMatrices>()?;
        let found = match staged.and_then(|w| w.downcast::<cuda::StagedWitness>().ok()) {
            Some(w) => cuda::CudaDevice::witness_h_staged(self, matrices, *w, log_m, check),
            None => cuda::CudaDevice::witness_h(self, matrices, input, aux, log_m, check),
        };
        Some(found.map(|found| found.map(|w| Box::new(w) as Box<dyn Any + Send + Sync>)))
    }
    const WITNESS_KEEPS_INPUTS: bool = true;
    fn msm_witness<C: Curve>(
        &self,
        bases: &cuda::Bases<C>,
        first: usize,
        witness: &(dyn Any + Send + Sync),
        part: WitnessPart,
        density: Option<&[u64]>,
    ) -> Option<Result<C::Point, cuda::CudaError>> {
        let witness = witness.downcast_ref::<cuda::DeviceWitness>()?;
        let part = match part {
            WitnessPart::Input => cuda::WitnessPart::Input,
            WitnessPart::Aux => cuda::WitnessPart::Aux,
            WitnessPart::H => cuda::WitnessPart::H,
        };
        Some(cuda::CudaDevice::msm_witness::<C>(
            self, bases, first, witness, part, density,
        ))
    }
    forward_device_api!(cuda::CudaDevice, cuda::CudaError);
    fn memory(&self) -> Option<(usize, usize)> {
        cuda::CudaDevice::memory(self).ok()
    }
    fn memory_report(&self) -> Option<(usize, usize)> {
        cuda::CudaDevice::memory_report(self).ok()
    }
}

impl CudaBackend {
    /// Opens CUDA device 0 with the default options.
    pub fn open() -> Result<Self> {
        Self::open_device(0, CudaOptions::default())
    }

    pub fn open_device(ordinal: usize, options: CudaOptions) -> Result<Self> {
        // The first context is the device's primary one; a rebuild after a
        // sticky error needs a fresh one (see new_in_fresh_context).
        let opened = std::sync::atomic::AtomicBool::new(false);
        GpuBackend::open_with_opener(move || {
            if opened.swap(true, std::sync::atomic::Ordering::AcqRel) {
                cuda::CudaDevice::new_in_fresh_context(ordinal, options.clone())
            } else {
                cuda::CudaDevice::new(ordinal, options.clone())
            }
        })
    }
}

/// Every CUDA device's ordinal, or why there is none.
pub(crate) fn ordinals() -> Result<Vec<usize>> {
    let found = cuda::probe().map_err(err::<cuda::CudaDevice>)?;
    if found.is_empty() {
        return Err(Error::BackendUnavailable {
            backend: "cuda",
            reason: "no CUDA device found".into(),
        });
    }
    Ok(found.iter().map(|d| d.ordinal).collect())
}

//! A proof's scalars held on the device for its critical path: the witness
//! (input and aux) uploaded once, and H computed from it there, so that the
//! H, L, A and B MSMs read them in place.
//!
//! At Filecoin scale each of these vectors is gigabytes: sending the aux once
//! instead of once per MSM, and never bringing H back to the host, saves most
//! of a partition's transfers. A witness can also be staged: sent ahead on a
//! stream of its own while the previous proof's kernels run, so that its
//! upload is off the device's critical path.

use blst::blst_fr;
use cudarc::driver::CudaSlice;

use crate::ntt::{Evaluations, HOutcome};
use crate::transfer::upload_on;
use crate::{host, ConstraintMatrices, CudaDevice, CudaError};

/// Which of a [`DeviceWitness`]'s vectors an MSM reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WitnessPart {
    Input,
    Aux,
    /// H's 2^log_m − 1 coefficients.
    H,
}

/// A witness and its H on the device ([`CudaDevice::witness_h`]).
pub struct DeviceWitness {
    input: CudaSlice<u64>,
    inputs: usize,
    aux: CudaSlice<u64>,
    aux_len: usize,
    h: CudaSlice<u64>,
    h_len: usize,
}

impl DeviceWitness {
    /// Scalars in `part`.
    pub fn len(&self, part: WitnessPart) -> usize {
        match part {
            WitnessPart::Input => self.inputs,
            WitnessPart::Aux => self.aux_len,
            WitnessPart::H => self.h_len,
        }
    }

    /// `part`'s buffer and scalar count.
    pub(crate) fn part(&self, part: WitnessPart) -> (&CudaSlice<u64>, usize) {
        let buf = match part {
            WitnessPart::Input => &self.input,
            WitnessPart::Aux => &self.aux,
            WitnessPart::H => &self.h,
        };
        (buf, self.len(part))
    }
}

/// A witness sent to the device ahead of its H ([`CudaDevice::stage_witness`]),
/// for [`CudaDevice::witness_h_staged`]. Dropping it frees the device memory.
pub struct StagedWitness {
    input: CudaSlice<u64>,
    inputs: usize,
    aux: CudaSlice<u64>,
    aux_len: usize,
}

impl StagedWitness {
    /// Device bytes it holds.
    pub fn bytes(&self) -> usize {
        (self.inputs + self.aux_len) * 32
    }
}

impl CudaDevice {
    /// Refuses a witness whose variable counts are not the matrices'.
    fn check_witness(
        matrices: &ConstraintMatrices,
        inputs: usize,
        aux_len: usize,
    ) -> Result<(), CudaError> {
        let (want_inputs, want_aux) = matrices.variables();
        if inputs != want_inputs || aux_len != want_aux {
            return Err(CudaError::InvalidInput(format!(
                "a witness of {inputs} inputs and {aux_len} aux variables for matrices of \
                 {want_inputs} and {want_aux}",
            )));
        }
        Ok(())
    }

    /// The witness on the device, on the backend's stream, checked against
    /// the matrices' variable counts.
    fn upload_witness(
        &self,
        matrices: &ConstraintMatrices,
        input: &[blst_fr],
        aux: &[blst_fr],
    ) -> Result<StagedWitness, CudaError> {
        Self::check_witness(matrices, input.len(), aux.len())?;
        let _g = self.guard();
        Ok(StagedWitness {
            input: self.upload_large(host::fr_as_u64s(input), "witness inputs")?,
            inputs: input.len(),
            aux: self.upload_large(host::fr_as_u64s(aux), "witness aux")?,
            aux_len: aux.len(),
        })
    }

    /// Sends a witness of `matrices`' shape to the device on a stream and
    /// pinned buffers of its own, without waiting for the work of other
    /// threads on the device: called while the previous proof's kernels run,
    /// its upload overlaps them. Returns once the witness is on the device.
    pub fn stage_witness(
        &self,
        matrices: &ConstraintMatrices,
        input: &[blst_fr],
        aux: &[blst_fr],
    ) -> Result<StagedWitness, CudaError> {
        Self::check_witness(matrices, input.len(), aux.len())?;
        let mut lane = self.lane(&self.witness_lane)?;
        let lane = lane.as_mut().expect("lane created");
        let (stream, staging) = (&lane.stream, &mut lane.staging);
        let mut up = |v: &[blst_fr], what: &str| {
            upload_on(stream, Some(&mut *staging), host::fr_as_u64s(v), 0, what)
        };
        let staged = StagedWitness {
            input: up(input, "staged witness inputs")?,
            inputs: input.len(),
            aux: up(aux, "staged witness aux")?,
            aux_len: aux.len(),
        };
        stream
            .synchronize()
            .map_err(|e| CudaError::launch("staged witness", e))?;
        Ok(staged)
    }

    /// H for a 2^log_m domain from a witness of the shape `matrices` were
    /// uploaded for (as [`Self::compute_h_from_witness`]), kept on the device
    /// with the witness for MSMs through [`Self::msm_witness`]. With `check`,
    /// the first row with a·b ≠ c instead, where there is one.
    pub fn witness_h(
        &self,
        matrices: &ConstraintMatrices,
        input: &[blst_fr],
        aux: &[blst_fr],
        log_m: u32,
        check: bool,
    ) -> Result<Result<DeviceWitness, usize>, CudaError> {
        matrices.check_domain(log_m)?;
        let uploaded = self.upload_witness(matrices, input, aux)?;
        self.witness_h_staged(matrices, uploaded, log_m, check)
    }

    /// [`Self::witness_h`] of a witness [`Self::stage_witness`] sent ahead.
    pub fn witness_h_staged(
        &self,
        matrices: &ConstraintMatrices,
        staged: StagedWitness,
        log_m: u32,
        check: bool,
    ) -> Result<Result<DeviceWitness, usize>, CudaError> {
        matrices.check_domain(log_m)?;
        Self::check_witness(matrices, staged.inputs, staged.aux_len)?;
        let evaluations = Evaluations::Witness {
            matrices,
            input: &staged.input,
            aux: &staged.aux,
            check,
        };
        let h = match self.h_on_device(evaluations, log_m)? {
            HOutcome::Unsatisfied(row) => return Ok(Err(row)),
            HOutcome::H(h) => h.keep(),
        };
        // Done before returning, so that a caller timing its steps sees H's
        // work here and not in the MSM that reads it next.
        self.sync("H")?;
        Ok(Ok(DeviceWitness {
            input: staged.input,
            inputs: staged.inputs,
            aux: staged.aux,
            aux_len: staged.aux_len,
            h_len: (1usize << log_m) - 1,
            h,
        }))
    }
}

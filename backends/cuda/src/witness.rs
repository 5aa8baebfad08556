//! A proof's scalars held on the device for its critical path: the witness
//! (input and aux) uploaded once, and H computed from it there, so that the
//! H, L, A and B MSMs read them in place.
//!
//! At Filecoin scale each of these vectors is gigabytes: sending the aux once
//! instead of once per MSM, and never bringing H back to the host, saves most
//! of a partition's transfers.

use blst::blst_fr;
use cudarc::driver::CudaSlice;

use crate::ntt::{Evaluations, HOutcome};
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

impl CudaDevice {
    /// The witness on the device, checked against the matrices' variable counts.
    pub(crate) fn upload_witness(
        &self,
        matrices: &ConstraintMatrices,
        input: &[blst_fr],
        aux: &[blst_fr],
    ) -> Result<(CudaSlice<u64>, CudaSlice<u64>), CudaError> {
        let (inputs, aux_len) = matrices.variables();
        if input.len() != inputs || aux.len() != aux_len {
            return Err(CudaError::InvalidInput(format!(
                "a witness of {} inputs and {} aux variables for matrices of {inputs} and {aux_len}",
                input.len(),
                aux.len(),
            )));
        }
        let _g = self.guard();
        let d_input = self.upload_large(host::fr_as_u64s(input), "witness inputs")?;
        let d_aux = self.upload_large(host::fr_as_u64s(aux), "witness aux")?;
        Ok((d_input, d_aux))
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
        let (d_input, d_aux) = self.upload_witness(matrices, input, aux)?;
        let evaluations = Evaluations::Witness {
            matrices,
            input: &d_input,
            aux: &d_aux,
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
            input: d_input,
            inputs: input.len(),
            aux: d_aux,
            aux_len: aux.len(),
            h_len: (1usize << log_m) - 1,
            h,
        }))
    }
}

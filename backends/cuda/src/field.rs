//! Field-element kernels on their own: Fq inversion in bulk
//! (kernels/ff/kernels.cuh), to test the divsteps inversion against blst and to
//! time it against Fermat's (the tables of precomputed copies invert by
//! divsteps, kernels/msm/pippenger.cuh).

use blst::blst_fp;
use cudarc::driver::CudaSlice;

use crate::bases::{as_words, as_words_mut};
use crate::{CudaDevice, CudaError};

/// u64 words of one Fq element (blst_fp).
const FQ_WORDS: usize = 6;

/// How [`CudaDevice::fq_inverse`] inverts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InverseMethod {
    /// a^(p - 2): ~570 dependent Fq products.
    Fermat,
    /// Bernstein-Yang divsteps (kernels/ff/safegcd.cuh): batches of 30
    /// branch-free steps until done (at most 37, ~27 for random elements),
    /// mostly integer-ALU work.
    Divsteps,
}

impl InverseMethod {
    fn kernel_arg(self) -> u32 {
        match self {
            InverseMethod::Fermat => 0,
            InverseMethod::Divsteps => 1,
        }
    }
}

/// Fq elements resident on the device (blst_fp layout), e.g. for timing.
pub struct FqBuffer {
    buf: CudaSlice<u64>,
    len: usize,
}

impl FqBuffer {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl CudaDevice {
    /// `values[i] = 1 / values[i]` in Fq (Montgomery form, as blst keeps it); zero
    /// stays zero. Elements must be below p, as blst's are.
    pub fn fq_inverse(
        &self,
        values: &mut [blst_fp],
        method: InverseMethod,
    ) -> Result<(), CudaError> {
        if values.is_empty() {
            return Ok(());
        }
        let _g = self.guard();
        let mut buf = FqBuffer {
            buf: self.upload_large(as_words(values, FQ_WORDS), "Fq elements")?,
            len: values.len(),
        };
        self.fq_inverse_on_device(&mut buf, method)?;
        self.download_large(&buf.buf, as_words_mut(values, FQ_WORDS), "Fq inverse")
    }

    /// Copies Fq elements to the device (for [`Self::fq_inverse_resident`]).
    pub fn upload_fq(&self, values: &[blst_fp]) -> Result<FqBuffer, CudaError> {
        let _g = self.guard();
        let buf = self.upload_large(as_words(values, FQ_WORDS), "Fq elements")?;
        self.sync("Fq upload")?;
        Ok(FqBuffer {
            buf,
            len: values.len(),
        })
    }

    /// [`Self::fq_inverse`] on device-resident elements (no transfers).
    pub fn fq_inverse_resident(
        &self,
        data: &mut FqBuffer,
        method: InverseMethod,
    ) -> Result<(), CudaError> {
        let _g = self.guard();
        self.fq_inverse_on_device(data, method)?;
        self.sync("Fq inverse")
    }

    /// Copies device-resident Fq elements back (the first `out.len()`).
    pub fn download_fq(&self, data: &FqBuffer, out: &mut [blst_fp]) -> Result<(), CudaError> {
        if out.len() > data.len {
            return Err(CudaError::InvalidInput(format!(
                "{} Fq elements asked of a buffer of {}",
                out.len(),
                data.len
            )));
        }
        let _g = self.guard();
        self.download_large(&data.buf, as_words_mut(out, FQ_WORDS), "Fq download")
    }

    fn fq_inverse_on_device(
        &self,
        data: &mut FqBuffer,
        method: InverseMethod,
    ) -> Result<(), CudaError> {
        if data.len >= u32::MAX as usize {
            return Err(CudaError::InvalidInput(format!(
                "{} Fq elements is too many for one launch",
                data.len
            )));
        }
        let n = data.len as u32;
        let m = method.kernel_arg();
        launch!(self, self.k.fq_inverse_batch, data.len, 128; &mut data.buf, &n, &m);
        Ok(())
    }
}

//! Field-element kernels on their own (kernels/ff/kernels.cuh): Fq inversion in
//! bulk, to test the divsteps inversion against blst and to time it against
//! Fermat's (the tables of precomputed copies invert by divsteps,
//! kernels/msm/pippenger.cuh); and the pipe probe, which times Fq products with
//! FP64 work beside them.

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

/// One launch of [`CudaDevice::fq_pipe_probe`]: each thread takes four
/// elements through `rounds` rounds of four Fq products (none when
/// `fq_products` is off), the last `fp64_chains` of the four on the FP64 pipe
/// (kernels/ff/fp64.cuh) and the others on the multiplier's, and
/// `limb_products` FP64 limb products a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeProbe {
    pub rounds: u32,
    pub fq_products: bool,
    pub fp64_chains: u32,
    pub limb_products: u32,
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

    /// Runs the pipe probe (kernels/ff/kernels.cuh, `fq_pipe_probe`) over
    /// device-resident elements, a thread per four of them, and waits for it:
    /// timed with the Fq products alone, the FP64 limb products alone and both,
    /// it shows whether the FP64 pipe's work runs beside the multiplier's.
    /// With no limb products each element becomes itself times its group's
    /// first element to the power `rounds` (Montgomery products) on either
    /// pipe, which is how the tests check the FP64 products against blst.
    pub fn fq_pipe_probe(&self, data: &mut FqBuffer, probe: PipeProbe) -> Result<(), CudaError> {
        let kernel = self
            .k
            .fq_pipe_probe
            .get(probe.fp64_chains as usize)
            .ok_or_else(|| {
                CudaError::InvalidInput(format!(
                    "{} of four product chains on the FP64 pipe",
                    probe.fp64_chains
                ))
            })?;
        let threads = u32::try_from(data.len / 4).map_err(|_| {
            CudaError::InvalidInput(format!(
                "{} Fq elements is too many for one launch",
                data.len
            ))
        })?;
        let fq_products = u32::from(probe.fq_products);
        let _g = self.guard();
        launch!(self, *kernel, threads, 128;
            &mut data.buf, &threads, &probe.rounds, &fq_products, &probe.limb_products);
        self.sync("Fq pipe probe")
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

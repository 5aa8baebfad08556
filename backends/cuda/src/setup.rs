//! Parameter generation on the device: every query point of a Groth16 setup is
//! k·G for one generator G and one scalar k a variable or domain element, so a
//! setup is a few fixed-base multiplications of hundreds of millions of scalars
//! at Filecoin scale (kernels/setup/fixed_base.cuh).

use blst::blst_fr;

use crate::bases::{as_words, as_words_mut};
use crate::{host, CudaDevice, CudaError, Curve, Layout};

pub use crossgroth_gpu_host::FIXED_BASE_TABLE_LEN;

/// Scalars per launch: bounds the device memory of a call (2^24 G2 results are
/// 3 GiB) while keeping each launch long against its transfers.
const CHUNK: usize = 1 << 24;

impl CudaDevice {
    /// `out[i] = scalars[i]·G` in affine form (blst's layout, the identity as
    /// (0, 0)), G given by its window table of [`FIXED_BASE_TABLE_LEN`] affine
    /// points (entry w·256 + b = b·2^(8w)·G). Bit for bit what adding those
    /// entries on the host and normalising gives. Scalars are blst's
    /// (Montgomery form).
    pub fn fixed_base_mul<C: Curve>(
        &self,
        table: &[C::Affine],
        scalars: &[blst_fr],
        out: &mut [C::Affine],
    ) -> Result<(), CudaError> {
        let layout = Layout::of::<C>()?;
        crossgroth_gpu_host::check_fixed_base(C::NAME, table.len(), scalars.len(), out.len())
            .map_err(CudaError::InvalidInput)?;
        if scalars.is_empty() {
            return Ok(());
        }
        let pw = layout.affine_words();
        let _g = self.guard();
        let d_table = self.upload_u64(as_words(table, pw), "fixed-base table")?;
        let chunk = CHUNK.min(scalars.len());
        let mut d_scalars = self.alloc_u64(4 * chunk, "fixed-base scalars")?;
        let mut d_out = self.alloc_u64(pw * chunk, "fixed-base products")?;
        let f = &self.k.g[layout.group as usize].fixed_base_mul;
        let out_words = as_words_mut(out, pw);
        let started = std::time::Instant::now();
        let mut kernels = std::time::Duration::ZERO;
        for (i, part) in scalars.chunks(chunk).enumerate() {
            let n = part.len();
            let mut view = d_scalars.slice_mut(0..4 * n);
            self.stream
                .memcpy_htod(host::fr_as_u64s(part), &mut view)
                .map_err(|e| CudaError::driver("fixed-base scalars", e))?;
            let n32 = n as u32;
            self.sync("fixed-base scalars")?;
            let t = std::time::Instant::now();
            launch!(self, f, n, 128; &d_table, &d_scalars, &n32, &mut d_out);
            self.sync("fixed-base products")?;
            kernels += t.elapsed();
            let lo = i * chunk * pw;
            self.download_large(
                &d_out,
                &mut out_words[lo..lo + n * pw],
                "fixed-base products",
            )?;
        }
        log::info!(
            "{} {} fixed-base products in {:.2} s ({:.2} s of kernels)",
            scalars.len(),
            C::NAME,
            started.elapsed().as_secs_f64(),
            kernels.as_secs_f64()
        );
        Ok(())
    }
}

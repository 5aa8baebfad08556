//! Parameter generation on the device (shaders/setup/fixed_base.wgsl): every
//! query point of a Groth16 setup is k·G for one generator G and a scalar k a
//! variable or domain element, so a setup is a few fixed-base multiplications
//! of many scalars each. The device sums the window table's entries into XYZZ
//! points; the host normalises them with blst's batched conversion, on its
//! cores, while the device computes the next chunk.

use std::any::TypeId;
use std::thread::ScopedJoinHandle;

use blst::*;
use crossgroth_gpu_host::{Curve, Group, G1, G2};

use crate::device::{affine_words, job, WgpuDevice};
use crate::error::WgpuError;
use crate::gpu::params;
use crate::host;
use crate::msm_fold::{of_xyzz, HostPoints};
use crate::shaders::Module;

pub use crossgroth_gpu_host::FIXED_BASE_TABLE_LEN;

/// Most scalars a pass: bounds the device buffers and the host's copy of a
/// pass (2^20 G2 products are 384 MiB of XYZZ words) while keeping each pass
/// long against its submission.
const MAX_CHUNK: usize = 1 << 20;

/// Fewest points a host thread normalises: below this a thread costs more
/// than the batched inversion it saves.
const MIN_PER_THREAD: usize = 1 << 10;

/// `out[i]` = the point of XYZZ words `words[i]` (blst's Montgomery form) in
/// affine form, on the host's cores, a piece of `out` each.
fn normalise<H: HostPoints>(words: &[u32], out: &mut [H::Affine]) {
    let xyzz_words = 8 * H::FE_WORDS;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(out.len().div_ceil(MIN_PER_THREAD))
        .max(1);
    let per = out.len().div_ceil(threads).max(1);
    std::thread::scope(|sc| {
        for (o, w) in out.chunks_mut(per).zip(words.chunks(per * xyzz_words)) {
            sc.spawn(move || {
                let points: Vec<H::Point> = w.chunks_exact(xyzz_words).map(of_xyzz::<H>).collect();
                H::to_affine(&points, o)
            });
        }
    });
}

/// `out` as blst's affine type `A`, which the caller has found `C::Affine`
/// to be (None where it is another type).
fn as_blst<C: Curve, A: 'static>(out: &mut [C::Affine]) -> Option<&mut [A]> {
    if TypeId::of::<C::Affine>() != TypeId::of::<A>() {
        return None;
    }
    // SAFETY: C::Affine is A, so this is the same slice.
    Some(unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<A>(), out.len()) })
}

impl WgpuDevice {
    /// `out[i] = scalars[i]·G` in affine form (blst's layout, the identity as
    /// (0, 0)), G given by its window table of [`FIXED_BASE_TABLE_LEN`] affine
    /// points (entry w·256 + b = b·2^(8w)·G). Bit for bit what adding those
    /// entries on the host and normalising gives. Scalars are blst's
    /// (Montgomery form). The scalars go through the device in chunks within
    /// the binding limit, and so does the table where it is larger.
    pub fn fixed_base_mul<C: Curve>(
        &self,
        table: &[C::Affine],
        scalars: &[blst_fr],
        out: &mut [C::Affine],
    ) -> Result<(), WgpuError> {
        crossgroth_gpu_host::check_fixed_base(C::NAME, table.len(), scalars.len(), out.len())
            .map_err(WgpuError::InvalidInput)?;
        // The point types are blst's (else an error), before any work.
        affine_words::<C>(&[])?;
        if scalars.is_empty() {
            return Ok(());
        }
        let not_blst =
            || WgpuError::InvalidInput(format!("{}: the point types are not blst's", C::NAME));
        match C::GROUP {
            Group::G1 => {
                let out = as_blst::<C, blst_p1_affine>(out).ok_or_else(not_blst)?;
                self.fixed_base::<C, G1>(table, scalars, out)
            }
            Group::G2 => {
                let out = as_blst::<C, blst_p2_affine>(out).ok_or_else(not_blst)?;
                self.fixed_base::<C, G2>(table, scalars, out)
            }
        }
    }

    /// [`Self::fixed_base_mul`] once the inputs are checked: the table goes
    /// to the device in pieces of at most one binding, then each chunk of
    /// the scalars in one submission (their conversion to canonical form, a
    /// pass a piece of the table, the products' conversion to blst's form).
    fn fixed_base<C: Curve, H: HostPoints>(
        &self,
        table: &[C::Affine],
        scalars: &[blst_fr],
        out: &mut [H::Affine],
    ) -> Result<(), WgpuError> {
        let what = &format!("{} fixed-base products", C::NAME);
        let binding = self.ctx.binding;
        let pt_words = 8 * C::FE_WORDS;
        let pt_bytes = 4 * pt_words as u64;
        let per_piece = (binding / C::AFFINE_BYTES as u64) as usize;
        // the scalars (32 bytes each) take less than their products
        let per = ((binding / pt_bytes) as usize).min(MAX_CHUNK);
        if per_piece == 0 || per == 0 {
            return Err(WgpuError::OutOfMemory(format!(
                "{what}: one product needs {pt_bytes} bytes, over the storage binding limit of {binding} bytes"
            )));
        }
        let _g = self.lock()?;
        let started = std::time::Instant::now();
        let m = Module::Curve(C::GROUP);
        let mut pieces = Vec::with_capacity(table.len().div_ceil(per_piece));
        for piece in table.chunks(per_piece) {
            let buf = self
                .ctx
                .upload(affine_words::<C>(piece)?, 0, "fixed-base table")?;
            self.to_device_form::<C>(&buf, piece.len(), "fixed-base table")?;
            pieces.push((buf, piece.len()));
        }
        let per = per.min(scalars.len());
        let sbuf = self.ctx.storage(32 * per as u64, "fixed-base scalars")?;
        let obuf = self.ctx.storage(pt_bytes * per as u64, what)?;
        let kc = self.ctx.radix.fr_k_canonical();
        let kfrom = self.ctx.module_radix(m).fq_k_from_dev();
        std::thread::scope(|sc| -> Result<(), WgpuError> {
            // The host normalises a chunk while the device computes the next.
            let mut pending: Option<ScopedJoinHandle<'_, ()>> = None;
            let join = |h: ScopedJoinHandle<'_, ()>| {
                h.join()
                    .map_err(|_| WgpuError::gpu(what, "the host normalisation panicked"))
            };
            for (part, dst) in scalars.chunks(per).zip(out.chunks_mut(per)) {
                let n = part.len() as u64;
                self.ctx.write(&sbuf, host::fr_as_words(part), what)?;
                let mut jobs = Vec::with_capacity(pieces.len() + 2);
                jobs.push(job(
                    Module::Fr,
                    "fr_mul_const",
                    params(&[n as u32], &kc),
                    &[(1, &sbuf)],
                    n,
                ));
                let mut lo = 0u32;
                for (k, (buf, len)) in pieces.iter().enumerate() {
                    let hi = lo + *len as u32;
                    jobs.push(job(
                        m,
                        "fixed_base_mul",
                        params(&[n as u32, lo, hi, (k > 0) as u32], &[]),
                        &[(1, buf), (2, &sbuf), (4, &obuf)],
                        n,
                    ));
                    lo = hi;
                }
                let n_fq = n * pt_words as u64 / 12;
                jobs.push(job(
                    m,
                    "fq_mul_const",
                    params(&[n_fq as u32], &kfrom),
                    &[(1, &obuf)],
                    n_fq,
                ));
                let words = self
                    .ctx
                    .run(what, &jobs, &[(&obuf, 0, n * pt_words as u64)])?
                    .into_iter()
                    .next()
                    .unwrap_or_default();
                if words.len() != part.len() * pt_words {
                    return Err(WgpuError::gpu(
                        what,
                        format!("{} words read back for {n} products", words.len()),
                    ));
                }
                if let Some(h) = pending.take() {
                    join(h)?;
                }
                pending = Some(sc.spawn(move || normalise::<H>(&words, dst)));
            }
            match pending {
                Some(h) => join(h),
                None => Ok(()),
            }
        })?;
        log::debug!(
            "{} {what} in {:.2?} ({} table pieces)",
            scalars.len(),
            started.elapsed(),
            pieces.len()
        );
        Ok(())
    }
}

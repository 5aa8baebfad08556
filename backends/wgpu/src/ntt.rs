//! NTTs over Fr and the Groth16 H computation (shaders/ntt/).

use std::sync::Arc;

use blst::*;

use crate::device::{job, WgpuDevice};
use crate::error::WgpuError;
use crate::gpu::params;
use crate::gpu::Job;
use crate::host;
use crate::shaders::Module;

impl WgpuDevice {
    // ------------------------------------------------------------- NTT

    pub(crate) fn twiddles(
        &self,
        log_n: u32,
        inverse: bool,
    ) -> Result<Arc<wgpu::Buffer>, WgpuError> {
        if let Some(b) = self
            .twiddles
            .lock()
            .map_err(|_| WgpuError::gpu("twiddles", "poisoned lock"))?
            .get(&(log_n, inverse))
        {
            return Ok(b.clone());
        }
        let half = 1u64 << (log_n - 1);
        let mut w = host::omega(log_n);
        if inverse {
            w = host::fr_inv(&w);
        }
        let (lo, hi, bits) = self.ctx.radix.split_powers(&w, half);
        let lob = self.ctx.upload(&lo, 0, "twiddles")?;
        let hib = self.ctx.upload(&hi, 0, "twiddles")?;
        let tw = self.ctx.storage(half * 32, "twiddles")?;
        self.ctx.run(
            "twiddles",
            &[job(
                Module::Fr,
                "fr_expand_powers",
                params(&[half as u32, bits], &[]),
                &[(2, &tw), (3, &lob), (4, &hib)],
                half,
            )],
            &[],
        )?;
        let tw = Arc::new(tw);
        let mut g = self
            .twiddles
            .lock()
            .map_err(|_| WgpuError::gpu("twiddles", "poisoned lock"))?;
        if g.len() > 8 {
            g.clear();
        }
        g.insert((log_n, inverse), tw.clone());
        Ok(tw)
    }

    /// The jobs of one in-place NTT (natural order in and out), no scaling.
    pub(crate) fn ntt_jobs<'a>(
        data: &'a wgpu::Buffer,
        tw: &'a wgpu::Buffer,
        log_n: u32,
        out: &mut Vec<Job<'a>>,
    ) {
        let n = 1u64 << log_n;
        out.push(job(
            Module::Fr,
            "fr_bitrev",
            params(&[n as u32, log_n], &[]),
            &[(1, data)],
            n,
        ));
        // Stages two at a time (radix 4: half the passes over the data), the
        // last one alone when log_n is odd.
        let mut s = 0;
        while s < log_n {
            // two stages a pass (n / 4 butterflies of radix 4) or one (n / 2)
            let (kernel, stages) = if s + 1 < log_n {
                ("fr_ntt_stage4", 2)
            } else {
                ("fr_ntt_stage", 1)
            };
            let threads = n >> stages;
            out.push(job(
                Module::Fr,
                kernel,
                params(&[threads as u32, s, log_n], &[]),
                &[(1, data), (2, tw)],
                threads,
            ));
            s += stages;
        }
    }

    /// Refuses log_n above 28; otherwise the log2 of the elements a chunk
    /// holds: log_n itself where the vector fits one binding (the path of
    /// one buffer), else the largest power of two that fits.
    pub(crate) fn chunk_log(&self, log_n: u32, what: &str) -> Result<u32, WgpuError> {
        if log_n > 28 {
            return Err(WgpuError::InvalidInput(format!(
                "{what}: log_n = {log_n} is out of range 0..=28"
            )));
        }
        let per = self.ctx.binding / 32;
        if per == 0 {
            return Err(WgpuError::OutOfMemory(format!(
                "{what}: one element needs 32 bytes, over the storage binding limit of {} bytes",
                self.ctx.binding
            )));
        }
        Ok(per.ilog2().min(log_n))
    }

    /// In-place NTT of `data` (length 2^log_n, Montgomery form) with
    /// omega = ROOT_OF_UNITY^(2^(32 - log_n)); the inverse uses omega^-1 and
    /// multiplies by n^-1 (bellperson's FFT / IFFT).
    pub fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), WgpuError> {
        let e = self.chunk_log(log_n, "ntt")?;
        if data.len() != 1usize << log_n {
            return Err(WgpuError::InvalidInput(format!(
                "ntt: {} elements, expected 2^{log_n}",
                data.len()
            )));
        }
        if log_n == 0 {
            return Ok(());
        }
        let _g = self.lock()?;
        if e < log_n {
            return self.ntt_chunked(data, log_n, e, inverse);
        }
        let n = 1u64 << log_n;
        let buf = self.ctx.upload(host::fr_as_words(data), 0, "ntt data")?;
        let tw = self.twiddles(log_n, inverse)?;
        let mut jobs = vec![job(
            Module::Fr,
            "fr_mul_const",
            params(&[n as u32], &self.ctx.radix.fr_k_to_dev()),
            &[(1, &buf)],
            n,
        )];
        Self::ntt_jobs(&buf, &tw, log_n, &mut jobs);
        if inverse {
            let ninv = host::fr_inv(&host::fr_from_u64(n));
            jobs.push(job(
                Module::Fr,
                "fr_mul_const",
                params(&[n as u32], &self.ctx.radix.fr_dev(&ninv)),
                &[(1, &buf)],
                n,
            ));
        }
        jobs.push(job(
            Module::Fr,
            "fr_mul_const",
            params(&[n as u32], &self.ctx.radix.fr_k_from_dev()),
            &[(1, &buf)],
            n,
        ));
        let words = self.ctx.run("ntt", &jobs, &[(&buf, 0, n * 8)])?;
        let v = host::words_to_fr(&words[0]);
        data.copy_from_slice(&v);
        Ok(())
    }

    /// The Groth16 quotient polynomial H for a 2^log_m domain (bellperson's
    /// steps): a, b, c (each at most m long, zero-padded) are interpolated,
    /// evaluated on the coset g·<omega> (g = 7), combined as
    /// (a·b − c)·(g^m − 1)^-1 and interpolated back from the coset; the first
    /// m − 1 coefficients are returned (Montgomery form).
    pub fn compute_h(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<Vec<blst_fr>, WgpuError> {
        let coefficients = (1usize << log_m.min(63)).saturating_sub(1);
        let mut h = a.to_vec();
        if h.len() < coefficients {
            h.resize(coefficients, blst_fr::default());
        }
        self.compute_h_in_place(&mut h, b, c, log_m)?;
        h.truncate(coefficients);
        Ok(h)
    }

    /// [`Self::compute_h`] with H's m − 1 coefficients written over `a` (at
    /// least that long), read back straight into it: no second vector of
    /// gigabytes at Filecoin sizes.
    pub fn compute_h_in_place(
        &self,
        a: &mut [blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<(), WgpuError> {
        if log_m == 0 {
            return Ok(());
        }
        if (a.len() as u64) < (1u64 << log_m.min(63)) - 1 {
            return Err(WgpuError::InvalidInput(format!(
                "compute_h: {} elements of a cannot hold H's 2^{log_m} - 1",
                a.len(),
            )));
        }
        let h = self.compute_h_on_device(a, b, c, log_m)?;
        self.read_h(&h, a)
    }

    /// [`Self::compute_h`] with H kept on the device, for the H MSM to read
    /// in place ([`Self::msm_h`]): H is neither read back nor sent up again.
    pub fn compute_h_on_device(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<DeviceH, WgpuError> {
        let staged = self.stage_abc(a, b, c, log_m)?;
        self.compute_h_staged(staged)
    }

    /// a, b and c written to the device without taking it, so that a caller
    /// can send the next proof's vectors while the current one's MSMs run
    /// there; [`Self::compute_h_staged`] computes H from them.
    pub fn stage_abc(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<StagedAbc, WgpuError> {
        let e = self.chunk_log(log_m, "compute_h")?;
        let m = 1u64 << log_m;
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            if v.len() as u64 > m {
                return Err(WgpuError::InvalidInput(format!(
                    "compute_h: {name} has {} > 2^{log_m} elements",
                    v.len()
                )));
            }
        }
        if log_m == 0 {
            return Err(WgpuError::InvalidInput(
                "compute_h: a one-point domain has no coefficient of H".into(),
            ));
        }
        let began = std::time::Instant::now();
        // Chunks of 2^e, each zero-padded to its full length.
        let ne = 1u64 << e;
        let mut vecs = Vec::with_capacity(3);
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            let bufs = (0..1usize << (log_m - e))
                .map(|j| {
                    let lo = (j << e).min(v.len());
                    let hi = ((j + 1) << e).min(v.len());
                    self.ctx
                        .upload(host::fr_as_words(&v[lo..hi]), ne * 32, name)
                })
                .collect::<Result<Vec<_>, _>>()?;
            vecs.push(bufs);
        }
        Ok(StagedAbc {
            vecs,
            log_m,
            e,
            owner: self.id,
            written: began.elapsed(),
        })
    }

    /// H from a, b and c [`Self::stage_abc`] wrote, kept on the device (their
    /// buffers become H's).
    pub fn compute_h_staged(&self, staged: StagedAbc) -> Result<DeviceH, WgpuError> {
        if staged.owner != self.id {
            return Err(WgpuError::InvalidInput(
                "a, b and c written by another wgpu backend".into(),
            ));
        }
        let StagedAbc {
            vecs,
            log_m,
            e,
            written,
            ..
        } = staged;
        let bufs = if e < log_m {
            self.compute_h_chunked(vecs, log_m, e, written)?
        } else {
            // one buffer each of a, b and c
            vec![self.compute_h_whole(vecs.into_iter().flatten().collect(), log_m)?]
        };
        Ok(DeviceH {
            bufs,
            log_m,
            e,
            owner: self.id,
        })
    }

    /// H's m − 1 coefficients from the device into `out` (at least that
    /// long).
    pub fn read_h(&self, h: &DeviceH, out: &mut [blst_fr]) -> Result<(), WgpuError> {
        self.check_owner(h)?;
        let n = h.len();
        let Some(out) = out.get_mut(..n) else {
            return Err(WgpuError::InvalidInput(format!(
                "read_h: {} elements cannot hold H's {n}",
                out.len()
            )));
        };
        let _g = self.lock()?;
        if h.bufs.len() > 1 {
            let began = std::time::Instant::now();
            self.read_transposed(&h.bufs, h.e, out)?;
            log::info!(
                "wgpu: H of 2^{} read back in {:.2} s",
                h.log_m,
                began.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        self.ctx.run_reading(
            "compute_h read",
            &[],
            &[(&h.bufs[0], 0, n as u64 * 8)],
            &mut |_, at, words| words_into_fr(words, &mut out[(at / 8) as usize..]),
        )
    }

    pub(crate) fn check_owner(&self, h: &DeviceH) -> Result<(), WgpuError> {
        if h.owner != self.id {
            return Err(WgpuError::InvalidInput(
                "an H computed by another wgpu backend".into(),
            ));
        }
        Ok(())
    }

    /// H of a domain that fits one buffer, from a, b and c in `bufs` (one
    /// buffer each), left in the first in natural order.
    fn compute_h_whole(
        &self,
        mut bufs: Vec<wgpu::Buffer>,
        log_m: u32,
    ) -> Result<wgpu::Buffer, WgpuError> {
        let m = 1u64 << log_m;
        let g = host::fr_from_u64(host::COSET_GENERATOR);
        let ginv = host::fr_inv(&g);
        let minv = host::fr_inv(&host::fr_from_u64(m));
        let zinv = host::fr_inv(&host::fr_sub(&host::fr_pow(&g, m), &host::fr_from_u64(1)));
        let (glo, ghi, gbits) = self.ctx.radix.split_powers(&g, m);
        let (ilo, ihi, ibits) = self.ctx.radix.split_powers(&ginv, m);
        let d_glo = self.ctx.upload(&glo, 0, "coset table")?;
        let d_ghi = self.ctx.upload(&ghi, 0, "coset table")?;
        let d_ilo = self.ctx.upload(&ilo, 0, "coset table")?;
        let d_ihi = self.ctx.upload(&ihi, 0, "coset table")?;
        let tw_f = self.twiddles(log_m, false)?;
        let tw_i = self.twiddles(log_m, true)?;
        let minv_d = self.ctx.radix.fr_dev(&minv);
        let _g = self.lock()?;
        let mut jobs = Vec::new();
        for d in &bufs {
            jobs.push(job(
                Module::Fr,
                "fr_mul_const",
                params(&[m as u32], &self.ctx.radix.fr_k_to_dev()),
                &[(1, d)],
                m,
            ));
            Self::ntt_jobs(d, &tw_i, log_m, &mut jobs);
            jobs.push(job(
                Module::Fr,
                "fr_scale_powers",
                params(&[m as u32, gbits], &minv_d),
                &[(1, d), (3, &d_glo), (4, &d_ghi)],
                m,
            ));
            Self::ntt_jobs(d, &tw_f, log_m, &mut jobs);
        }
        jobs.push(job(
            Module::Fr,
            "fr_h_combine",
            params(&[m as u32], &self.ctx.radix.fr_dev(&zinv)),
            &[(1, &bufs[0]), (2, &bufs[1]), (3, &bufs[2])],
            m,
        ));
        Self::ntt_jobs(&bufs[0], &tw_i, log_m, &mut jobs);
        jobs.push(job(
            Module::Fr,
            "fr_scale_powers",
            params(&[m as u32, ibits], &minv_d),
            &[(1, &bufs[0]), (3, &d_ilo), (4, &d_ihi)],
            m,
        ));
        jobs.push(job(
            Module::Fr,
            "fr_mul_const",
            params(&[m as u32], &self.ctx.radix.fr_k_from_dev()),
            &[(1, &bufs[0])],
            m,
        ));
        self.ctx.run("compute_h", &jobs, &[])?;
        Ok(bufs.swap_remove(0))
    }
}

/// A proof's a, b and c on the device ([`WgpuDevice::stage_abc`]), in the
/// buffers their H will take: K = 2^(log_m − e) chunks of 2^e each. Dropping
/// it frees the device memory.
pub struct StagedAbc {
    pub(crate) vecs: Vec<Vec<wgpu::Buffer>>,
    pub(crate) log_m: u32,
    pub(crate) e: u32,
    pub(crate) owner: u64,
    /// How long the writes took, for the log of a chunked H.
    pub(crate) written: std::time::Duration,
}

impl std::fmt::Debug for StagedAbc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StagedAbc(2^{}, chunks of 2^{})", self.log_m, self.e)
    }
}

/// H computed by [`WgpuDevice::compute_h_on_device`] and kept on the device:
/// its m − 1 coefficients (blst's Montgomery form) in one buffer in natural
/// order, or in K = 2^(log_m − e) chunks of 2^e in the chunked NTT's
/// transposed layout (chunk A, offset q holds coefficient rev(A) + K q; see
/// `ntt_chunks.rs`). Dropping it frees the device memory.
pub struct DeviceH {
    pub(crate) bufs: Vec<wgpu::Buffer>,
    pub(crate) log_m: u32,
    /// log2 of the coefficients a buffer holds.
    pub(crate) e: u32,
    pub(crate) owner: u64,
}

impl DeviceH {
    /// H's coefficients: m − 1.
    pub fn len(&self) -> usize {
        (1usize << self.log_m) - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for DeviceH {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceH(2^{} in {} buffers)",
            self.log_m,
            self.bufs.len()
        )
    }
}

/// Fr elements from their 8 little-endian u32 words each, into `out`, split
/// over the host's threads.
pub(crate) fn words_into_fr(words: &[u32], out: &mut [blst_fr]) {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    // split by what was read (a staging slot's piece of a longer `out`)
    let n = out.len().min(words.len() / 8);
    let per = n.div_ceil(threads).max(1 << 16);
    std::thread::scope(|sc| {
        for (o, w) in out.chunks_mut(per).zip(words.chunks(8 * per)) {
            sc.spawn(move || {
                for (f, c) in o.iter_mut().zip(w.chunks_exact(8)) {
                    *f = host::fr_from_words(c);
                }
            });
        }
    });
}

//! The NTT and H of vectors larger than one storage binding: 2^log_n
//! elements held in K = 2^(log_n - e) chunks of E = 2^e, each its own buffer.
//!
//! With index i = A E + j (chunk A, offset j) and k = k1 + K k2, the NTT is
//! X[k1 + K k2] = Σ_j ω_E^(j k2) ω^(j k1) Σ_A ω_K^(A k1) x[A E + j]
//! (ω_K = ω^E, ω_E = ω^K): radix-2 butterflies between whole chunks (a K-point
//! NTT of every column j, decimation in frequency, so that chunk position A
//! ends up holding k1 = rev(A)), a scaling of offset j by ω^(j k1), then the
//! E-point NTT of each chunk as in the one-buffer path. Chunk A then holds
//! X[rev(A) + K k2] at offset k2: the "transposed" layout, put in order by the
//! host as it reads the chunks back. The same steps in reverse order (chunk
//! NTTs, scaling, butterflies in time) take the transposed layout back to the
//! natural one, so H goes natural → transposed → natural → transposed on the
//! device and is read back once. Every step is exact field arithmetic, so the
//! words equal the one-buffer path's.

use std::sync::Arc;

use blst::blst_fr;

use crate::device::{job, WgpuDevice};
use crate::error::WgpuError;
use crate::gpu::{params, Job};
use crate::host;
use crate::shaders::Module;

/// `a` with its low `bits` bits reversed.
pub(crate) fn rev(a: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        a.reverse_bits() >> (usize::BITS - bits)
    }
}

/// The tables of one chunked NTT (a direction and a size).
struct Plan {
    /// log2 of the elements a chunk holds (E = 2^e).
    e: u32,
    /// The chunk NTTs' twiddles (None for chunks of one element).
    tw: Option<Arc<wgpu::Buffer>>,
    /// Per chunk position A: split tables of the powers of ω^rev(A).
    scale: Vec<(wgpu::Buffer, wgpu::Buffer, u32)>,
    /// ω_K = ω^E (blst form): the butterflies between chunks use its powers.
    w_k: blst_fr,
}

impl WgpuDevice {
    fn chunk_plan(&self, log_n: u32, e: u32, inverse: bool) -> Result<Plan, WgpuError> {
        let mut w = host::omega(log_n);
        if inverse {
            w = host::fr_inv(&w);
        }
        let kl = log_n - e;
        // ω^K = omega(e): the chunk NTTs are the one-buffer NTT of 2^e
        let tw = if e > 0 {
            Some(self.twiddles(e, inverse)?)
        } else {
            None
        };
        let mut scale = Vec::with_capacity(1 << kl);
        for a in 0..1usize << kl {
            let x = host::fr_pow(&w, rev(a, kl) as u64);
            let (lo, hi, bits) = self.ctx.radix.split_powers(&x, 1 << e);
            scale.push((
                self.ctx.upload(&lo, 0, "ntt chunk twiddles")?,
                self.ctx.upload(&hi, 0, "ntt chunk twiddles")?,
                bits,
            ));
        }
        Ok(Plan {
            e,
            tw,
            scale,
            w_k: host::fr_pow(&w, 1 << e),
        })
    }

    /// The radix-2 stages between chunks: in frequency (natural positions
    /// in, bit-reversed out) or in time (the reverse).
    fn cross_jobs<'a>(
        &self,
        plan: &Plan,
        bufs: &'a [wgpu::Buffer],
        dit: bool,
        jobs: &mut Vec<Job<'a>>,
    ) {
        let k = bufs.len();
        let ne = 1u64 << plan.e;
        let mut halves: Vec<usize> = std::iter::successors(Some(1), |h| Some(h * 2))
            .take_while(|&h| h < k)
            .collect();
        if !dit {
            halves.reverse();
        }
        for h in halves {
            for a in (0..k).filter(|a| a % (2 * h) < h) {
                let p = a % (2 * h);
                let w = host::fr_pow(&plan.w_k, (p * k / (2 * h)) as u64);
                jobs.push(job(
                    Module::Fr,
                    "fr_ntt_cross",
                    params(&[ne as u32, dit as u32], &self.ctx.radix.fr_dev(&w)),
                    &[(1, &bufs[a]), (2, &bufs[a + h])],
                    ne,
                ));
            }
        }
    }

    /// Chunk position A, offset j times c ω^(j rev(A)).
    fn scale_jobs<'a>(
        &self,
        plan: &'a Plan,
        bufs: &'a [wgpu::Buffer],
        c: &blst_fr,
        jobs: &mut Vec<Job<'a>>,
    ) {
        let ne = 1u64 << plan.e;
        let k = self.ctx.radix.fr_dev(c);
        for (buf, (lo, hi, bits)) in bufs.iter().zip(&plan.scale) {
            jobs.push(job(
                Module::Fr,
                "fr_scale_powers",
                params(&[ne as u32, *bits], &k),
                &[(1, buf), (3, lo), (4, hi)],
                ne,
            ));
        }
    }

    fn chunk_ntt_jobs<'a>(plan: &'a Plan, bufs: &'a [wgpu::Buffer], jobs: &mut Vec<Job<'a>>) {
        if let Some(tw) = &plan.tw {
            for buf in bufs {
                Self::ntt_jobs(buf, tw, plan.e, jobs);
            }
        }
    }

    /// Natural layout in, transposed out, every element times c.
    fn to_transposed<'a>(
        &self,
        plan: &'a Plan,
        bufs: &'a [wgpu::Buffer],
        c: &blst_fr,
        jobs: &mut Vec<Job<'a>>,
    ) {
        self.cross_jobs(plan, bufs, false, jobs);
        self.scale_jobs(plan, bufs, c, jobs);
        Self::chunk_ntt_jobs(plan, bufs, jobs);
    }

    /// Transposed layout in, natural out.
    fn to_natural<'a>(&self, plan: &'a Plan, bufs: &'a [wgpu::Buffer], jobs: &mut Vec<Job<'a>>) {
        Self::chunk_ntt_jobs(plan, bufs, jobs);
        self.scale_jobs(plan, bufs, &host::fr_from_u64(1), jobs);
        self.cross_jobs(plan, bufs, true, jobs);
    }

    fn mul_const_jobs<'a>(bufs: &'a [wgpu::Buffer], ne: u64, k: [u32; 8], jobs: &mut Vec<Job<'a>>) {
        for buf in bufs {
            jobs.push(job(
                Module::Fr,
                "fr_mul_const",
                params(&[ne as u32], &k),
                &[(1, buf)],
                ne,
            ));
        }
    }

    /// Reads chunks in the transposed layout (position A, offset k2 holds
    /// element rev(A) + K k2) into `out`, as far as it goes. Each chunk is
    /// written straight from the words read, rows of K elements split over
    /// the host's threads (a strided write of up to 2^25 elements).
    pub(crate) fn read_transposed(
        &self,
        bufs: &[wgpu::Buffer],
        e: u32,
        out: &mut [blst_fr],
    ) -> Result<(), WgpuError> {
        let k = bufs.len();
        let kl = k.ilog2();
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        for (a, buf) in bufs.iter().enumerate() {
            let col = rev(a, kl);
            let out = &mut *out;
            let scatter = &mut |_: usize, at: u64, words: &[u32]| {
                // this piece's rows (a staging slot's), from row at / 8 on,
                // split over the threads
                let out = &mut out[(at / 8) as usize * k..];
                let rows = (words.len() / 8).div_ceil(threads).max(1);
                std::thread::scope(|sc| {
                    for (block, src) in out.chunks_mut(k * rows).zip(words.chunks(8 * rows)) {
                        sc.spawn(move || {
                            for (row, w) in block.chunks_mut(k).zip(src.chunks_exact(8)) {
                                if let Some(d) = row.get_mut(col) {
                                    *d = host::fr_from_words(w);
                                }
                            }
                        });
                    }
                })
            };
            self.ctx
                .run_reading("ntt read", &[], &[(buf, 0, 8u64 << e)], scatter)?;
        }
        Ok(())
    }

    /// [`WgpuDevice::ntt`] for 2^log_n elements in chunks of 2^e (e < log_n).
    pub(crate) fn ntt_chunked(
        &self,
        data: &mut [blst_fr],
        log_n: u32,
        e: u32,
        inverse: bool,
    ) -> Result<(), WgpuError> {
        let ne = 1u64 << e;
        let plan = self.chunk_plan(log_n, e, inverse)?;
        let bufs = data
            .chunks(ne as usize)
            .map(|c| self.ctx.upload(host::fr_as_words(c), 0, "ntt data"))
            .collect::<Result<Vec<_>, _>>()?;
        let c = if inverse {
            host::fr_inv(&host::fr_from_u64(1 << log_n))
        } else {
            host::fr_from_u64(1)
        };
        let mut jobs = Vec::new();
        Self::mul_const_jobs(&bufs, ne, self.ctx.radix.fr_k_to_dev(), &mut jobs);
        self.to_transposed(&plan, &bufs, &c, &mut jobs);
        Self::mul_const_jobs(&bufs, ne, self.ctx.radix.fr_k_from_dev(), &mut jobs);
        self.ctx.run("ntt", &jobs, &[])?;
        self.read_transposed(&bufs, e, data)
    }

    /// [`WgpuDevice::compute_h_staged`] for a 2^log_m domain in chunks of
    /// 2^e (e < log_m), from a, b and c already in `vecs` (`written`: how long
    /// their writes took): bellperson's steps, the coset scalings on the
    /// transposed layout (element p + K q times g^p (g^K)^q). H is left in
    /// the transposed layout.
    pub(crate) fn compute_h_chunked(
        &self,
        mut vecs: Vec<Vec<wgpu::Buffer>>,
        log_m: u32,
        e: u32,
        written: std::time::Duration,
    ) -> Result<Vec<wgpu::Buffer>, WgpuError> {
        let m = 1u64 << log_m;
        let ne = 1u64 << e;
        let kl = log_m - e;
        let k = 1usize << kl;
        let g = host::fr_from_u64(host::COSET_GENERATOR);
        let ginv = host::fr_inv(&g);
        let minv = host::fr_inv(&host::fr_from_u64(m));
        let zinv = host::fr_inv(&host::fr_sub(&host::fr_pow(&g, m), &host::fr_from_u64(1)));
        let one = host::fr_from_u64(1);
        let fwd = self.chunk_plan(log_m, e, false)?;
        let inv = self.chunk_plan(log_m, e, true)?;
        let coset = |x: &blst_fr| -> Result<_, WgpuError> {
            let (lo, hi, bits) = self.ctx.radix.split_powers(&host::fr_pow(x, k as u64), ne);
            Ok((
                self.ctx.upload(&lo, 0, "coset table")?,
                self.ctx.upload(&hi, 0, "coset table")?,
                bits,
            ))
        };
        let (glo, ghi, gbits) = coset(&g)?;
        let (ilo, ihi, ibits) = coset(&ginv)?;
        let began = std::time::Instant::now();
        let _g = self.lock()?;
        let waited = began.elapsed();
        // Coset scalings c g^p of each chunk position (p = rev(A)).
        let consts = |x: &blst_fr| -> Vec<[u32; 8]> {
            (0..k)
                .map(|j| {
                    let s = host::fr_mul(&minv, &host::fr_pow(x, rev(j, kl) as u64));
                    self.ctx.radix.fr_dev(&s)
                })
                .collect()
        };
        let (cg, ci) = (consts(&g), consts(&ginv));
        let mut jobs = Vec::new();
        for bufs in &vecs {
            Self::mul_const_jobs(bufs, ne, self.ctx.radix.fr_k_to_dev(), &mut jobs);
            self.to_transposed(&inv, bufs, &one, &mut jobs);
            for (buf, kc) in bufs.iter().zip(&cg) {
                jobs.push(job(
                    Module::Fr,
                    "fr_scale_powers",
                    params(&[ne as u32, gbits], kc),
                    &[(1, buf), (3, &glo), (4, &ghi)],
                    ne,
                ));
            }
            self.to_natural(&fwd, bufs, &mut jobs);
        }
        let zk = self.ctx.radix.fr_dev(&zinv);
        for ((x, y), z) in vecs[0].iter().zip(&vecs[1]).zip(&vecs[2]) {
            jobs.push(job(
                Module::Fr,
                "fr_h_combine",
                params(&[ne as u32], &zk),
                &[(1, x), (2, y), (3, z)],
                ne,
            ));
        }
        self.to_transposed(&inv, &vecs[0], &one, &mut jobs);
        for (buf, kc) in vecs[0].iter().zip(&ci) {
            jobs.push(job(
                Module::Fr,
                "fr_scale_powers",
                params(&[ne as u32, ibits], kc),
                &[(1, buf), (3, &ilo), (4, &ihi)],
                ne,
            ));
        }
        Self::mul_const_jobs(&vecs[0], ne, self.ctx.radix.fr_k_from_dev(), &mut jobs);
        let submitted = began.elapsed();
        self.ctx.run("compute_h", &jobs, &[])?;
        // Where a large H's time goes, for whoever tunes this path.
        log::info!(
            "wgpu: H of 2^{log_m} in {k} chunks: a, b, c written in {:.2} s, the device \
             waited for {:.2} s, kernels {:.2} s",
            written.as_secs_f64(),
            waited.as_secs_f64(),
            (began.elapsed() - submitted).as_secs_f64(),
        );
        drop(jobs);
        Ok(vecs.swap_remove(0))
    }
}

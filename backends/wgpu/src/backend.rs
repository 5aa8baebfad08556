//! `WgpuBackend`: resident bases, MSM (G1, G2), NTT and the Groth16 H
//! polynomial on any wgpu adapter.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use blst::*;

use crate::error::WgpuError;
use crate::gpu::{params, Ctx, Job};
use crate::host;
use crate::shaders::Module;

/// Backend options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Use the SHADER_INT64 field code (29-bit limbs, u64 accumulators)
    /// where the adapter offers it; otherwise, or when false, the portable
    /// u32 code (13-bit limbs).
    pub allow_int64: bool,
    /// Use the adapter at this index of [`crate::probe`]'s list instead of the
    /// preferred one (engines with one worker per adapter open each this way).
    pub adapter: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            allow_int64: true,
            adapter: None,
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// G1 bases resident on the device (blst affine, converted to the device's
/// Montgomery form). Usable only with the backend that uploaded them.
pub struct G1Bases {
    buf: wgpu::Buffer,
    len: usize,
    owner: u64,
}

/// G2 bases resident on the device; see [`G1Bases`].
pub struct G2Bases {
    buf: wgpu::Buffer,
    len: usize,
    owner: u64,
}

impl G1Bases {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl G2Bases {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Curve {
    G1,
    G2,
}

impl Curve {
    /// u32 words per coordinate.
    fn fw(self) -> u64 {
        match self {
            Curve::G1 => 12,
            Curve::G2 => 24,
        }
    }
    fn module(self) -> Module {
        match self {
            Curve::G1 => Module::G1,
            Curve::G2 => Module::G2,
        }
    }
}

/// What the device returns for one MSM: per window, T XYZZ points whose sum
/// is the window sum; partial sums of the bases with scalar 1.
struct MsmOut {
    c: u32,
    windows: Vec<Vec<u32>>,
    ones: Vec<u32>,
}

/// The wgpu backend. Thread-safe; operations are serialised internally.
pub struct WgpuBackend {
    ctx: Ctx,
    id: u64,
    guard: Mutex<()>,
    twiddles: Mutex<HashMap<(u32, bool), Arc<wgpu::Buffer>>>,
}

fn job<'a>(
    module: Module,
    entry: &'static str,
    params: [u32; 32],
    bufs: &[(usize, &'a wgpu::Buffer)],
    threads: u64,
) -> Job<'a> {
    let mut b: [Option<&'a wgpu::Buffer>; 5] = [None; 5];
    for (slot, buf) in bufs {
        b[slot - 1] = Some(*buf);
    }
    Job {
        module,
        entry,
        params,
        bufs: b,
        threads,
    }
}

fn fp_mul(a: &blst_fp, b: &blst_fp) -> blst_fp {
    let mut r = blst_fp::default();
    unsafe { blst_fp_mul(&mut r, a, b) };
    r
}
fn fp_sqr(a: &blst_fp) -> blst_fp {
    let mut r = blst_fp::default();
    unsafe { blst_fp_sqr(&mut r, a) };
    r
}
fn fp2_of(w: &[u32]) -> blst_fp2 {
    blst_fp2 {
        fp: [host::words_to_fp(&w[0..12]), host::words_to_fp(&w[12..24])],
    }
}
fn fp2_mul(a: &blst_fp2, b: &blst_fp2) -> blst_fp2 {
    let mut r = blst_fp2::default();
    unsafe { blst_fp2_mul(&mut r, a, b) };
    r
}
fn fp2_sqr(a: &blst_fp2) -> blst_fp2 {
    let mut r = blst_fp2::default();
    unsafe { blst_fp2_sqr(&mut r, a) };
    r
}

/// XYZZ (blst Montgomery form) -> Jacobian: (X ZZ^2, Y ZZZ^2, ZZZ).
fn p1_of_xyzz(w: &[u32]) -> blst_p1 {
    let (x, y) = (host::words_to_fp(&w[0..12]), host::words_to_fp(&w[12..24]));
    let (zz, zzz) = (host::words_to_fp(&w[24..36]), host::words_to_fp(&w[36..48]));
    blst_p1 {
        x: fp_mul(&x, &fp_sqr(&zz)),
        y: fp_mul(&y, &fp_sqr(&zzz)),
        z: zzz,
    }
}
fn p2_of_xyzz(w: &[u32]) -> blst_p2 {
    let (x, y) = (fp2_of(&w[0..24]), fp2_of(&w[24..48]));
    let (zz, zzz) = (fp2_of(&w[48..72]), fp2_of(&w[72..96]));
    blst_p2 {
        x: fp2_mul(&x, &fp2_sqr(&zz)),
        y: fp2_mul(&y, &fp2_sqr(&zzz)),
        z: zzz,
    }
}

impl WgpuBackend {
    /// The preferred adapter (a discrete GPU first; `CROSSGROTH_WGPU_ADAPTER`
    /// picks one by name substring), default options.
    pub fn new() -> Result<Self, WgpuError> {
        Self::with_options(Options::default())
    }

    pub fn with_options(opts: Options) -> Result<Self, WgpuError> {
        let ctx = Ctx::new(opts.allow_int64, opts.adapter)?;
        Ok(WgpuBackend {
            ctx,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            guard: Mutex::new(()),
            twiddles: Mutex::new(HashMap::new()),
        })
    }

    /// "NVIDIA H200 (Vulkan, DiscreteGpu, driver ..., SHADER_INT64 unused)".
    pub fn info(&self) -> String {
        let i = &self.ctx.info;
        format!(
            "{} ({}, {}, driver {} {}, SHADER_INT64 {}, timestamps {})",
            i.name,
            i.backend,
            i.device_type,
            i.driver,
            i.driver_info,
            if self.ctx.int64 {
                "used (29-bit limbs, u64 accumulators)"
            } else if i.shader_int64 {
                "available, not used"
            } else {
                "unavailable"
            },
            if self.ctx.timestamps { "yes" } else { "no" }
        )
    }

    pub fn adapter(&self) -> &crate::AdapterInfo {
        &self.ctx.info
    }

    /// Whether the SHADER_INT64 path is in use.
    pub fn uses_int64(&self) -> bool {
        self.ctx.int64
    }

    /// Total time spent so far creating shader modules and pipelines.
    pub fn compile_time(&self) -> Duration {
        Duration::from_nanos(self.ctx.compile_ns.load(Ordering::Relaxed))
    }

    /// Creates every pipeline now (instead of on first use).
    pub fn warm_up(&self) -> Result<(), WgpuError> {
        let _g = self.lock()?;
        for (m, e) in [
            (Module::Fr, "fr_mul_const"),
            (Module::Fr, "fr_bitrev"),
            (Module::Fr, "fr_ntt_stage"),
            (Module::Fr, "fr_expand_powers"),
            (Module::Fr, "fr_scale_powers"),
            (Module::Fr, "fr_h_combine"),
            (Module::Sort, "msm_hist"),
            (Module::Sort, "msm_scan"),
            (Module::Sort, "msm_scatter"),
            (Module::G1, "fq_mul_const"),
            (Module::G1, "msm_acc"),
            (Module::G2, "msm_acc"),
        ] {
            self.ctx.pipeline(m, e)?;
        }
        Ok(())
    }

    /// Runs `f` and returns its result with the device time it took: the sum,
    /// over the submissions `f` made, of the GPU time from the start of the
    /// first compute pass to the end of the last (timestamp queries; uploads
    /// and read-backs are not included). Where the adapter has no timestamp
    /// queries ([`Self::has_timestamps`] is false) it is the host's wall-clock
    /// time of `f` instead. Calls made by other threads meanwhile are counted
    /// too: time one thing at a time.
    pub fn time<R>(
        &self,
        f: impl FnOnce(&Self) -> Result<R, WgpuError>,
    ) -> Result<(R, Duration), WgpuError> {
        self.ctx.gpu_ns.store(0, Ordering::Relaxed);
        self.ctx.timing.store(true, Ordering::Relaxed);
        let t = std::time::Instant::now();
        let r = f(self);
        let wall = t.elapsed();
        self.ctx.timing.store(false, Ordering::Relaxed);
        let r = r?;
        let d = if self.ctx.timestamps {
            Duration::from_nanos(self.ctx.gpu_ns.load(Ordering::Relaxed))
        } else {
            wall
        };
        Ok((r, d))
    }

    /// Whether [`Self::time`] reports GPU timestamps (else wall-clock time).
    pub fn has_timestamps(&self) -> bool {
        self.ctx.timestamps
    }

    /// Waits for all submitted work. Every call of this crate already waits
    /// for its results; this is for symmetry with the CUDA backend.
    pub fn synchronize(&self) -> Result<(), WgpuError> {
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| WgpuError::gpu("synchronize", format!("poll: {e}")))?;
        self.ctx.check("synchronize")
    }

    fn lock(&self) -> Result<MutexGuard<'_, ()>, WgpuError> {
        self.guard
            .lock()
            .map_err(|_| WgpuError::gpu("backend", "a previous call panicked"))
    }

    // ------------------------------------------------------------- bases

    fn upload_bases(
        &self,
        words: &[u32],
        n_fq: u64,
        what: &str,
    ) -> Result<wgpu::Buffer, WgpuError> {
        let buf = self.ctx.upload(words, 0, what)?;
        if n_fq > 0 {
            let k = self.ctx.radix.fq_k_to_dev();
            self.ctx.run(
                what,
                &[job(
                    Module::G1,
                    "fq_mul_const",
                    params(&[n_fq as u32], &k),
                    &[(1, &buf)],
                    n_fq,
                )],
                &[],
            )?;
        }
        Ok(buf)
    }

    pub fn upload_g1_bases(&self, bases: &[blst_p1_affine]) -> Result<G1Bases, WgpuError> {
        let _g = self.lock()?;
        check_count(bases.len(), "G1 bases")?;
        // SAFETY: blst_p1_affine is repr(C) {blst_fp x, y}, 12 u64 in all.
        let words =
            unsafe { std::slice::from_raw_parts(bases.as_ptr() as *const u32, bases.len() * 24) };
        let buf = self.upload_bases(words, 2 * bases.len() as u64, "G1 bases")?;
        Ok(G1Bases {
            buf,
            len: bases.len(),
            owner: self.id,
        })
    }

    pub fn upload_g2_bases(&self, bases: &[blst_p2_affine]) -> Result<G2Bases, WgpuError> {
        let _g = self.lock()?;
        check_count(bases.len(), "G2 bases")?;
        // SAFETY: blst_p2_affine is repr(C) {blst_fp2 x, y}, 24 u64 in all.
        let words =
            unsafe { std::slice::from_raw_parts(bases.as_ptr() as *const u32, bases.len() * 48) };
        let buf = self.upload_bases(words, 4 * bases.len() as u64, "G2 bases")?;
        Ok(G2Bases {
            buf,
            len: bases.len(),
            owner: self.id,
        })
    }

    // ------------------------------------------------------------- MSM

    /// Σ scalars[i] · bases[rank(i)] over G1.
    ///
    /// Without a density, rank(i) = i and `scalars.len() <= bases.len()`.
    /// With a density bitmap (bit i of word i / 64 set = variable i included),
    /// `scalars` holds one value per variable, variables whose bit is clear are
    /// skipped, and an included variable uses base number rank(i) = number of
    /// included variables before i (bellperson's layout). The bitmap must
    /// cover `scalars.len()` bits; bits beyond it are ignored. Scalars are
    /// blst_fr in Montgomery form; scalars 0 and 1 never reach the buckets.
    pub fn msm_g1(
        &self,
        bases: &G1Bases,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p1, WgpuError> {
        if bases.owner != self.id {
            return Err(WgpuError::InvalidInput(
                "msm_g1: the bases were uploaded by another backend".into(),
            ));
        }
        let out = self.msm(Curve::G1, &bases.buf, bases.len, scalars, density)?;
        let pw = 48;
        let mut acc = blst_p1::default();
        for w in out.windows.iter().rev() {
            for _ in 0..out.c {
                unsafe { blst_p1_double(&mut acc, &acc) };
            }
            for p in w.chunks_exact(pw) {
                unsafe { blst_p1_add_or_double(&mut acc, &acc, &p1_of_xyzz(p)) };
            }
        }
        for p in out.ones.chunks_exact(pw) {
            unsafe { blst_p1_add_or_double(&mut acc, &acc, &p1_of_xyzz(p)) };
        }
        Ok(acc)
    }

    /// Σ scalars[i] · bases[rank(i)] over G2; see [`Self::msm_g1`].
    pub fn msm_g2(
        &self,
        bases: &G2Bases,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p2, WgpuError> {
        if bases.owner != self.id {
            return Err(WgpuError::InvalidInput(
                "msm_g2: the bases were uploaded by another backend".into(),
            ));
        }
        let out = self.msm(Curve::G2, &bases.buf, bases.len, scalars, density)?;
        let pw = 96;
        let mut acc = blst_p2::default();
        for w in out.windows.iter().rev() {
            for _ in 0..out.c {
                unsafe { blst_p2_double(&mut acc, &acc) };
            }
            for p in w.chunks_exact(pw) {
                unsafe { blst_p2_add_or_double(&mut acc, &acc, &p2_of_xyzz(p)) };
            }
        }
        for p in out.ones.chunks_exact(pw) {
            unsafe { blst_p2_add_or_double(&mut acc, &acc, &p2_of_xyzz(p)) };
        }
        Ok(acc)
    }

    fn msm(
        &self,
        curve: Curve,
        bases: &wgpu::Buffer,
        nbases: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<MsmOut, WgpuError> {
        // Host pass: drop zeros, set ones aside, rank through the density.
        let one = host::fr_from_u64(1).l;
        let mut idx: Vec<u32> = Vec::new();
        let mut sc: Vec<blst_fr> = Vec::new();
        let mut ones: Vec<u32> = Vec::new();
        let mut classify = |rank: usize, s: &blst_fr| {
            if s.l == [0u64; 4] {
            } else if s.l == one {
                ones.push(rank as u32);
            } else {
                idx.push(rank as u32);
                sc.push(*s);
            }
        };
        match density {
            None => {
                if scalars.len() > nbases {
                    return Err(WgpuError::InvalidInput(format!(
                        "msm: {} scalars for {} bases",
                        scalars.len(),
                        nbases
                    )));
                }
                for (i, s) in scalars.iter().enumerate() {
                    classify(i, s);
                }
            }
            Some(d) => {
                if d.len() * 64 < scalars.len() {
                    return Err(WgpuError::InvalidInput(format!(
                        "msm: the density bitmap has {} bits for {} scalars",
                        d.len() * 64,
                        scalars.len()
                    )));
                }
                let mut rank = 0usize;
                for (i, s) in scalars.iter().enumerate() {
                    if (d[i / 64] >> (i % 64)) & 1 == 1 {
                        if rank >= nbases {
                            return Err(WgpuError::InvalidInput(format!(
                                "msm: the density includes more than the {nbases} bases"
                            )));
                        }
                        classify(rank, s);
                        rank += 1;
                    }
                }
            }
        }
        let fw = curve.fw();
        let pt_words = 4 * fw;
        let m = curve.module();
        let _g = self.lock()?;
        let mut out = MsmOut {
            c: 0,
            windows: Vec::new(),
            ones: Vec::new(),
        };
        let kfrom = self.ctx.radix.fq_k_from_dev();
        let n = idx.len() as u64;
        if n > 0 {
            let c = window_bits(n);
            // signed digits: 2^(c-1) buckets a window, and one window more than
            // 255 / c to take the last carry
            let nb = 1u64 << (c - 1);
            let windows = 255 / c + 1;
            let t_per = (nb / 32).max(1);
            // Bound the buffers of one batch of windows.
            let cap = self
                .ctx
                .limits
                .max_storage_buffer_binding_size
                .min(self.ctx.limits.max_buffer_size)
                .min(1 << 28);
            let per_win = (n * 8).max(nb * pt_words * 4).max(2 * nb * 4);
            let batch = (cap / per_win).clamp(1, windows as u64) as u32;
            let scal = self.ctx.upload(host::fr_as_words(&sc), 0, "msm scalars")?;
            let ib = self.ctx.upload(&idx, 0, "msm indices")?;
            let kc = self.ctx.radix.fr_k_canonical();
            self.ctx.run(
                "msm scalars",
                &[job(
                    Module::Fr,
                    "fr_mul_const",
                    params(&[n as u32], &kc),
                    &[(1, &scal)],
                    n,
                )],
                &[],
            )?;
            out.c = c;
            let mut w0 = 0u32;
            while w0 < windows {
                let nw = batch.min(windows - w0) as u64;
                let counts = self.ctx.storage(2 * nw * nb * 4, "msm counts")?;
                let sorted = self.ctx.storage(nw * n * 4, "msm sorted")?;
                let digits = self.ctx.storage(nw * n * 4, "msm digits")?;
                let buckets = self.ctx.storage(nw * nb * pt_words * 4, "msm buckets")?;
                let res = self
                    .ctx
                    .storage(nw * t_per * pt_words * 4, "msm window sums")?;
                let sp = params(&[n as u32, c, nb as u32, w0, nw as u32], &[]);
                let jobs = [
                    job(
                        Module::Sort,
                        "msm_digits",
                        sp,
                        &[(1, &scal), (5, &digits)],
                        n,
                    ),
                    job(
                        Module::Sort,
                        "msm_hist",
                        sp,
                        &[(3, &counts), (5, &digits)],
                        n,
                    ),
                    job(Module::Sort, "msm_scan", sp, &[(3, &counts)], nw),
                    job(
                        Module::Sort,
                        "msm_scatter",
                        sp,
                        &[(2, &ib), (3, &counts), (4, &sorted), (5, &digits)],
                        n,
                    ),
                    job(
                        m,
                        "msm_acc",
                        params(&[n as u32, nb as u32, nw as u32, 0, 0, 0], &[]),
                        &[(1, bases), (2, &sorted), (3, &counts), (4, &buckets)],
                        nw * nb,
                    ),
                    job(
                        m,
                        "msm_acc",
                        params(&[0, nb as u32, nw as u32, t_per as u32, 0, 1], &[]),
                        &[(4, &buckets), (5, &res)],
                        nw * t_per,
                    ),
                    job(
                        Module::G1,
                        "fq_mul_const",
                        params(&[(nw * t_per * 4 * fw / 12) as u32], &kfrom),
                        &[(1, &res)],
                        nw * t_per * 4 * fw / 12,
                    ),
                ];
                let words = self
                    .ctx
                    .run("msm", &jobs, &[(&res, 0, nw * t_per * pt_words)])?;
                let words = words.into_iter().next().unwrap_or_default();
                for k in 0..nw {
                    let a = (k * t_per * pt_words) as usize;
                    let b = ((k + 1) * t_per * pt_words) as usize;
                    out.windows
                        .push(words.get(a..b).unwrap_or_default().to_vec());
                }
                w0 += nw as u32;
            }
        }
        if !ones.is_empty() {
            let n1 = ones.len() as u64;
            let l = n1.div_ceil(8192).max(16);
            let t = n1.div_ceil(l);
            // Bucket accumulation over host-made "buckets" 1..=t, each a chunk
            // of the list (bucket 0 stays the identity).
            let nb1 = t + 1;
            let mut cnt = vec![0u32; 2 * nb1 as usize];
            for d in 1..=t {
                let beg = (d - 1) * l;
                let end = (beg + l).min(n1);
                cnt[d as usize] = (end - beg) as u32;
                cnt[(nb1 + d) as usize] = end as u32;
            }
            let lb = self.ctx.upload(&ones, 0, "msm ones")?;
            let cb = self.ctx.upload(&cnt, 0, "msm ones chunks")?;
            let res = self.ctx.storage(nb1 * pt_words * 4, "msm ones sums")?;
            let jobs = [
                job(
                    m,
                    "msm_acc",
                    params(&[n1 as u32, nb1 as u32, 1, 0, 0, 0], &[]),
                    &[(1, bases), (2, &lb), (3, &cb), (4, &res)],
                    nb1,
                ),
                job(
                    Module::G1,
                    "fq_mul_const",
                    params(&[(nb1 * 4 * fw / 12) as u32], &kfrom),
                    &[(1, &res)],
                    nb1 * 4 * fw / 12,
                ),
            ];
            let words = self
                .ctx
                .run("msm ones", &jobs, &[(&res, 0, nb1 * pt_words)])?;
            out.ones = words.into_iter().next().unwrap_or_default();
        }
        Ok(out)
    }

    // ------------------------------------------------------------- NTT

    fn twiddles(&self, log_n: u32, inverse: bool) -> Result<Arc<wgpu::Buffer>, WgpuError> {
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
    fn ntt_jobs<'a>(
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
        for s in 0..log_n {
            out.push(job(
                Module::Fr,
                "fr_ntt_stage",
                params(&[(n / 2) as u32, s, log_n], &[]),
                &[(1, data), (2, tw)],
                n / 2,
            ));
        }
    }

    fn check_log(&self, log_n: u32, what: &str) -> Result<(), WgpuError> {
        if log_n > 28 {
            return Err(WgpuError::InvalidInput(format!(
                "{what}: log_n = {log_n} is out of range 0..=28"
            )));
        }
        let bytes = 32u64 << log_n;
        let max = self
            .ctx
            .limits
            .max_storage_buffer_binding_size
            .min(self.ctx.limits.max_buffer_size);
        if bytes > max {
            return Err(WgpuError::OutOfMemory(format!(
                "{what}: 2^{log_n} elements ({bytes} bytes) exceed the adapter's binding limit of {max} bytes"
            )));
        }
        Ok(())
    }

    /// In-place NTT of `data` (length 2^log_n, Montgomery form) with
    /// omega = ROOT_OF_UNITY^(2^(32 - log_n)); the inverse uses omega^-1 and
    /// multiplies by n^-1 (bellperson's FFT / IFFT).
    pub fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), WgpuError> {
        self.check_log(log_n, "ntt")?;
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
        self.check_log(log_m, "compute_h")?;
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
            return Ok(Vec::new());
        }
        let _g = self.lock()?;
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
        let mut bufs = Vec::with_capacity(3);
        for (name, v) in [("a", a), ("b", b), ("c", c)] {
            bufs.push(self.ctx.upload(host::fr_as_words(v), m * 32, name)?);
        }
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
        let words = self
            .ctx
            .run("compute_h", &jobs, &[(&bufs[0], 0, (m - 1) * 8)])?;
        Ok(host::words_to_fr(&words[0]))
    }
}

fn check_count(n: usize, what: &str) -> Result<(), WgpuError> {
    if n > u32::MAX as usize / 64 {
        return Err(WgpuError::InvalidInput(format!("{what}: {n} is too many")));
    }
    Ok(())
}

/// Window size for an MSM of `n` bucketed terms, by a cost model fitted to the
/// H200 (2026-11-29): a bucket addition costs ~1.9 ns of the whole GPU's time when
/// many threads add at once, but ~17 µs in one thread's chain, and every bucket is
/// summed by one thread. So besides the additions (windows · n) and the bucket
/// reduction (windows · 2^(c-1) buckets), the model counts the longest chain: the
/// average bucket load, or the load of the top window, whose digits only reach
/// about r / 2^(c (windows - 1)) (for some c just the final carry). With unsigned
/// digits and c = 14, that window had 7 buckets at n = 2^16: 273 ms against 30 ms
/// at 2^18.
fn window_bits(n: u64) -> u32 {
    const LOG2_R: f64 = 254.857; // log2 of the scalar field's order
    let n = n as f64;
    let cost = |c: u32| {
        let windows = f64::from(255 / c + 1);
        let buckets = f64::from(1u32 << (c - 1));
        let top_buckets = (LOG2_R - f64::from(c) * (windows - 1.0)).exp2().max(1.0);
        let chain = (n / buckets).max(n / top_buckets);
        windows * n * 1.9 + windows * buckets * 3.8 + chain * 17_000.0
    };
    (4..=16u32)
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(16)
}

#[cfg(test)]
mod tests {
    use super::window_bits;

    #[test]
    fn windows_avoid_a_nearly_empty_top_window() {
        // the top window covers bits c * (255 / c) .. 255 and the last carry
        for lg in 4..=26 {
            let c = window_bits(1 << lg);
            let top_bits = 255 - c * (255 / c);
            assert!(
                top_bits + 2 >= c / 2,
                "2^{lg} terms: c = {c}, top window {top_bits} bits"
            );
        }
        assert_eq!(window_bits(1 << 22), 16);
        assert!(window_bits(16) <= 8);
    }
}

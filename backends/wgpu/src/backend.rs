//! `WgpuBackend`: resident bases, MSM (G1, G2), NTT and the Groth16 H
//! polynomial on any wgpu adapter.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use blst::*;

use crate::error::WgpuError;
use crate::gpu::{params, Ctx, Job};
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
    /// With SHADER_INT64 in use, build the G2 kernels on it too. Off by
    /// default: G2's Fq2 values double the registers of every temporary, and on
    /// the H200 the G2 MSM of 2^18 took 353 ms on the SHADER_INT64 code against
    /// 124 ms on the portable code (G1: 96 against 186 ms at 2^22, so G1 keeps
    /// SHADER_INT64). Both give the same words.
    pub g2_int64: bool,
    /// Accumulate each MSM bucket on one invocation (msm_acc) instead of in
    /// equal chunks of BALANCED_CHUNK sorted entries (msm_acc_balanced). Off
    /// by default: the chunks keep every invocation equally busy, which on
    /// the H200 made the G1 MSM of 2^22 uniform scalars faster (SHADER_INT64
    /// 96.0 -> 76.6 ms, portable 186 -> 170 ms), and a bucket crowded by
    /// repeated scalars costs n / 64 chained additions instead of n.
    /// CROSSGROTH_WGPU_MSM_BALANCED=0 turns it on too (for measurements).
    pub per_bucket_accumulation: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            allow_int64: true,
            adapter: None,
            g2_int64: false,
            per_bucket_accumulation: false,
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// G1 bases resident on the device (blst affine, converted to the device's
/// Montgomery form). Usable only with the backend that uploaded them.
pub struct G1Bases {
    pub(crate) buf: wgpu::Buffer,
    pub(crate) len: usize,
    pub(crate) owner: u64,
}

/// G2 bases resident on the device; see [`G1Bases`].
pub struct G2Bases {
    pub(crate) buf: wgpu::Buffer,
    pub(crate) len: usize,
    pub(crate) owner: u64,
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
pub(crate) enum Curve {
    G1,
    G2,
}

impl Curve {
    /// u32 words per coordinate.
    pub(crate) fn fw(self) -> u64 {
        match self {
            Curve::G1 => 12,
            Curve::G2 => 24,
        }
    }
    pub(crate) fn module(self) -> Module {
        match self {
            Curve::G1 => Module::G1,
            Curve::G2 => Module::G2,
        }
    }
}

/// The wgpu backend. Thread-safe; operations are serialised internally.
pub struct WgpuBackend {
    pub(crate) ctx: Ctx,
    pub(crate) id: u64,
    guard: Mutex<()>,
    pub(crate) twiddles: Mutex<HashMap<(u32, bool), Arc<wgpu::Buffer>>>,
    /// See `Options::per_bucket_accumulation`.
    pub(crate) per_bucket_accumulation: bool,
}

pub(crate) fn job<'a>(
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

impl WgpuBackend {
    /// The preferred adapter (a discrete GPU first; `CROSSGROTH_WGPU_ADAPTER`
    /// picks one by name substring), default options.
    pub fn new() -> Result<Self, WgpuError> {
        Self::with_options(Options::default())
    }

    pub fn with_options(opts: Options) -> Result<Self, WgpuError> {
        let ctx = Ctx::new(opts.allow_int64, opts.g2_int64, opts.adapter)?;
        Ok(WgpuBackend {
            ctx,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            guard: Mutex::new(()),
            twiddles: Mutex::new(HashMap::new()),
            per_bucket_accumulation: opts.per_bucket_accumulation
                || std::env::var("CROSSGROTH_WGPU_MSM_BALANCED").as_deref() == Ok("0"),
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
            if self.ctx.g2_int64 {
                "used (29-bit limbs, u64 accumulators)"
            } else if self.ctx.int64 {
                "used (29-bit limbs, u64 accumulators; G2 on the portable code)"
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

    /// Whether the SHADER_INT64 path is in use (G1, NTT and H).
    pub fn uses_int64(&self) -> bool {
        self.ctx.int64
    }

    /// Whether the G2 MSM runs on the SHADER_INT64 code too (`Options::g2_int64`).
    pub fn uses_int64_for_g2(&self) -> bool {
        self.ctx.g2_int64
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
            (Module::Fr, "fr_ntt_stage4"),
            (Module::Fr, "fr_expand_powers"),
            (Module::Fr, "fr_scale_powers"),
            (Module::Fr, "fr_h_combine"),
            (Module::Sort, "msm_hist"),
            (Module::Sort, "msm_scan"),
            (Module::Sort, "msm_scatter"),
            (Module::G1, "fq_mul_const"),
            (Module::G2, "fq_mul_const"),
            (Module::G1, "msm_acc"),
            (Module::G2, "msm_acc"),
            (Module::G1, "msm_acc_balanced"),
            (Module::G2, "msm_acc_balanced"),
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

    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, ()>, WgpuError> {
        self.guard
            .lock()
            .map_err(|_| WgpuError::gpu("backend", "a previous call panicked"))
    }

    // ------------------------------------------------------------- bases

    /// Uploads affine points of `curve` (n_fq Fq elements) and converts them
    /// to the Montgomery form of that curve's module.
    fn upload_bases(
        &self,
        curve: Curve,
        words: &[u32],
        n_fq: u64,
        what: &str,
    ) -> Result<wgpu::Buffer, WgpuError> {
        let buf = self.ctx.upload(words, 0, what)?;
        if n_fq > 0 {
            let m = curve.module();
            let k = self.ctx.module_radix(m).fq_k_to_dev();
            self.ctx.run(
                what,
                &[job(
                    m,
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
        let buf = self.upload_bases(Curve::G1, words, 2 * bases.len() as u64, "G1 bases")?;
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
        let buf = self.upload_bases(Curve::G2, words, 4 * bases.len() as u64, "G2 bases")?;
        Ok(G2Bases {
            buf,
            len: bases.len(),
            owner: self.id,
        })
    }
}

/// Refuses counts too large for the shaders' u32 indices (up to 64 words an item).
pub(crate) fn check_count(n: usize, what: &str) -> Result<(), WgpuError> {
    if n > u32::MAX as usize / 64 {
        return Err(WgpuError::InvalidInput(format!("{what}: {n} is too many")));
    }
    Ok(())
}

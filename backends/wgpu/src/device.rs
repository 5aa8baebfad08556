//! `WgpuDevice`: options, resident bases, timing; the MSM, NTT and H
//! entry points are in msm.rs and ntt.rs.

use std::any::TypeId;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
use crossgroth_gpu_host::{Curve, Group, HostBases};

use crate::error::WgpuError;
use crate::gpu::{params, AdapterChoice, Ctx, Job};
use crate::shaders::Module;

/// Backend options. The defaults are the fastest measured choices; the
/// crate reads no environment variables, so a caller (the CLI, a test)
/// maps its own settings to these fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Use the SHADER_INT64 field code (29-bit limbs, u64 accumulators)
    /// where the adapter offers it; otherwise, or when false, the portable
    /// u32 code (13-bit limbs). Default: true.
    pub allow_int64: bool,
    /// Which adapter to open. Default: None, the preferred one (a discrete
    /// GPU first, then an integrated, a virtual, another, a CPU one).
    pub adapter: Option<AdapterChoice>,
    /// With SHADER_INT64 in use, build the G2 kernels on it too. Default:
    /// false, because an Fq2 value doubles the registers of every temporary
    /// and the portable code measured faster for G2 (backends/wgpu/README.md);
    /// both give the same words.
    pub g2_int64: bool,
    /// Lowers the largest storage buffer the backend binds (bytes), below
    /// the adapter's `max_storage_buffer_binding_size` and `max_buffer_size`
    /// (the least of the three applies). Bases, MSM scalars and NTT vectors
    /// larger than the limit are held in chunks and give the same results;
    /// a lower limit exercises that path on small inputs. Default: None, the
    /// adapter's limits.
    pub max_binding_bytes: Option<u64>,
    /// A directory where compiled pipelines are kept between processes, one
    /// file per adapter and driver (wgpu's `PIPELINE_CACHE`, Vulkan only):
    /// the first use of a kernel in a fresh process then skips the driver's
    /// compilation. Read when the backend opens, written (to a temporary
    /// file, then renamed) after new pipelines are built. A missing,
    /// unreadable, corrupt or foreign file, or an adapter without the
    /// feature, only costs the compilation. Default: None, no disk cache.
    pub pipeline_cache_dir: Option<PathBuf>,
    /// The device memory (bytes) the backend reports for planning where
    /// bases live, in place of what the adapter reports (Vulkan's
    /// device-local heaps and their budget; other APIs report none): for an
    /// adapter that reports nothing, or to run the streamed path on a small
    /// circuit. Free memory is then the least of this and what the adapter
    /// reports free. Default: None, the adapter's figures.
    pub device_memory: Option<u64>,
    /// Whether a caller that holds a circuit's constraint matrices should
    /// have this backend compute a proof's a, b and c from its witness
    /// ([`WgpuDevice::abc_from_witness`]) rather than send them up: crossgroth
    /// then keeps a partition's assignment witness-only on the host (about a
    /// quarter of the memory) at the cost of the matrices' device memory.
    /// The crate itself reads it only through [`WgpuDevice::witness_on_device`].
    /// Default: false.
    pub witness_on_device: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            allow_int64: true,
            adapter: None,
            g2_int64: false,
            max_binding_bytes: None,
            pipeline_cache_dir: None,
            device_memory: None,
            witness_on_device: false,
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Where a set of bases lives.
pub(crate) enum Store<T> {
    /// Resident: the chunks in order, every one but the last holding
    /// `per_chunk` points.
    Device(Vec<wgpu::Buffer>),
    /// Streamed: the host's points, which each MSM copies a chunk at a time
    /// into one device window of `per_chunk` points.
    Host(HostBases<T>),
}

/// Bases of group `C` ([`crate::G1`] or [`crate::G2`]) resident on the
/// device, converted to the device's Montgomery form, or kept in host memory
/// and streamed by every MSM ([`WgpuDevice::host_bases`]). Usable only with
/// the backend that made them. Held (or streamed) in chunks of whole points,
/// each within the backend's binding limit (one chunk where they all fit).
pub struct Bases<C: Curve> {
    pub(crate) store: Store<C::Affine>,
    pub(crate) per_chunk: usize,
    pub(crate) len: usize,
    pub(crate) owner: u64,
    group: PhantomData<C>,
}

impl<C: Curve> Bases<C> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Whether these bases stay in host memory and are streamed by each MSM.
    pub fn is_streamed(&self) -> bool {
        matches!(self.store, Store::Host(_))
    }
    /// How many chunks an MSM goes through.
    pub(crate) fn chunk_count(&self) -> usize {
        self.len.div_ceil(self.per_chunk.max(1)).max(1)
    }
}

/// The wgpu backend. Thread-safe; operations are serialised internally.
pub struct WgpuDevice {
    pub(crate) ctx: Ctx,
    /// `Options::device_memory`.
    device_memory: Option<u64>,
    /// `Options::witness_on_device`.
    witness_on_device: bool,
    pub(crate) id: u64,
    guard: Mutex<()>,
    pub(crate) twiddles: Mutex<HashMap<(u32, bool), Arc<wgpu::Buffer>>>,
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

impl WgpuDevice {
    /// The preferred adapter (a discrete GPU first) with the default
    /// [`Options`].
    pub fn new() -> Result<Self, WgpuError> {
        Self::with_options(Options::default())
    }

    /// The adapter and field code that `opts` choose.
    pub fn with_options(opts: Options) -> Result<Self, WgpuError> {
        let ctx = Ctx::new(
            opts.allow_int64,
            opts.g2_int64,
            opts.adapter.as_ref(),
            opts.max_binding_bytes,
            opts.pipeline_cache_dir.as_deref(),
        )?;
        Ok(WgpuDevice {
            ctx,
            device_memory: opts.device_memory,
            witness_on_device: opts.witness_on_device,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            guard: Mutex::new(()),
            twiddles: Mutex::new(HashMap::new()),
        })
    }

    /// The device's memory as (free, total) bytes, for planning where bases
    /// live: `Options::device_memory` where set (free then the least of it
    /// and what the adapter reports free), else what the adapter reports
    /// (Vulkan's device-local heaps; None elsewhere).
    pub fn memory(&self) -> Option<(u64, u64)> {
        let reported = crate::memory::adapter_memory(&self.ctx.adapter);
        match (self.device_memory, reported) {
            (Some(m), Some((free, _))) => Some((free.min(m), m)),
            (Some(m), None) => Some((m, m)),
            (None, reported) => reported,
        }
    }

    /// "<adapter name> (Vulkan, DiscreteGpu, driver ..., SHADER_INT64 used
    /// (...), timestamps yes)", for logs and a CLI's backend list.
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

    /// The most bytes one storage buffer holds here: the adapter's binding
    /// and buffer limits, lowered by `Options::max_binding_bytes` (rounded
    /// down to a multiple of 16). Larger vectors are held in chunks.
    pub fn max_binding_bytes(&self) -> u64 {
        self.ctx.binding
    }

    /// `Options::witness_on_device`: whether a caller should have a, b and
    /// c computed here from a witness.
    pub fn witness_on_device(&self) -> bool {
        self.witness_on_device
    }

    /// Whether the SHADER_INT64 path is in use (G1, NTT and H).
    pub fn uses_int64(&self) -> bool {
        self.ctx.int64
    }

    /// Whether the G2 MSM runs on the SHADER_INT64 code too (`Options::g2_int64`).
    pub fn uses_int64_for_g2(&self) -> bool {
        self.ctx.g2_int64
    }

    /// The file this backend reads its compiled pipelines from and writes
    /// them to (`Options::pipeline_cache_dir`), or None where there is none
    /// (the option is unset or the adapter has no `PIPELINE_CACHE`).
    pub fn pipeline_cache_file(&self) -> Option<&Path> {
        self.ctx.disk_cache.as_ref().map(|d| d.path.as_path())
    }

    /// Total time spent so far creating shader modules and pipelines.
    pub fn compile_time(&self) -> Duration {
        Duration::from_nanos(self.ctx.compile_ns.load(Ordering::Relaxed))
    }

    /// Creates every pipeline now (instead of on first use).
    pub fn warm_up(&self) -> Result<(), WgpuError> {
        let _g = self.lock()?;
        let fr = [
            "fr_mul_const",
            "fr_bitrev",
            "fr_ntt_stage",
            "fr_ntt_stage4",
            "fr_ntt_cross",
            "fr_expand_powers",
            "fr_scale_powers",
            "fr_h_combine",
        ];
        let sort = ["msm_digits", "msm_hist", "msm_scan", "msm_scatter"];
        let group = [
            "fq_mul_const",
            "msm_acc",
            "msm_acc_balanced",
            "fixed_base_mul",
        ];
        let all = (fr.iter().map(|&e| (Module::Fr, e)))
            .chain(sort.iter().map(|&e| (Module::Sort, e)))
            .chain(
                [Group::G1, Group::G2]
                    .iter()
                    .flat_map(|&g| group.map(|e| (Module::Curve(g), e))),
            );
        for (m, e) in all {
            self.ctx.pipeline(m, e)?;
        }
        self.ctx.save_pipeline_cache();
        Ok(())
    }

    /// Runs `f` and returns its result with the device time it took: the sum,
    /// over the submissions `f` made, of the GPU time from the start of the
    /// first compute pass to the end of the last (timestamp queries; uploads
    /// and read-backs are not included). Where the adapter has no timestamp
    /// queries ([`Self::has_timestamps`] is false) it is the host's wall-clock
    /// time of `f` instead. Only this thread's submissions count: what other
    /// threads submit meanwhile is theirs, timed or not (see timing.rs).
    pub fn time<R>(
        &self,
        f: impl FnOnce(&Self) -> Result<R, WgpuError>,
    ) -> Result<(R, Duration), WgpuError> {
        let t = std::time::Instant::now();
        let (r, ns) = self.ctx.clock.timed(|| f(self));
        let wall = t.elapsed();
        let r = r?;
        let d = if self.ctx.timestamps {
            Duration::from_nanos(ns)
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

    /// Uploads affine points of group `C` (blst's affine type, identity =
    /// (0, 0)) and converts them to the Montgomery form of that group's shader
    /// module, where they stay for [`Self::msm`].
    pub fn upload<C: Curve>(&self, bases: &[C::Affine]) -> Result<Bases<C>, WgpuError> {
        let what = &format!("{} bases", C::NAME);
        let _g = self.lock()?;
        check_count(bases.len(), what)?;
        let per_chunk = self.points_per_chunk::<C>(what)?;
        let mut chunks = Vec::with_capacity(bases.len().div_ceil(per_chunk).max(1));
        // One (empty) chunk for no points, so that every Bases has a buffer.
        let pieces: Vec<&[C::Affine]> = if bases.is_empty() {
            vec![bases]
        } else {
            bases.chunks(per_chunk).collect()
        };
        for piece in pieces {
            let buf = self.ctx.upload(affine_words::<C>(piece)?, 0, what)?;
            self.to_device_form::<C>(&buf, piece.len(), what)?;
            chunks.push(buf);
        }
        Ok(Bases {
            store: Store::Device(chunks),
            per_chunk,
            len: bases.len(),
            owner: self.id,
            group: PhantomData,
        })
    }

    /// Bases that stay in host memory: every MSM copies the chunks its terms
    /// use, one at a time, into a device window of one chunk (at most the
    /// binding limit), for sets that do not fit the device's memory. No
    /// copy of the points is made here.
    pub fn host_bases<C: Curve>(&self, bases: HostBases<C::Affine>) -> Result<Bases<C>, WgpuError> {
        let what = &format!("{} bases", C::NAME);
        let len = (*bases).as_ref().len();
        check_count(len, what)?;
        affine_words::<C>(&[])?;
        let per_chunk = self.points_per_chunk::<C>(what)?;
        Ok(Bases {
            store: Store::Host(bases),
            per_chunk,
            len,
            owner: self.id,
            group: PhantomData,
        })
    }

    /// Points of `C` a chunk of bases holds: as many as one binding takes.
    fn points_per_chunk<C: Curve>(&self, what: &str) -> Result<usize, WgpuError> {
        let per_chunk = (self.ctx.binding / C::AFFINE_BYTES as u64) as usize;
        if per_chunk == 0 {
            return Err(WgpuError::OutOfMemory(format!(
                "{what}: one point needs {} bytes, over the storage binding limit of {} bytes",
                C::AFFINE_BYTES,
                self.ctx.binding
            )));
        }
        Ok(per_chunk)
    }

    /// Converts the `points` affine points at the start of `buf` (blst's
    /// Montgomery form) to the Montgomery form of `C`'s shader module.
    pub(crate) fn to_device_form<C: Curve>(
        &self,
        buf: &wgpu::Buffer,
        points: usize,
        what: &str,
    ) -> Result<(), WgpuError> {
        let m = Module::Curve(C::GROUP);
        let k = self.ctx.module_radix(m).fq_k_to_dev();
        // two coordinates a point, each FE_WORDS / 6 Fq elements
        let n_fq = (points * 2 * C::FE_WORDS / 6) as u64;
        if n_fq > 0 {
            self.ctx.run(
                what,
                &[job(
                    m,
                    "fq_mul_const",
                    params(&[n_fq as u32], &k),
                    &[(1, buf)],
                    n_fq,
                )],
                &[],
            )?;
        }
        Ok(())
    }
}

/// The points as the u32 words the device takes. The type check makes the
/// cast sound for any `Curve` impl: only blst's types of `C::GROUP`
/// (crossgroth-gpu-host's G1 and G2 use them) get through, the point type
/// too, so that [`WgpuDevice::msm`] can return its result as `C::Point`.
pub(crate) fn affine_words<C: Curve>(bases: &[C::Affine]) -> Result<&[u32], WgpuError> {
    let blst = match C::GROUP {
        Group::G1 => [TypeId::of::<blst_p1_affine>(), TypeId::of::<blst_p1>()],
        Group::G2 => [TypeId::of::<blst_p2_affine>(), TypeId::of::<blst_p2>()],
    };
    if [TypeId::of::<C::Affine>(), TypeId::of::<C::Point>()] != blst {
        return Err(WgpuError::InvalidInput(format!(
            "{}: the point types are not blst's",
            C::NAME
        )));
    }
    // SAFETY: C::Affine is blst_p1_affine or blst_p2_affine: repr(C) {x, y},
    // 2 * FE_WORDS u64 (AFFINE_BYTES bytes), no padding, 8-byte aligned.
    Ok(unsafe {
        std::slice::from_raw_parts(
            bases.as_ptr() as *const u32,
            bases.len() * C::AFFINE_BYTES / 4,
        )
    })
}

/// Refuses counts whose ranks do not fit the MSM's u32 entries (bit 31 is a
/// sign); word offsets stay in range because no buffer exceeds the binding
/// limit.
pub(crate) fn check_count(n: usize, what: &str) -> Result<(), WgpuError> {
    if n > (u32::MAX >> 1) as usize {
        return Err(WgpuError::InvalidInput(format!("{what}: {n} is too many")));
    }
    Ok(())
}

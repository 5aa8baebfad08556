//! The wgpu device: adapter selection, shader modules and cached pipelines,
//! buffers, dispatch lists and read-back, with every wgpu failure turned into
//! a [`WgpuError`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossgroth_gpu_host::Group;

use crate::error::WgpuError;
use crate::pipeline_cache::{self, DiskCache};
use crate::shaders::{self, Module};

/// One adapter as wgpu reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterInfo {
    pub name: String,
    /// "Vulkan", "Metal", "Dx12", ...
    pub backend: String,
    /// "DiscreteGpu", "IntegratedGpu", "Cpu", ...
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    /// Whether the adapter offers SHADER_INT64.
    pub shader_int64: bool,
    /// Whether it offers timestamp queries.
    pub timestamps: bool,
    pub max_storage_buffer_binding_size: u64,
}

/// The instance on wgpu's defaults, not its `WGPU_*` environment variables:
/// the options are the caller's, through [`crate::Options`].
fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    // Compute only: the native backends (the GL backend has no compute
    // guarantees worth testing against).
    desc.backends &= wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    wgpu::Instance::new(desc)
}

fn info_of(a: &wgpu::Adapter) -> AdapterInfo {
    let i = a.get_info();
    let f = a.features();
    AdapterInfo {
        name: i.name,
        backend: format!("{:?}", i.backend),
        device_type: format!("{:?}", i.device_type),
        driver: i.driver,
        driver_info: i.driver_info,
        shader_int64: f.contains(wgpu::Features::SHADER_INT64),
        timestamps: f.contains(wgpu::Features::TIMESTAMP_QUERY),
        max_storage_buffer_binding_size: a.limits().max_storage_buffer_binding_size,
    }
}

fn adapters() -> Vec<wgpu::Adapter> {
    let inst = instance();
    pollster::block_on(inst.enumerate_adapters(wgpu::Backends::all()))
        .into_iter()
        .filter(|a| {
            a.get_downlevel_capabilities()
                .flags
                .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
        })
        .collect()
}

pub fn probe() -> Result<Vec<AdapterInfo>, WgpuError> {
    let v: Vec<AdapterInfo> = catch("probe", || adapters().iter().map(info_of).collect())?;
    if v.is_empty() {
        return Err(WgpuError::Unavailable(
            "no Vulkan/Metal/DX12 adapter with compute shaders found".into(),
        ));
    }
    Ok(v)
}

/// wgpu and drivers may panic on odd systems; the backend never does.
pub(crate) fn catch<R>(what: &str, f: impl FnOnce() -> R) -> Result<R, WgpuError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into());
        WgpuError::gpu(what, format!("wgpu panicked: {msg}"))
    })
}

fn rank(t: wgpu::DeviceType) -> u32 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

pub(crate) struct Ctx {
    /// Kept to ask for the device's memory as it changes.
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: AdapterInfo,
    pub limits: wgpu::Limits,
    /// The most bytes one storage buffer may hold: the adapter's binding and
    /// buffer limits, lowered by `Options::max_binding_bytes`; every vector
    /// larger than this is held in chunks (bases, MSM passes, NTT).
    pub binding: u64,
    pub int64: bool,
    /// Whether the G2 module also uses the SHADER_INT64 field code (only when
    /// `int64`; see `Options::g2_int64`).
    pub g2_int64: bool,
    pub radix: crate::host::Radix,
    pub timestamps: bool,
    pub(crate) layout: wgpu::BindGroupLayout,
    pipe_layout: wgpu::PipelineLayout,
    modules: Mutex<HashMap<Module, wgpu::ShaderModule>>,
    pipelines: Mutex<HashMap<(Module, &'static str), wgpu::ComputePipeline>>,
    pub(crate) dummies: Vec<wgpu::Buffer>,
    error: Arc<Mutex<Option<wgpu::Error>>>,
    lost: Arc<Mutex<Option<String>>>,
    lost_flag: Arc<AtomicBool>,
    /// The GPU time of each thread's timed submissions.
    pub clock: crate::timing::Clock,
    /// Time spent creating shader modules and pipelines (ns), for reports.
    pub compile_ns: AtomicU64,
    /// The pipeline cache kept on disk (`Options::pipeline_cache_dir`), where
    /// the adapter has `PIPELINE_CACHE`.
    pub disk_cache: Option<DiskCache>,
    /// The staging slots of large writes and reads, and the least transfer
    /// that goes through them (bytes).
    uploads: crate::staging::Uploader,
    pub(crate) downloads: crate::staging::Downloader,
    pub(crate) staged_min: u64,
}

/// One kernel launch: `threads` invocations of `entry` in `module`, buffers
/// bound to slots 1..=5 (None = a dummy), `params` as the uniform block.
#[derive(Clone, Copy)]
pub(crate) struct Job<'a> {
    pub module: Module,
    pub entry: &'static str,
    pub params: [u32; 32],
    pub bufs: [Option<&'a wgpu::Buffer>; 5],
    pub threads: u64,
}

/// One command of a submission: a kernel launch, or a buffer operation
/// between launches.
pub(crate) enum Step<'a> {
    Run(Job<'a>),
    /// Zeroes a buffer (counters reused by the next launches).
    Clear(&'a wgpu::Buffer),
    /// Copies `bytes` from `src` at byte `from` into `dst` at byte `at`.
    Copy {
        src: &'a wgpu::Buffer,
        from: u64,
        dst: &'a wgpu::Buffer,
        at: u64,
        bytes: u64,
    },
}

pub(crate) fn params(head: &[u32], konst: &[u32]) -> [u32; 32] {
    let mut p = [0u32; 32];
    p[..head.len()].copy_from_slice(head);
    p[8..8 + konst.len()].copy_from_slice(konst);
    p
}

/// The effective binding limit: the least of the adapter's binding and
/// buffer limits and the caller's `max_binding`, at most 4 GiB (the shaders
/// index u32 words) and a multiple of 16 (buffer sizes are rounded up to 16).
fn binding_limit(limits: &wgpu::Limits, max_binding: Option<u64>) -> u64 {
    let max = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
        .min(max_binding.unwrap_or(u64::MAX))
        .min(1 << 32);
    max & !15
}

/// How [`WgpuDevice::with_options`] picks its adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdapterChoice {
    /// The adapter at this index of [`crate::probe`]'s list (an engine with
    /// one worker per adapter opens each this way).
    Index(usize),
    /// The first adapter whose name contains this text, ignoring case; a
    /// discrete GPU first where several match. The crossgroth CLI fills it
    /// from `CROSSGROTH_WGPU_ADAPTER`.
    Name(String),
}

impl Ctx {
    pub fn new(
        allow_int64: bool,
        g2_int64: bool,
        choice: Option<&AdapterChoice>,
        max_binding: Option<u64>,
        cache_dir: Option<&Path>,
    ) -> Result<Ctx, WgpuError> {
        let list = catch("adapter enumeration", adapters)?;
        if list.is_empty() {
            return Err(WgpuError::Unavailable(
                "no Vulkan/Metal/DX12 adapter with compute shaders found".into(),
            ));
        }
        let mut cands: Vec<&wgpu::Adapter> = match choice {
            None => list.iter().collect(),
            Some(AdapterChoice::Index(i)) => list.get(*i).into_iter().collect(),
            Some(AdapterChoice::Name(name)) => {
                let name = name.to_lowercase();
                list.iter()
                    .filter(|a| a.get_info().name.to_lowercase().contains(&name))
                    .collect()
            }
        };
        if cands.is_empty() {
            let names: Vec<String> = list.iter().map(|a| a.get_info().name).collect();
            let wanted = match choice {
                Some(AdapterChoice::Index(i)) => format!("no adapter {i}"),
                Some(AdapterChoice::Name(n)) => format!("no adapter name contains {n:?}"),
                None => "no adapter".into(),
            };
            return Err(WgpuError::Unavailable(format!(
                "{wanted} ({} found: {})",
                list.len(),
                names.join(", ")
            )));
        }
        cands.sort_by_key(|a| rank(a.get_info().device_type));
        let adapter = cands[0];
        let info = info_of(adapter);
        let al = adapter.limits();
        // Explicit limits: the defaults, raised to the adapter's for buffer
        // sizes (wgpu's default binding limit is 128 MiB) and dispatch size.
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: al.max_storage_buffer_binding_size,
            max_buffer_size: al.max_buffer_size,
            max_storage_buffers_per_shader_stage: al
                .max_storage_buffers_per_shader_stage
                .clamp(5, 8),
            max_compute_workgroups_per_dimension: al.max_compute_workgroups_per_dimension,
            max_compute_invocations_per_workgroup: al
                .max_compute_invocations_per_workgroup
                .min(256),
            ..wgpu::Limits::default()
        };
        let mut features = wgpu::Features::empty();
        let timestamps = info.timestamps;
        if timestamps {
            features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        let int64 = allow_int64 && info.shader_int64;
        if int64 {
            features |= wgpu::Features::SHADER_INT64;
        }
        // Vulkan only, in this wgpu; elsewhere the backend compiles as before.
        let cache_file = cache_dir
            .filter(|_| adapter.features().contains(wgpu::Features::PIPELINE_CACHE))
            .and_then(|dir| pipeline_cache::file_for(dir, &adapter.get_info()));
        if cache_file.is_some() {
            features |= wgpu::Features::PIPELINE_CACHE;
        }
        let (device, queue) = catch("request_device", || {
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("crossgroth"),
                required_features: features,
                required_limits: limits.clone(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            }))
        })?
        .map_err(|e| WgpuError::Unavailable(format!("{}: request_device: {e}", info.name)))?;

        let error: Arc<Mutex<Option<wgpu::Error>>> = Arc::new(Mutex::new(None));
        let e2 = error.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut g) = e2.lock() {
                if g.is_none() {
                    *g = Some(e);
                }
            }
        }));
        let lost: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
        let lost_flag = Arc::new(AtomicBool::new(false));
        let (l2, f2) = (lost.clone(), lost_flag.clone());
        device.set_device_lost_callback(move |reason, msg| {
            if let Ok(mut g) = l2.lock() {
                *g = Some(format!("{reason:?}: {msg}"));
            }
            f2.store(true, Ordering::SeqCst);
        });

        let storage = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let mut entries = vec![wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }];
        entries.extend((1..=5).map(storage));
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("crossgroth"),
            entries: &entries,
        });
        let pipe_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("crossgroth"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let dummies = (0..5)
            .map(|_| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("dummy"),
                    size: 16,
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let binding = binding_limit(&limits, max_binding);
        let (slot, staged_min) = crate::staging::sizes(binding);
        let disk_cache = match cache_file {
            Some(path) => catch("pipeline cache", || pipeline_cache::open(&device, path))
                .ok()
                .flatten(),
            None => None,
        };
        let ctx = Ctx {
            adapter: adapter.clone(),
            device,
            queue,
            info,
            limits,
            binding,
            int64,
            g2_int64: int64 && g2_int64,
            radix: crate::host::Radix::new(int64),
            timestamps,
            layout,
            pipe_layout,
            modules: Mutex::new(HashMap::new()),
            pipelines: Mutex::new(HashMap::new()),
            dummies,
            error,
            lost,
            lost_flag,
            clock: crate::timing::Clock::new(),
            compile_ns: AtomicU64::new(0),
            disk_cache,
            uploads: crate::staging::Uploader::new(slot),
            downloads: crate::staging::Downloader::new(slot),
            staged_min,
        };
        ctx.check("device setup")?;
        Ok(ctx)
    }

    /// Whether module m is built on the SHADER_INT64 field code.
    pub fn module_int64(&self, m: Module) -> bool {
        match m {
            Module::Curve(Group::G2) => self.g2_int64,
            _ => self.int64,
        }
    }

    /// The Montgomery radices of module m's field code (Fq conversions of a
    /// curve's points run in that curve's module, with its radix).
    pub fn module_radix(&self, m: Module) -> crate::host::Radix {
        crate::host::Radix::new(self.module_int64(m))
    }

    /// Turns a pending wgpu error or a device loss into an error.
    pub fn check(&self, what: &str) -> Result<(), WgpuError> {
        if self.lost_flag.load(Ordering::SeqCst) {
            let msg = self
                .lost
                .lock()
                .ok()
                .and_then(|g| g.clone())
                .unwrap_or_default();
            return Err(WgpuError::DeviceLost(msg));
        }
        let e = self.error.lock().ok().and_then(|mut g| g.take());
        match e {
            None => Ok(()),
            Some(wgpu::Error::OutOfMemory { .. }) => Err(WgpuError::OutOfMemory(format!(
                "{what}: the device is out of memory"
            ))),
            Some(e) => {
                let msg = e.to_string();
                if msg.to_lowercase().contains("out of memory") {
                    Err(WgpuError::OutOfMemory(format!("{what}: {msg}")))
                } else {
                    Err(WgpuError::gpu(what, msg))
                }
            }
        }
    }

    fn module(&self, m: Module) -> Result<wgpu::ShaderModule, WgpuError> {
        let mut g = self
            .modules
            .lock()
            .map_err(|_| WgpuError::gpu("shader cache", "poisoned lock"))?;
        if let Some(s) = g.get(&m) {
            return Ok(s.clone());
        }
        let src = shaders::source(m, self.module_int64(m));
        let t = std::time::Instant::now();
        let sm = catch("create_shader_module", || {
            self.device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(m.name()),
                    source: wgpu::ShaderSource::Wgsl(Cow::Owned(src)),
                })
        })?;
        self.check(m.name()).map_err(|e| WgpuError::Shader {
            what: m.name().into(),
            msg: e.to_string(),
        })?;
        self.compile_ns
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        g.insert(m, sm.clone());
        Ok(sm)
    }

    pub fn pipeline(
        &self,
        m: Module,
        entry: &'static str,
    ) -> Result<wgpu::ComputePipeline, WgpuError> {
        if let Some(p) = self
            .pipelines
            .lock()
            .map_err(|_| WgpuError::gpu("pipeline cache", "poisoned lock"))?
            .get(&(m, entry))
        {
            return Ok(p.clone());
        }
        let sm = self.module(m)?;
        let t = std::time::Instant::now();
        let p = catch("create_compute_pipeline", || {
            self.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: Some(&self.pipe_layout),
                    module: &sm,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: self.disk_cache.as_ref().map(|d| &d.cache),
                })
        })?;
        self.check(entry).map_err(|e| WgpuError::Shader {
            what: format!("{}::{entry}", m.name()),
            msg: e.to_string(),
        })?;
        let took = t.elapsed();
        self.compile_ns
            .fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
        // A slow first proof is most often this: say which pipeline and whether
        // a disk cache was offered, so that it is not mistaken for the kernels.
        if took.as_secs_f64() >= 1.0 {
            log::info!(
                "wgpu: pipeline {}::{entry} built in {:.1} s ({})",
                m.name(),
                took.as_secs_f64(),
                if self.disk_cache.is_some() {
                    "with the disk cache"
                } else {
                    "no disk cache"
                }
            );
        }
        if let Some(d) = &self.disk_cache {
            d.touched();
        }
        self.pipelines
            .lock()
            .map_err(|_| WgpuError::gpu("pipeline cache", "poisoned lock"))?
            .insert((m, entry), p.clone());
        Ok(p)
    }

    /// Writes the disk cache back where pipelines were built since the last
    /// save (a failure is a warning: the cache only saves time).
    pub fn save_pipeline_cache(&self) {
        if let Some(d) = &self.disk_cache {
            let _ = catch("pipeline cache save", || d.save());
        }
    }

    /// A storage buffer of at least `bytes` (rounded up to 16), zeroed.
    pub fn storage(&self, bytes: u64, what: &str) -> Result<wgpu::Buffer, WgpuError> {
        let size = bytes.max(16).div_ceil(16) * 16;
        if size > self.binding {
            return Err(WgpuError::OutOfMemory(format!(
                "{what}: {size} bytes exceed the storage binding limit of {} bytes",
                self.binding
            )));
        }
        let b = catch("create_buffer", || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(what),
                size,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        })?;
        self.check(what)?;
        Ok(b)
    }

    /// A storage buffer holding `words` (then zeros up to `min_bytes`).
    pub fn upload(
        &self,
        words: &[u32],
        min_bytes: u64,
        what: &str,
    ) -> Result<wgpu::Buffer, WgpuError> {
        let b = self.storage((words.len() as u64 * 4).max(min_bytes), what)?;
        self.write(&b, words, what)?;
        Ok(b)
    }

    /// Writes `words` at the start of `buf` (ordered before later submissions).
    /// The copy into staging memory is split over the host's threads: at
    /// Filecoin sizes one core's memcpy is slower than the transfer. Large
    /// writes reuse the device's staging slots (`staging.rs`).
    pub fn write(&self, buf: &wgpu::Buffer, words: &[u32], what: &str) -> Result<(), WgpuError> {
        let bytes: &[u8] = bytemuck::cast_slice(words);
        let Some(size) = wgpu::BufferSize::new(bytes.len() as u64) else {
            return Ok(());
        };
        if bytes.len() as u64 >= self.staged_min {
            catch("upload", || {
                let fill = |dst: wgpu::WriteOnly<'_, [u8]>, src: &[u8]| {
                    par_copy_in(dst, src, copy_threads(), 16 << 20)
                };
                self.uploads
                    .write(&self.device, &self.queue, buf, bytes, &fill, what)
            })??;
            return self.check(what);
        }
        catch("write_buffer", || -> Result<(), WgpuError> {
            let mut view = self
                .queue
                .write_buffer_with(buf, 0, size)
                .ok_or_else(|| WgpuError::gpu(what, "write_buffer_with refused the write"))?;
            par_copy(view.slice(..), bytes);
            Ok(())
        })??;
        self.check(what)
    }
}

/// dst.copy_from_slice(src), split over the host's threads (at most 8) where
/// it is large.
fn par_copy(dst: wgpu::WriteOnly<'_, [u8]>, src: &[u8]) {
    par_copy_in(dst, src, copy_threads(), 64 << 20)
}

/// The threads of a host copy into staging memory.
fn copy_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// [`par_copy`] on `threads` threads of at least `per_thread_min` bytes each.
pub(crate) fn par_copy_in(
    mut dst: wgpu::WriteOnly<'_, [u8]>,
    src: &[u8],
    threads: usize,
    per_thread_min: usize,
) {
    let per = src
        .len()
        .div_ceil(threads.max(1))
        .max(per_thread_min.max(1));
    if per >= src.len() {
        dst.copy_from_slice(src);
        return;
    }
    /// A disjoint part of the view, which is as sendable as the `&mut [u8]` it
    /// stands for (wgpu's `Send` for `WriteOnly` names sized types only).
    struct Part<'a>(wgpu::WriteOnly<'a, [u8]>);
    // SAFETY: each part covers bytes no other part covers (split_at), and
    // WriteOnly writes through a pointer without any shared state.
    unsafe impl Send for Part<'_> {}
    std::thread::scope(|sc| {
        for s in src.chunks(per) {
            let (d, rest) = dst.split_at(s.len());
            dst = rest;
            let part = Part(d);
            sc.spawn(move || {
                let mut part = part;
                part.0.copy_from_slice(s)
            });
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_copy_split_over_threads_is_the_plain_copy() {
        let src: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 255) as u8).collect();
        for (threads, min) in [(1, 1), (3, 1), (8, 64), (8, 2000), (7, 333)] {
            let mut dst = vec![0u8; src.len()];
            super::par_copy_in(wgpu::WriteOnly::from_mut(&mut dst[..]), &src, threads, min);
            assert_eq!(dst, src, "{threads} threads, at least {min} bytes each");
        }
    }
}

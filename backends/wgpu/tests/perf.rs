//! Throughput of the WGSL field and point code, variant by variant (ignored
//! tests, for tuning): a dependent chain of Fq multiplications and a chain of
//! XYZZ + affine additions (the MSM's bucket accumulation), each invocation on
//! its own data (mulchain runs 16 x ITERS multiplications). Variants of one
//! field path must give the same words.
//!
//! `cargo test --release -p crossgroth-wgpu --test perf -- --ignored --nocapture`
//! Settings: see [`Settings`] (backends/wgpu/README.md lists them too).

mod common;

use std::borrow::Cow;
use std::sync::OnceLock;
use std::time::Instant;

/// The developer settings of this target, from the environment (the only
/// place it reads them; scripts/device/run.sh sets some).
struct Settings {
    /// CROSSGROTH_PERF_THREADS (default 2^17): invocations of a chain kernel.
    threads: u64,
    /// CROSSGROTH_PERF_ITERS (64): additions of a chain (x 16 multiplications).
    iters: u64,
    /// CROSSGROTH_PERF_REPS (5): timed runs of a chain kernel.
    reps: u64,
    /// CROSSGROTH_PERF_KERNELS (mulchain,addchain).
    kernels: String,
    /// CROSSGROTH_PERF_VARIANTS: comma-separated labels (default all).
    variants: Option<String>,
    /// CROSSGROTH_PERF_MSM_LOGS (10,12): `msm_g1_timed`'s sizes, log2.
    msm_logs: Vec<u32>,
    /// CROSSGROTH_PERF_MSM_REPS (2): timed runs an MSM size.
    msm_reps: u64,
    /// CROSSGROTH_PERF_H_LOG (12): `h_msm_timed`'s domain, log2.
    h_log: u32,
    /// CROSSGROTH_WGPU_TEST_PATHS: both (default) | int64 | portable.
    paths: String,
    /// CROSSGROTH_WGPU_ADAPTER: the adapter by name, as `Options::adapter`.
    adapter: Option<String>,
    /// CROSSGROTH_PERF_CACHE_DIR: `pipelines_timed`'s `Options::pipeline_cache_dir`.
    cache_dir: Option<String>,
}

/// The settings, read once, after `common::skip_llvm_optimiser` (so that
/// every test that reads them runs it before its first wgpu call).
fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        common::skip_llvm_optimiser();
        Settings {
            threads: common::parsed("CROSSGROTH_PERF_THREADS", 1 << 17),
            iters: common::parsed("CROSSGROTH_PERF_ITERS", 64),
            reps: common::parsed("CROSSGROTH_PERF_REPS", 5),
            kernels: common::var("CROSSGROTH_PERF_KERNELS").unwrap_or("mulchain,addchain".into()),
            variants: common::var("CROSSGROTH_PERF_VARIANTS"),
            msm_logs: common::var("CROSSGROTH_PERF_MSM_LOGS")
                .unwrap_or("10,12".into())
                .split(',')
                .map(|x| x.trim().parse().unwrap())
                .collect(),
            msm_reps: common::parsed("CROSSGROTH_PERF_MSM_REPS", 2),
            h_log: common::parsed("CROSSGROTH_PERF_H_LOG", 12),
            paths: common::var("CROSSGROTH_WGPU_TEST_PATHS").unwrap_or_default(),
            adapter: common::var("CROSSGROTH_WGPU_ADAPTER"),
            cache_dir: common::var("CROSSGROTH_PERF_CACHE_DIR"),
        }
    })
}

fn read(rel: &str) -> String {
    for base in [".", concat!(env!("CARGO_MANIFEST_DIR"), "/../..")] {
        if let Ok(s) = std::fs::read_to_string(format!("{base}/{rel}")) {
            return s;
        }
    }
    panic!("cannot read {rel}");
}

struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    int64: bool,
    name: String,
}

fn gpu() -> Option<Gpu> {
    let a = common::preferred_adapter(settings().adapter.as_deref())?;
    let int64 = a.features().contains(wgpu::Features::SHADER_INT64);
    let mut features = wgpu::Features::empty();
    if int64 {
        features |= wgpu::Features::SHADER_INT64;
    }
    let (device, queue) = pollster::block_on(a.request_device(&wgpu::DeviceDescriptor {
        label: None,
        required_features: features,
        required_limits: wgpu::Limits {
            max_storage_buffer_binding_size: a.limits().max_storage_buffer_binding_size,
            max_buffer_size: a.limits().max_buffer_size,
            ..wgpu::Limits::default()
        },
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }))
    .ok()?;
    Some(Gpu {
        device,
        queue,
        int64,
        name: a.get_info().name,
    })
}

fn accessors(words: usize) -> String {
    let mut s = String::new();
    for k in 1..=2 {
        let ld: Vec<String> = (0..words).map(|i| format!("B{k}[o + {i}u]")).collect();
        let st: Vec<String> = (0..words)
            .map(|i| format!("B{k}[o + {i}u] = w[{i}];"))
            .collect();
        s += &format!(
            "fn fq_ld_B{k}(o: u32) -> Fq {{ return fq_from_words(array<u32, {words}>({})); }}\n\
             fn fq_st_B{k}(o: u32, a: Fq) {{ let w = fq_to_words(a); {} }}\n\
             fn f_ld_B{k}(o: u32) -> F {{ return fq_ld_B{k}(o); }}\n\
             fn f_st_B{k}(o: u32, a: F) {{ fq_st_B{k}(o, a); }}\n",
            ld.join(", "),
            st.join(" ")
        );
    }
    s
}

const KERNELS: &str = r#"
@compute @workgroup_size(64)
fn mulchain(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= prm(0)) { return; }
  var x = fq_ld_B1(24u * i);
  let y = fq_ld_B1(24u * i + 12u);
  for (var k = 0u; k < prm(1); k++) { x = fq_mul(x, y); }
  fq_st_B2(12u * i, x);
}

@compute @workgroup_size(64)
fn addchain(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let n = prm(0);
  if (i >= n) { return; }
  var acc = Xyzz(f_ld_B1(24u * i), f_ld_B1(24u * i + 12u), f_one(), f_one());
  for (var k = 0u; k < prm(1); k++) {
    var j = i + 1u + k;
    if (j >= n) { j -= n; }
    acc = bench_add(acc, Aff(f_ld_B1(24u * j), f_ld_B1(24u * j + 12u)));
  }
  f_st_B2(48u * i, acc.x); f_st_B2(48u * i + 12u, acc.y);
  f_st_B2(48u * i + 24u, acc.zz); f_st_B2(48u * i + 36u, acc.zzz);
}
"#;

struct Variant {
    label: String,
    field: &'static str,
    xyzz: &'static str,
    int64: bool,
}

/// The two field paths with the point code of shaders/ec/xyzz.wgsl. (The
/// unpacked portable field code and the earlier point code that this test
/// compared are in git history: see backends/wgpu/README.md.)
fn variants() -> Vec<Variant> {
    [
        ("int64", "shaders/ff/fq64.wgsl", true),
        ("packed", "shaders/ff/fq.wgsl", false),
    ]
    .into_iter()
    .map(|(label, field, int64)| Variant {
        label: label.to_string(),
        field,
        xyzz: "shaders/ec/xyzz.wgsl",
        int64,
    })
    .collect()
}

fn source(v: &Variant) -> String {
    let xyzz = read(v.xyzz);
    let glue = if xyzz.contains("fn bench_add") {
        ""
    } else if xyzz.contains("q_aff: bool") {
        "fn bench_add(p: Xyzz, q: Aff) -> Xyzz { return xyzz_add(p, Xyzz(q.x, q.y, f_one(), f_one()), true); }\n"
    } else {
        "fn bench_add(p: Xyzz, q: Aff) -> Xyzz { return xyzz_add(p, Xyzz(q.x, q.y, f_one(), f_one())); }\n"
    };
    [
        read("shaders/common/bindings.wgsl"),
        read(v.field),
        read("shaders/ec/g1.wgsl"),
        accessors(12),
        xyzz,
        glue.to_string(),
        KERNELS.to_string(),
    ]
    .join("\n")
}

/// Random values below 2^380 (< p), as 12-word little-endian integers.
fn inputs(n: usize) -> Vec<u32> {
    let mut s = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s as u32
    };
    let mut v = Vec::with_capacity(24 * n);
    for _ in 0..2 * n {
        for w in 0..12 {
            let x = next();
            v.push(if w == 11 { x & 0x0fff_ffff } else { x });
        }
    }
    v
}

/// (words out, seconds of the best of `Settings::reps` timed runs after an
/// untimed one, seconds to build the pipeline)
fn run(
    g: &Gpu,
    src: &str,
    entry: &str,
    input: &[u32],
    out_words: u64,
    n: u32,
    iters: u32,
) -> (Vec<u32>, f64, f64) {
    use wgpu::util::DeviceExt;
    let t = Instant::now();
    let sm = g.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(entry),
        source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(src)),
    });
    let pipe = g
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &sm,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        });
    let _ = g.device.poll(wgpu::PollType::wait_indefinitely());
    let compile = t.elapsed().as_secs_f64();
    let mut prm = [0u32; 32];
    prm[0] = n;
    prm[1] = iters;
    let ubuf = g
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&prm),
            usage: wgpu::BufferUsages::UNIFORM,
        });
    let inb = g
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(input),
            usage: wgpu::BufferUsages::STORAGE,
        });
    let outb = g.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: out_words * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let rb = g.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: out_words * 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let layout = pipe.get_bind_group_layout(0);
    let bg = g.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: ubuf.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: inb.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: outb.as_entire_binding(),
            },
        ],
    });
    let reps = settings().reps;
    let mut secs = f64::INFINITY;
    for rep in 0..=reps {
        let mut enc = g.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipe);
            pass.set_bind_group(0, &bg, &[]);
            pass.dispatch_workgroups(n.div_ceil(64), 1, 1);
        }
        if rep == reps {
            enc.copy_buffer_to_buffer(&outb, 0, &rb, 0, out_words * 4);
        }
        let t = Instant::now();
        g.queue.submit([enc.finish()]);
        let _ = g.device.poll(wgpu::PollType::wait_indefinitely());
        if rep > 0 {
            secs = secs.min(t.elapsed().as_secs_f64());
        }
    }
    let slice = rb.slice(..);
    slice.map_async(wgpu::MapMode::Read, |_| {});
    let _ = g.device.poll(wgpu::PollType::wait_indefinitely());
    let words: Vec<u32> = bytemuck::cast_slice(&slice.get_mapped_range().unwrap()).to_vec();
    (words, secs, compile)
}

#[test]
#[ignore]
fn field_and_point_throughput() {
    let Some(g) = gpu() else {
        eprintln!("*** SKIPPED: no adapter");
        return;
    };
    let n = settings().threads as u32;
    let iters = settings().iters as u32;
    let only = &settings().variants;
    let kernels = &settings().kernels;
    eprintln!(
        "adapter: {} (SHADER_INT64: {}), {n} invocations x {iters}",
        g.name, g.int64
    );
    let input = inputs(n as usize);
    let mut seen: std::collections::HashMap<(bool, &str), (Vec<u32>, String)> = Default::default();
    for v in &variants() {
        if v.int64 && !g.int64 {
            continue;
        }
        if let Some(o) = only {
            if !o.split(',').any(|x| x == v.label) {
                continue;
            }
        }
        let src = source(v);
        for (entry, words, per, it) in [
            ("mulchain", 12u64, "mul", 16 * iters),
            ("addchain", 48u64, "add", iters),
        ] {
            if !kernels.split(',').any(|k| k == entry) {
                continue;
            }
            let (out, secs, compile) = run(&g, &src, entry, &input, words * n as u64, n, it);
            let rate = n as f64 * it as f64 / secs;
            let mut same = String::new();
            if let Some((w, l)) = seen.get(&(v.int64, entry)) {
                assert!(*w == out, "{} {entry} differs from {l}", v.label);
                same = format!(", = {l}");
            } else {
                seen.insert((v.int64, entry), (out, v.label.clone()));
            }
            eprintln!(
                "{:>14} {entry}: {:8.3} ms, {rate:.3e} {per}/s (pipeline {:.2} s{same})",
                v.label,
                secs * 1e3,
                compile
            );
        }
    }
}

// ------------------------------------------------------------------ whole MSMs

/// G1 MSMs of 2^k uniform random scalars for k in CROSSGROTH_PERF_MSM_LOGS
/// (default "10,12"), on both field paths, checked against blst; GPU time from
/// timestamp queries (best of CROSSGROTH_PERF_MSM_REPS, default 2).
#[test]
#[ignore]
fn msm_g1_timed() {
    use crossgroth_gpu_host::reference::*;
    use crossgroth_wgpu::{Options, G1};
    use rand::SeedableRng;
    let logs = &settings().msm_logs;
    let reps = settings().msm_reps;
    let paths = settings().paths.as_str();
    let maxn = 1usize << logs.iter().max().unwrap();
    // the same inputs every run, so that timings compare
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x2545f4914f6cdd1d);
    let scalars = random_scalars(&mut rng, maxn);
    let bases = random_bases::<G1>(&mut rng, maxn);
    for int64 in [true, false] {
        if (paths == "int64" && !int64) || (paths == "portable" && int64) {
            continue;
        }
        let t = Instant::now();
        let Some(b) = open(Options {
            allow_int64: int64,
            ..Options::default()
        }) else {
            return;
        };
        if int64 && !b.uses_int64() {
            continue;
        }
        b.warm_up().unwrap();
        let label = if int64 { "int64" } else { "portable" };
        eprintln!(
            "[{label}] {}: pipelines built in {:.2?}",
            b.info(),
            t.elapsed()
        );
        let dev = b.upload::<G1>(&bases).unwrap();
        // Untimed, so that the GPU's clocks are up before the first timing.
        b.msm(&dev, 0, &scalars, None).unwrap();
        for &log in logs {
            let n = 1usize << log;
            let want = msm::<G1>(&bases[..n], &scalars[..n], None);
            let mut best = f64::INFINITY;
            for _ in 0..reps {
                let (got, gt) = b.time(|b| b.msm(&dev, 0, &scalars[..n], None)).unwrap();
                assert!(
                    point_eq::<G1>(&got, &want),
                    "[{label}] 2^{log} differs from blst"
                );
                best = best.min(gt.as_secs_f64());
            }
            eprintln!(
                "[{label}] G1 MSM 2^{log}: gpu {:.2} ms (best of {reps}), matches blst",
                best * 1e3
            );
        }
    }
}

/// A backend on the settings' adapter with `options` otherwise, or None
/// (said on stderr) where none opens.
fn open(options: crossgroth_wgpu::Options) -> Option<crossgroth_wgpu::WgpuDevice> {
    let adapter = settings()
        .adapter
        .clone()
        .map(crossgroth_wgpu::AdapterChoice::Name);
    match crossgroth_wgpu::WgpuDevice::with_options(crossgroth_wgpu::Options { adapter, ..options })
    {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("*** SKIPPED: {e}");
            None
        }
    }
}

/// H of a 2^CROSSGROTH_PERF_H_LOG domain and its G1 MSM, H read back and
/// sent up again against H kept on the device (`compute_h_on_device` and
/// `msm_h`): wall and GPU time of each, best of CROSSGROTH_PERF_MSM_REPS, the
/// two MSMs equal. Inputs and bases repeat a few thousand random values (the
/// time does not depend on them being distinct; making 2^27 random points
/// would take hours).
#[test]
#[ignore]
fn h_msm_timed() {
    use crossgroth_gpu_host::reference::*;
    use crossgroth_wgpu::{Options, G1};
    use rand::SeedableRng;
    let log = settings().h_log;
    let (m, reps) = (1usize << log, settings().msm_reps);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5851f42d4c957f2d);
    fn tile<T: Clone>(v: Vec<T>, n: usize) -> Vec<T> {
        v.iter().cycle().take(n).cloned().collect()
    }
    let distinct = m.min(1 << 12);
    let [a, b, c] = [(); 3].map(|_| tile(random_scalars(&mut rng, distinct), m));
    let bases = tile(random_bases::<G1>(&mut rng, distinct), m - 1);
    let Some(dev) = open(Options::default()) else {
        return;
    };
    dev.warm_up().unwrap();
    let on = dev.upload::<G1>(&bases).unwrap();
    eprintln!("{}: H of 2^{log} and its MSM", dev.info());
    let timed = |f: &mut dyn FnMut() -> blst::blst_p1| {
        let t = Instant::now();
        let (p, gpu) = dev.time(|_| Ok(f())).unwrap();
        (p, t.elapsed().as_secs_f64(), gpu.as_secs_f64())
    };
    let mut h = a.clone();
    let (mut read_back, mut kept) = ((f64::MAX, f64::MAX), (f64::MAX, f64::MAX));
    // the first round untimed, so that clocks are up and buffers made
    for rep in 0..=reps {
        let (want, wall, gpu) = timed(&mut || {
            h.copy_from_slice(&a);
            dev.compute_h_in_place(&mut h, &b, &c, log).unwrap();
            dev.msm(&on, 0, &h[..m - 1], None).unwrap()
        });
        if rep > 0 {
            read_back = (read_back.0.min(wall), read_back.1.min(gpu));
        }
        let (got, wall, gpu) = timed(&mut || {
            let dh = dev.compute_h_on_device(&a, &b, &c, log).unwrap();
            dev.msm_h(&on, 0, &dh).unwrap()
        });
        if rep > 0 {
            kept = (kept.0.min(wall), kept.1.min(gpu));
        }
        assert!(point_eq::<G1>(&got, &want), "2^{log}: the MSMs differ");
    }
    for (what, (wall, gpu)) in [("H read back", read_back), ("H on the device", kept)] {
        eprintln!(
            "2^{log} H + H MSM, {what}: wall {:.1} ms, gpu {:.1} ms (best of {reps})",
            wall * 1e3,
            gpu * 1e3
        );
    }
}

/// The first use of the pipelines in a fresh process: the first NTT (2^10) of
/// a new backend, then every other pipeline (`warm_up`), with the pipeline
/// cache in CROSSGROTH_PERF_CACHE_DIR where set. Run it twice with the same
/// directory, each in a process of its own, for the cold and the cached
/// figures (on NVIDIA with `__GL_SHADER_DISK_CACHE=0`, so that the driver's
/// own cache does not stand in for it).
#[test]
#[ignore]
fn pipelines_timed() {
    use crossgroth_gpu_host::reference::*;
    use crossgroth_wgpu::Options;
    let dir = settings().cache_dir.clone().map(std::path::PathBuf::from);
    let t = Instant::now();
    let Some(b) = open(Options {
        allow_int64: settings().paths != "portable",
        pipeline_cache_dir: dir.clone(),
        ..Options::default()
    }) else {
        return;
    };
    let open = t.elapsed();
    let file = b.pipeline_cache_file().map(|p| p.to_path_buf());
    let before = file
        .as_ref()
        .and_then(|f| std::fs::metadata(f).ok())
        .map(|m| m.len());
    let x = random_scalars(&mut rng("pipelines_timed"), 1 << 10);
    let mut want = x.clone();
    ntt(&mut want, 10, false);
    let mut got = x;
    let t = Instant::now();
    b.ntt(&mut got, 10, false).unwrap();
    let first = t.elapsed();
    assert!(fr_slices_eq(&got, &want), "the NTT differs from blst");
    let ntt_compile = b.compile_time();
    let t = Instant::now();
    b.warm_up().unwrap();
    let rest = t.elapsed();
    let after = file
        .as_ref()
        .and_then(|f| std::fs::metadata(f).ok())
        .map(|m| m.len());
    eprintln!(
        "{}\n  cache dir {dir:?}, file {file:?}: {before:?} bytes before, {after:?} after\n  \
         backend opened in {open:.2?}; first NTT 2^10 {first:.2?} (pipelines {ntt_compile:.2?}); \
         every other pipeline {rest:.2?}; pipelines in all {:.2?}",
        b.info(),
        b.compile_time()
    );
}

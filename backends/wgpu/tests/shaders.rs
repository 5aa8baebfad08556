//! The wgpu backend against blst on the host: NTT, H, G1 and G2 MSM on fresh
//! random inputs and edge cases, and the field code's multiplication and
//! squaring on their own.
//!
//! Without an adapter every test prints that it was skipped and passes,
//! unless CROSSGROTH_REQUIRE_WGPU=1 (then it fails). Sizes go up to
//! 2^CROSSGROTH_WGPU_TEST_LOG (default 12; raise it on a real GPU).
//! CROSSGROTH_WGPU_ADAPTER picks the adapter by name substring.

mod common;

use std::sync::OnceLock;
use std::time::Instant;

use blst::*;
use crossgroth_wgpu::*;
use rand::{Rng, SeedableRng};

// ------------------------------------------------------------------ setup

/// The developer settings of this target, from the environment (the only
/// place it reads them; scripts/device/run.sh sets them, and
/// backends/wgpu/README.md lists them).
struct Settings {
    /// CROSSGROTH_REQUIRE_WGPU=1: no adapter is a failure, not a skip.
    require: bool,
    /// CROSSGROTH_WGPU_TEST_LOG (default 12): the largest test size, log2.
    test_log: u32,
    /// CROSSGROTH_WGPU_BENCH_LOG (default 20): `large_sizes_timed`'s size.
    bench_log: u32,
    /// CROSSGROTH_WGPU_TEST_PATHS: both (default) | int64 | portable.
    paths: String,
    /// CROSSGROTH_WGPU_ADAPTER: the adapter by name, as `Options::adapter`.
    adapter: Option<String>,
}

/// The settings, read once, after `common::skip_llvm_optimiser` (so that
/// every test that reads them runs it before its first wgpu call).
fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        common::skip_llvm_optimiser();
        Settings {
            require: common::var("CROSSGROTH_REQUIRE_WGPU").as_deref() == Some("1"),
            test_log: common::parsed("CROSSGROTH_WGPU_TEST_LOG", 12),
            bench_log: common::parsed("CROSSGROTH_WGPU_BENCH_LOG", 20),
            paths: common::var("CROSSGROTH_WGPU_TEST_PATHS").unwrap_or_default(),
            adapter: common::var("CROSSGROTH_WGPU_ADAPTER"),
        }
    })
}

fn require() -> bool {
    settings().require
}

fn max_log() -> u32 {
    settings().test_log
}

/// The default options on the adapter the settings name.
fn options() -> Options {
    Options {
        adapter: settings().adapter.clone().map(AdapterChoice::Name),
        ..Options::default()
    }
}

/// Ok(None): no adapter (skipped, unless CROSSGROTH_REQUIRE_WGPU=1);
/// Err: the adapter is there but the backend or its pipelines failed.
fn make(opts: Options) -> Result<Option<WgpuDevice>, String> {
    settings(); // GALLIVM_PERF before the first wgpu call
    let allow_int64 = opts.allow_int64;
    match WgpuDevice::with_options(opts) {
        Ok(b) => {
            let t = Instant::now();
            if let Err(e) = b.warm_up() {
                return Err(format!(
                    "warm_up failed on {} (allow_int64 = {}): {e}",
                    b.info(),
                    allow_int64
                ));
            }
            eprintln!(
                "wgpu backend: {} (allow_int64 = {}); pipelines built in {:.2?}",
                b.info(),
                allow_int64,
                t.elapsed()
            );
            Ok(Some(b))
        }
        Err(WgpuError::Unavailable(e)) => {
            if require() {
                return Err(format!(
                    "CROSSGROTH_REQUIRE_WGPU=1 but wgpu is unavailable: {e}"
                ));
            }
            // Straight to the stderr handle: the harness captures eprintln!
            // of passing tests, and a skip must be seen.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: crossgroth-wgpu shader tests did not run: {e} \
                 (set CROSSGROTH_REQUIRE_WGPU=1 to make this a failure) ***\n"
            );
            Ok(None)
        }
        Err(e) => Err(format!(
            "backend creation failed (allow_int64 = {}): {e}",
            allow_int64
        )),
    }
}

/// Which paths to test: CROSSGROTH_WGPU_TEST_PATHS = both (default) | int64 | portable.
fn wanted(int64: bool) -> bool {
    match settings().paths.as_str() {
        "int64" => int64,
        "portable" => !int64,
        _ => true,
    }
}

struct Backends {
    ok: Vec<WgpuDevice>,
    /// Where SHADER_INT64 is in use: a backend that also builds G2 on it
    /// (`Options::g2_int64`; the default builds G2 on the portable code).
    g2_int64: Option<WgpuDevice>,
    errors: Vec<String>,
}

/// The backends under test, shared by the tests: the default one
/// (SHADER_INT64 field code where the adapter has it) and, where that one
/// uses SHADER_INT64, a second one forced onto the portable u32 code. A
/// backend that fails to build is reported by `backends_build` and skipped
/// by the other tests, so one path's failure does not hide the other's results.
fn all_backends() -> &'static Backends {
    static B: OnceLock<Backends> = OnceLock::new();
    B.get_or_init(|| {
        let mut bs = Backends {
            ok: Vec::new(),
            g2_int64: None,
            errors: Vec::new(),
        };
        let try_make = |opts: Options, bs: &mut Backends| match make(opts) {
            Ok(Some(b)) => bs.ok.push(b),
            Ok(None) => {}
            Err(e) => {
                eprintln!("*** {e}");
                bs.errors.push(e)
            }
        };
        try_make(options(), &mut bs);
        let int64 = bs.ok.first().map(|b| b.uses_int64()).unwrap_or(false);
        if int64 {
            try_make(
                Options {
                    allow_int64: false,
                    ..options()
                },
                &mut bs,
            );
            try_make(
                Options {
                    g2_int64: true,
                    ..options()
                },
                &mut bs,
            );
            // the last one built is the G2-on-int64 backend
            if bs.ok.last().is_some_and(|b| b.uses_int64_for_g2()) {
                bs.g2_int64 = bs.ok.pop();
            }
        } else if !bs.ok.is_empty() {
            eprintln!("(the adapter has no SHADER_INT64: only the portable path is tested)");
        }
        bs.ok.retain(|b| wanted(b.uses_int64()));
        if !wanted(true) {
            bs.g2_int64 = None;
        }
        bs
    })
}

fn backends() -> &'static [WgpuDevice] {
    &all_backends().ok
}

#[test]
fn backends_build() {
    let bs = all_backends();
    for b in bs.ok.iter().chain(&bs.g2_int64) {
        eprintln!("tested path: {} on {}", path(b), b.info());
    }
    assert!(bs.errors.is_empty(), "backend failures: {:#?}", bs.errors);
}

fn path(b: &WgpuDevice) -> &'static str {
    if b.uses_int64() {
        "int64"
    } else {
        "portable"
    }
}

fn rng(tag: u64) -> rand::rngs::StdRng {
    let seed: u64 = rand::thread_rng().gen();
    eprintln!("[{tag}] seed {seed:#x}");
    rand::rngs::StdRng::seed_from_u64(seed ^ tag)
}

// ------------------------------------------------------------------ Fr

const R_MINUS_1: [u64; 4] = [
    0xffffffff00000000,
    0x53bda402fffe5bfe,
    0x3339d80809a1d805,
    0x73eda753299d7d48,
];

fn fr(l: [u64; 4]) -> blst_fr {
    let mut r = blst_fr::default();
    unsafe { blst_fr_from_uint64(&mut r, l.as_ptr()) };
    r
}
fn fr_u(v: u64) -> blst_fr {
    fr([v, 0, 0, 0])
}
fn rand_fr(r: &mut impl Rng) -> blst_fr {
    fr([r.gen(), r.gen(), r.gen(), r.gen::<u64>() >> 2])
}
fn mul(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut o = blst_fr::default();
    unsafe { blst_fr_mul(&mut o, a, b) };
    o
}
fn add(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut o = blst_fr::default();
    unsafe { blst_fr_add(&mut o, a, b) };
    o
}
fn sub(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut o = blst_fr::default();
    unsafe { blst_fr_sub(&mut o, a, b) };
    o
}
fn inv(a: &blst_fr) -> blst_fr {
    let mut o = blst_fr::default();
    unsafe { blst_fr_inverse(&mut o, a) };
    o
}
fn pow(a: &blst_fr, mut e: u64) -> blst_fr {
    let (mut r, mut b) = (fr_u(1), *a);
    while e > 0 {
        if e & 1 == 1 {
            r = mul(&r, &b);
        }
        b = mul(&b, &b);
        e >>= 1;
    }
    r
}
fn omega(log_n: u32) -> blst_fr {
    let mut w = fr([
        0x3829971f439f0d2b,
        0xb63683508c2280b9,
        0xd09b681922c813b4,
        0x16a2a19edfe81f20,
    ]);
    for _ in log_n..32 {
        w = mul(&w, &w);
    }
    w
}

/// Host reference: bellperson's radix-2 FFT (serial), then × n^-1 if inverse.
fn cpu_ntt(a: &mut [blst_fr], log_n: u32, inverse: bool) {
    let n = a.len();
    let mut w = omega(log_n);
    if inverse {
        w = inv(&w);
    }
    for k in 0..n {
        let rk = k.reverse_bits() >> (usize::BITS - log_n);
        if k < rk && log_n > 0 {
            a.swap(rk, k);
        }
    }
    let mut m = 1;
    for _ in 0..log_n {
        let w_m = pow(&w, (n / (2 * m)) as u64);
        let mut k = 0;
        while k < n {
            let mut wj = fr_u(1);
            for j in 0..m {
                let t = mul(&a[k + j + m], &wj);
                a[k + j + m] = sub(&a[k + j], &t);
                a[k + j] = add(&a[k + j], &t);
                wj = mul(&wj, &w_m);
            }
            k += 2 * m;
        }
        m *= 2;
    }
    if inverse {
        let ninv = inv(&fr_u(n as u64));
        for x in a.iter_mut() {
            *x = mul(x, &ninv);
        }
    }
}

/// Host reference for H, step by step as bellperson does it.
fn cpu_h(a: &[blst_fr], b: &[blst_fr], c: &[blst_fr], log_m: u32) -> Vec<blst_fr> {
    let m = 1usize << log_m;
    let g = fr_u(7);
    let prep = |v: &[blst_fr]| {
        let mut x = v.to_vec();
        x.resize(m, blst_fr::default());
        cpu_ntt(&mut x, log_m, true);
        let mut gi = fr_u(1);
        for e in x.iter_mut() {
            *e = mul(e, &gi);
            gi = mul(&gi, &g);
        }
        cpu_ntt(&mut x, log_m, false);
        x
    };
    let (mut xa, xb, xc) = std::thread::scope(|t| {
        let (hb, hc) = (t.spawn(|| prep(b)), t.spawn(|| prep(c)));
        (prep(a), hb.join().unwrap(), hc.join().unwrap())
    });
    let zinv = inv(&sub(&pow(&g, m as u64), &fr_u(1)));
    for i in 0..m {
        xa[i] = mul(&sub(&mul(&xa[i], &xb[i]), &xc[i]), &zinv);
    }
    cpu_ntt(&mut xa, log_m, true);
    let ginv = inv(&g);
    let mut gi = fr_u(1);
    for e in xa.iter_mut() {
        *e = mul(e, &gi);
        gi = mul(&gi, &ginv);
    }
    xa.truncate(m - 1);
    xa
}

fn edge_vec(r: &mut impl Rng, n: usize) -> Vec<blst_fr> {
    (0..n)
        .map(|i| match i % 7 {
            0 => fr_u(0),
            1 => fr_u(1),
            2 => fr(R_MINUS_1),
            _ => rand_fr(r),
        })
        .collect()
}

// ------------------------------------------------------------------ field ops

/// A device of its own for the field-op kernels (the backend keeps its
/// device private): the adapter the backend would pick
/// (CROSSGROTH_WGPU_ADAPTER, else a discrete GPU first), with SHADER_INT64
/// where the adapter has it. None: no adapter.
fn field_device() -> Option<(wgpu::Device, wgpu::Queue, bool, String)> {
    let a = common::preferred_adapter(settings().adapter.as_deref())?;
    let int64 = a.features().contains(wgpu::Features::SHADER_INT64);
    let features = if int64 {
        wgpu::Features::SHADER_INT64
    } else {
        wgpu::Features::empty()
    };
    let (device, queue) = pollster::block_on(a.request_device(&wgpu::DeviceDescriptor {
        label: Some("field ops"),
        required_features: features,
        required_limits: wgpu::Limits::default(),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }))
    .ok()?;
    Some((device, queue, int64, a.get_info().name))
}

/// The kernel: for each pair (a, b) of `words`-word values in X, writes
/// `{f}_sqr(a)`, `{f}_mul(a, a)` and `{f}_mul(a, b)` to Y.
fn field_kernel(f: &str, ty: &str, words: usize) -> String {
    let ld = |k: usize| {
        (0..words)
            .map(|i| format!("X[{}u * i + {}u]", 2 * words, k * words + i))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let st: String = (0..words)
        .map(|i| format!(" Y[o + {i}u] = w[{i}];"))
        .collect();
    format!(
        "@group(0) @binding(0) var<storage, read> X: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> Y: array<u32>;\n\
         fn st(o: u32, a: {ty}) {{ let w = {f}_to_words(a);{st} }}\n\
         @compute @workgroup_size(64)\n\
         fn field_ops(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
         \x20 let i = gid.x;\n\
         \x20 if (i >= arrayLength(&X) / {w2}u) {{ return; }}\n\
         \x20 let a = {f}_from_words(array<u32, {words}>({a}));\n\
         \x20 let b = {f}_from_words(array<u32, {words}>({b}));\n\
         \x20 st({w3}u * i, {f}_sqr(a));\n\
         \x20 st({w3}u * i + {words}u, {f}_mul(a, a));\n\
         \x20 st({w3}u * i + {w2}u, {f}_mul(a, b));\n\
         }}\n",
        a = ld(0),
        b = ld(1),
        w2 = 2 * words,
        w3 = 3 * words,
    )
}

/// Runs `src`'s `field_ops` on `input` (`pairs` pairs of `words`-word values)
/// and reads back its 3 `words` words per pair.
fn run_field_kernel(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    src: &str,
    input: &[u32],
    pairs: usize,
    words: usize,
) -> Vec<u32> {
    use wgpu::util::DeviceExt;
    let sm = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("field ops"),
        source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed(src)),
    });
    let pipe = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("field ops"),
        layout: None,
        module: &sm,
        entry_point: Some("field_ops"),
        compilation_options: Default::default(),
        cache: None,
    });
    let inb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(input),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let size = (4 * 3 * words * pairs) as u64;
    let outb = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let rb = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipe.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: inb.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: outb.as_entire_binding(),
            },
        ],
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipe);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups((pairs as u32).div_ceil(64), 1, 1);
    }
    enc.copy_buffer_to_buffer(&outb, 0, &rb, 0, size);
    queue.submit([enc.finish()]);
    let slice = rb.slice(..);
    slice.map_async(wgpu::MapMode::Read, |_| {});
    let _ = device.poll(wgpu::PollType::wait_indefinitely());
    let out: Vec<u32> = bytemuck::cast_slice(&slice.get_mapped_range().unwrap()).to_vec();
    out
}

fn limbs_of(w: &[u32]) -> Vec<u64> {
    w.chunks(2)
        .map(|c| c[0] as u64 | ((c[1] as u64) << 32))
        .collect()
}
fn words_of(l: &[u64]) -> Vec<u32> {
    l.iter()
        .flat_map(|&x| [x as u32, (x >> 32) as u32])
        .collect()
}

/// A field as the device code sees it: values are little-endian u32 words
/// of an integer below the modulus, in the device's Montgomery form (radix
/// 2^bits, read from the shader's `{f}_RADIX_BITS`). The host side is blst
/// on the same raw integers.
#[derive(Clone, Copy, Debug)]
enum Field {
    Fq,
    Fr,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Fq => "fq",
            Field::Fr => "fr",
        }
    }
    fn ty(self) -> &'static str {
        match self {
            Field::Fq => "Fq",
            Field::Fr => "Fr",
        }
    }
    fn words(self) -> usize {
        match self {
            Field::Fq => 12,
            Field::Fr => 8,
        }
    }
    /// x y 2^-bits mod p: blst's Montgomery product (x y 2^-384, resp.
    /// 2^-256) times blst's Montgomery form of 2^(384 - bits) (2^(256 - bits)).
    fn dev_mul(self, x: &[u32], y: &[u32], bits: u32) -> Vec<u32> {
        match self {
            Field::Fq => unsafe {
                let fp = |w: &[u32]| blst_fp {
                    l: limbs_of(w).try_into().unwrap(),
                };
                let (mut k, mut r) = (blst_fp::default(), blst_fp::default());
                blst_fp_from_uint64(&mut k, [1u64 << (bits - 384), 0, 0, 0, 0, 0].as_ptr());
                blst_fp_inverse(&mut k, &k);
                blst_fp_mul(&mut r, &fp(x), &fp(y));
                blst_fp_mul(&mut r, &r, &k);
                words_of(&r.l)
            },
            Field::Fr => {
                let raw = |w: &[u32]| blst_fr {
                    l: limbs_of(w).try_into().unwrap(),
                };
                let k = inv(&fr_u(1u64 << (bits - 256)));
                words_of(&mul(&mul(&raw(x), &raw(y)), &k).l)
            }
        }
    }
    /// x - y mod p (the same on raw integers as on any Montgomery form).
    fn sub(self, x: &[u32], y: &[u32]) -> Vec<u32> {
        match self {
            Field::Fq => unsafe {
                let fp = |w: &[u32]| blst_fp {
                    l: limbs_of(w).try_into().unwrap(),
                };
                let mut r = blst_fp::default();
                blst_fp_sub(&mut r, &fp(x), &fp(y));
                words_of(&r.l)
            },
            Field::Fr => {
                let raw = |w: &[u32]| blst_fr {
                    l: limbs_of(w).try_into().unwrap(),
                };
                words_of(&sub(&raw(x), &raw(y)).l)
            }
        }
    }
    /// 0, 1, p - 1, p - 2, the device's 1 (2^bits mod p) and
    /// 2^(bits of p - 1) - 1 (every limb but the top one at its maximum).
    fn edges(self, bits: u32) -> Vec<Vec<u32>> {
        let n = self.words();
        let zero = vec![0u32; n];
        let mut one = zero.clone();
        one[0] = 1;
        let pm1 = self.sub(&zero, &one);
        let pm2 = self.sub(&pm1, &one);
        // 2^bits mod p = the Montgomery form (blst's) of 2^(bits - 384 / 256)
        let dev_one = match self {
            Field::Fq => {
                let mut k = blst_fp::default();
                let v = [1u64 << (bits - 384), 0, 0, 0, 0, 0];
                unsafe { blst_fp_from_uint64(&mut k, v.as_ptr()) };
                words_of(&k.l)
            }
            Field::Fr => words_of(&fr_u(1u64 << (bits - 256)).l),
        };
        let top_bits = 32 * n as u32 - pm1.last().unwrap().leading_zeros() - 1;
        let mut ones = vec![u32::MAX; n];
        for (i, w) in ones.iter_mut().enumerate() {
            let lo = 32 * i as u32;
            if lo >= top_bits {
                *w = 0;
            } else if top_bits - lo < 32 {
                *w = (1 << (top_bits - lo)) - 1;
            }
        }
        vec![zero, one, pm1, pm2, dev_one, ones]
    }
    /// Uniform below p (rejection sampling).
    fn random(self, r: &mut impl Rng) -> Vec<u32> {
        let zero = vec![0u32; self.words()];
        let mut one = zero.clone();
        one[0] = 1;
        let pm1 = self.sub(&zero, &one);
        let top = u32::MAX >> pm1.last().unwrap().leading_zeros();
        loop {
            let mut v: Vec<u32> = (0..self.words()).map(|_| r.gen()).collect();
            *v.last_mut().unwrap() &= top;
            if v.iter().rev().cmp(pm1.iter().rev()) != std::cmp::Ordering::Greater {
                return v;
            }
        }
    }
}

/// `{f}_RADIX_BITS` of a field shader.
fn radix_bits(src: &str) -> u32 {
    let at = src.find("_RADIX_BITS: u32 = ").expect("no _RADIX_BITS") + 19;
    src[at..].split('u').next().unwrap().parse().unwrap()
}

/// The field code alone (shaders/ff), which the other tests reach only
/// through NTTs and point arithmetic, and whose `{f}_sqr` nothing else calls:
/// `{f}_sqr(a)`, `{f}_mul(a, a)` and `{f}_mul(a, b)` of Fq and Fr against
/// blst, on both field paths (where the adapter has SHADER_INT64), for every
/// pair of edge cases (0, 1, p - 1, p - 2, the device's 1, 2^(bits - 1) - 1)
/// and 1024 random pairs.
#[test]
fn field_sqr_mul_match_blst() {
    let Some((device, queue, int64, name)) = field_device() else {
        assert!(
            !require(),
            "CROSSGROTH_REQUIRE_WGPU=1 but wgpu found no adapter"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED: field_sqr_mul_match_blst: no wgpu adapter \
             (set CROSSGROTH_REQUIRE_WGPU=1 to make this a failure) ***\n"
        );
        return;
    };
    if !int64 {
        eprintln!("(the adapter has no SHADER_INT64: only the portable path is tested)");
    }
    let mut r = rng(11);
    const FQ_SRC: [&str; 2] = [
        include_str!("../../../shaders/ff/fq.wgsl"),
        include_str!("../../../shaders/ff/fq64.wgsl"),
    ];
    const FR_SRC: [&str; 2] = [
        include_str!("../../../shaders/ff/fr.wgsl"),
        include_str!("../../../shaders/ff/fr64.wgsl"),
    ];
    for path_int64 in [false, true] {
        if (path_int64 && !int64) || !wanted(path_int64) {
            continue;
        }
        let p = if path_int64 { "int64" } else { "portable" };
        for field in [Field::Fq, Field::Fr] {
            let i = path_int64 as usize;
            let code = match field {
                Field::Fq => FQ_SRC[i],
                Field::Fr => FR_SRC[i],
            };
            let (f, n) = (field.name(), field.words());
            let bits = radix_bits(code);
            let src = [code.to_string(), field_kernel(f, field.ty(), n)].join("\n");
            let edges = field.edges(bits);
            let mut pairs: Vec<(Vec<u32>, Vec<u32>)> = Vec::new();
            for a in &edges {
                for b in &edges {
                    pairs.push((a.clone(), b.clone()));
                }
            }
            for _ in 0..1024 {
                pairs.push((field.random(&mut r), field.random(&mut r)));
            }
            let input: Vec<u32> = pairs
                .iter()
                .flat_map(|(a, b)| a.iter().chain(b))
                .copied()
                .collect();
            let out = run_field_kernel(&device, &queue, &src, &input, pairs.len(), n);
            for (k, (a, b)) in pairs.iter().enumerate() {
                let got = |j: usize| &out[(3 * k + j) * n..(3 * k + j + 1) * n];
                let aa = field.dev_mul(a, a, bits);
                assert_eq!(got(0), &aa[..], "[{p}] {f}_sqr({a:x?}) on {name}");
                assert_eq!(got(1), &aa[..], "[{p}] {f}_mul(a, a), a = {a:x?} on {name}");
                assert_eq!(
                    got(2),
                    &field.dev_mul(a, b, bits)[..],
                    "[{p}] {f}_mul({a:x?}, {b:x?}) on {name}"
                );
            }
            eprintln!(
                "[{p}] {f}_sqr, {f}_mul: {} pairs match blst (R = 2^{bits}) on {name}",
                pairs.len()
            );
        }
    }
}

// ------------------------------------------------------------------ points

fn scalar_bytes(s: &blst_fr) -> [u8; 32] {
    let mut sc = blst_scalar::default();
    unsafe { blst_scalar_from_fr(&mut sc, s) };
    sc.b
}

/// n G1 bases: a random chain P_i = P_{i-1} + Q, with identity and repeated
/// points mixed in when `edges`.
fn g1_bases(r: &mut impl Rng, n: usize, edges: bool) -> Vec<blst_p1_affine> {
    let g = unsafe { *blst_p1_generator() };
    let mul_g = |s: &blst_fr| {
        let mut p = blst_p1::default();
        unsafe { blst_p1_mult(&mut p, &g, scalar_bytes(s).as_ptr(), 255) };
        p
    };
    let q = mul_g(&rand_fr(r));
    let mut p = mul_g(&rand_fr(r));
    let mut jac = Vec::with_capacity(n);
    for _ in 0..n {
        jac.push(p);
        unsafe { blst_p1_add_or_double(&mut p, &p, &q) };
    }
    // one batched inversion instead of one per point (2^22 bases in seconds)
    let mut v = vec![blst_p1_affine::default(); n];
    if n > 0 {
        let ptrs = [jac.as_ptr(), std::ptr::null()];
        unsafe { blst_p1s_to_affine(v.as_mut_ptr(), ptrs.as_ptr(), n) };
    }
    if edges {
        for i in 0..n {
            if i % 11 == 5 {
                v[i] = blst_p1_affine::default(); // identity
            } else if i % 11 == 7 && i > 0 {
                v[i] = v[i - 1]; // repeated
            }
        }
    }
    v
}

fn g2_bases(r: &mut impl Rng, n: usize, edges: bool) -> Vec<blst_p2_affine> {
    let g = unsafe { *blst_p2_generator() };
    let mul_g = |s: &blst_fr| {
        let mut p = blst_p2::default();
        unsafe { blst_p2_mult(&mut p, &g, scalar_bytes(s).as_ptr(), 255) };
        p
    };
    let q = mul_g(&rand_fr(r));
    let mut p = mul_g(&rand_fr(r));
    let mut jac = Vec::with_capacity(n);
    for _ in 0..n {
        jac.push(p);
        unsafe { blst_p2_add_or_double(&mut p, &p, &q) };
    }
    let mut v = vec![blst_p2_affine::default(); n];
    if n > 0 {
        let ptrs = [jac.as_ptr(), std::ptr::null()];
        unsafe { blst_p2s_to_affine(v.as_mut_ptr(), ptrs.as_ptr(), n) };
    }
    if edges {
        for i in 0..n {
            if i % 11 == 5 {
                v[i] = blst_p2_affine::default();
            } else if i % 11 == 7 && i > 0 {
                v[i] = v[i - 1];
            }
        }
    }
    v
}

/// (scalar, base index) pairs an MSM with this density should sum.
fn pairs(n_scalars: usize, density: Option<&[u64]>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut rank = 0;
    for i in 0..n_scalars {
        match density {
            None => out.push((i, i)),
            Some(d) => {
                if (d[i / 64] >> (i % 64)) & 1 == 1 {
                    out.push((i, rank));
                    rank += 1;
                }
            }
        }
    }
    out
}

/// Below this many terms the references sum scalar multiples one by one (no
/// shared code with any MSM); above it they use blst's Pippenger on every core.
const NAIVE_MAX: usize = 4096;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The selected (scalar bytes, base) pairs of an MSM, as blst's Pippenger takes them.
fn selected<P: Copy>(b: &[P], s: &[blst_fr], d: Option<&[u64]>) -> (Vec<[u8; 32]>, Vec<P>) {
    pairs(s.len(), d)
        .into_iter()
        .map(|(i, k)| (scalar_bytes(&s[i]), b[k]))
        .unzip()
}

/// The reference MSM over one curve: term by term up to NAIVE_MAX terms, blst's
/// Pippenger on every core above.
macro_rules! cpu_msm {
    ($name:ident, $aff:ty, $pt:ty, $from_affine:ident, $mult:ident, $add:ident, $pip:ident, $scratch:ident) => {
        fn $name(b: &[$aff], s: &[blst_fr], d: Option<&[u64]>) -> $pt {
            let (sc, pts) = selected(b, s, d);
            let mut acc = <$pt>::default();
            if pts.len() <= NAIVE_MAX {
                for (k, p) in sc.iter().zip(&pts) {
                    let (mut j, mut t) = (<$pt>::default(), <$pt>::default());
                    unsafe {
                        $from_affine(&mut j, p);
                        $mult(&mut t, &j, k.as_ptr(), 255);
                        $add(&mut acc, &acc, &t);
                    }
                }
                return acc;
            }
            let per = pts.len().div_ceil(threads());
            let parts: Vec<$pt> = std::thread::scope(|scope| {
                let hs: Vec<_> = pts
                    .chunks(per)
                    .zip(sc.chunks(per))
                    .map(|(p, k)| {
                        scope.spawn(move || {
                            let n = p.len();
                            let pp = [p.as_ptr(), std::ptr::null()];
                            let kp = [k.as_ptr() as *const u8, std::ptr::null()];
                            let mut scratch = vec![0u64; unsafe { $scratch(n) } / 8];
                            let mut out = <$pt>::default();
                            unsafe {
                                $pip(
                                    &mut out,
                                    pp.as_ptr(),
                                    n,
                                    kp.as_ptr(),
                                    255,
                                    scratch.as_mut_ptr() as *mut limb_t,
                                )
                            };
                            out
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for p in &parts {
                unsafe { $add(&mut acc, &acc, p) };
            }
            acc
        }
    };
}
cpu_msm!(
    cpu_msm_g1,
    blst_p1_affine,
    blst_p1,
    blst_p1_from_affine,
    blst_p1_mult,
    blst_p1_add_or_double,
    blst_p1s_mult_pippenger,
    blst_p1s_mult_pippenger_scratch_sizeof
);
cpu_msm!(
    cpu_msm_g2,
    blst_p2_affine,
    blst_p2,
    blst_p2_from_affine,
    blst_p2_mult,
    blst_p2_add_or_double,
    blst_p2s_mult_pippenger,
    blst_p2s_mult_pippenger_scratch_sizeof
);

fn eq1(a: &blst_p1, b: &blst_p1) -> bool {
    unsafe { blst_p1_is_equal(a, b) }
}
fn eq2(a: &blst_p2, b: &blst_p2) -> bool {
    unsafe { blst_p2_is_equal(a, b) }
}

fn density_of(r: &mut impl Rng, n: usize, p: f64) -> (Vec<u64>, usize) {
    let mut d = vec![0u64; n.div_ceil(64).max(1)];
    let mut count = 0;
    for i in 0..n {
        if r.gen_bool(p) {
            d[i / 64] |= 1 << (i % 64);
            count += 1;
        }
    }
    (d, count)
}

// ------------------------------------------------------------------ tests

#[allow(dead_code)]
fn assert_send_sync<T: Send + Sync + 'static>() {}
#[allow(dead_code)]
fn api_types_are_send_sync() {
    assert_send_sync::<WgpuDevice>();
    assert_send_sync::<Bases<G1>>();
    assert_send_sync::<Bases<G2>>();
    assert_send_sync::<WgpuError>();
}

#[test]
fn adapter_and_errors() {
    settings();
    match probe() {
        Ok(list) => {
            for a in &list {
                eprintln!("adapter: {a:?}");
            }
        }
        Err(e) => eprintln!("probe: {e}"),
    }
    let Some(b) = backends().first() else { return };
    eprintln!("info: {}", b.info());
    // Bad input is an error, not a panic.
    let mut v = vec![fr_u(1); 3];
    assert!(matches!(
        b.ntt(&mut v, 2, false),
        Err(WgpuError::InvalidInput(_))
    ));
    assert!(matches!(
        b.ntt(&mut v, 40, false),
        Err(WgpuError::InvalidInput(_))
    ));
    let bases = b.upload::<G1>(&g1_bases(&mut rng(1), 4, false)).unwrap();
    assert_eq!(bases.len(), 4);
    let s = vec![fr_u(5); 5];
    assert!(matches!(
        b.msm(&bases, 0, &s, None),
        Err(WgpuError::InvalidInput(_))
    ));
    // density with more set bits than bases
    assert!(matches!(
        b.msm(&bases, 0, &s, Some(&[0x1f])),
        Err(WgpuError::InvalidInput(_))
    ));
    // density too short for the scalars
    let s100 = vec![fr_u(5); 100];
    assert!(matches!(
        b.msm(&bases, 0, &s100, Some(&[1])),
        Err(WgpuError::InvalidInput(_))
    ));
    assert!(matches!(
        b.compute_h(&[fr_u(1); 5], &[], &[], 2),
        Err(WgpuError::InvalidInput(_))
    ));
    // Too large for the adapter: an error, not a panic or an abort.
    assert!(b.ntt(&mut [], 27, false).is_err());
    // Empty inputs.
    assert!(eq1(
        &b.msm(&bases, 0, &[], None).unwrap(),
        &blst_p1::default()
    ));
    assert!(b.compute_h(&[], &[], &[], 0).unwrap().is_empty());
    let mut one = vec![fr_u(9)];
    b.ntt(&mut one, 0, true).unwrap();
    assert_eq!(one[0].l, fr_u(9).l);
}

#[test]
fn ntt_matches_cpu() {
    for b in backends() {
        ntt_matches_cpu_on(b);
    }
}

fn ntt_matches_cpu_on(b: &WgpuDevice) {
    eprintln!("--- ntt_matches_cpu on the {} path", path(b));
    let mut r = rng(2);
    let mut logs: Vec<u32> = vec![1, 2, 3, 4, 5, 7, 10];
    logs.push(max_log());
    for log_n in logs {
        let n = 1usize << log_n;
        let x: Vec<blst_fr> = if log_n % 2 == 0 {
            edge_vec(&mut r, n)
        } else {
            (0..n).map(|_| rand_fr(&mut r)).collect()
        };
        for inverse in [false, true] {
            let mut want = x.clone();
            cpu_ntt(&mut want, log_n, inverse);
            let mut got = x.clone();
            let ((), t) = b.time(|b| b.ntt(&mut got, log_n, inverse)).unwrap();
            assert!(
                got.iter().zip(&want).all(|(a, b)| a.l == b.l),
                "ntt 2^{log_n} inverse={inverse} differs from the CPU"
            );
            eprintln!("ntt 2^{log_n} inverse={inverse}: ok (gpu {t:.2?})");
        }
        // round trip
        let mut y = x.clone();
        b.ntt(&mut y, log_n, false).unwrap();
        b.ntt(&mut y, log_n, true).unwrap();
        assert!(
            y.iter().zip(&x).all(|(a, b)| a.l == b.l),
            "ntt round trip 2^{log_n}"
        );
    }
}

#[test]
fn compute_h_matches_cpu() {
    for b in backends() {
        compute_h_matches_cpu_on(b);
    }
}

fn compute_h_matches_cpu_on(b: &WgpuDevice) {
    eprintln!("--- compute_h_matches_cpu on the {} path", path(b));
    let mut r = rng(3);
    let ml = max_log();
    for (log_m, n) in [
        (1u32, 1usize),
        (1, 2),
        (2, 3),
        (3, 5),
        (5, 32),
        (8, 200),
        (ml, (1usize << ml) - 3),
    ] {
        let mk = |r: &mut rand::rngs::StdRng| -> Vec<blst_fr> { edge_vec(r, n) };
        let (a, bb, c) = (mk(&mut r), mk(&mut r), mk(&mut r));
        // a satisfied-looking witness too: c = a*b
        let c2: Vec<blst_fr> = a.iter().zip(&bb).map(|(x, y)| mul(x, y)).collect();
        for cc in [&c, &c2] {
            let want = cpu_h(&a, &bb, cc, log_m);
            let (got, t) = b.time(|b| b.compute_h(&a, &bb, cc, log_m)).unwrap();
            assert_eq!(got.len(), want.len());
            assert!(
                got.iter().zip(&want).all(|(x, y)| x.l == y.l),
                "compute_h 2^{log_m} (n = {n}) differs from the CPU"
            );
            eprintln!("compute_h 2^{log_m} n={n}: ok (gpu {t:.2?})");
        }
    }
    // shorter b and c than a
    let a: Vec<blst_fr> = (0..13).map(|_| rand_fr(&mut r)).collect();
    let bb: Vec<blst_fr> = (0..7).map(|_| rand_fr(&mut r)).collect();
    let want = cpu_h(&a, &bb, &[], 4);
    let got = b.compute_h(&a, &bb, &[], 4).unwrap();
    assert!(got.iter().zip(&want).all(|(x, y)| x.l == y.l));
}

fn check_g1(
    b: &WgpuDevice,
    bases: &[blst_p1_affine],
    dev: &Bases<G1>,
    s: &[blst_fr],
    d: Option<&[u64]>,
    what: &str,
) {
    let want = cpu_msm_g1(bases, s, d);
    let (got, t) = b.time(|b| b.msm(dev, 0, s, d)).unwrap();
    assert!(eq1(&got, &want), "G1 MSM {what} differs from blst");
    eprintln!("G1 MSM {what}: ok (gpu {t:.2?})");
}

fn check_g2(
    b: &WgpuDevice,
    bases: &[blst_p2_affine],
    dev: &Bases<G2>,
    s: &[blst_fr],
    d: Option<&[u64]>,
    what: &str,
) {
    let want = cpu_msm_g2(bases, s, d);
    let (got, t) = b.time(|b| b.msm(dev, 0, s, d)).unwrap();
    assert!(eq2(&got, &want), "G2 MSM {what} differs from blst");
    eprintln!("G2 MSM {what}: ok (gpu {t:.2?})");
}

#[test]
fn msm_g1_matches_blst() {
    for b in backends() {
        msm_g1_matches_blst_on(b);
    }
}

fn msm_g1_matches_blst_on(b: &WgpuDevice) {
    eprintln!("--- msm_g1_matches_blst on the {} path", path(b));
    let mut r = rng(4);
    let nmax = (1usize << max_log()).max(1024);
    let bases = g1_bases(&mut r, nmax, false);
    let dev = b.upload::<G1>(&bases).unwrap();
    for n in [1usize, 2, 3, 17, 100, 1000, nmax] {
        let s: Vec<blst_fr> = (0..n).map(|_| rand_fr(&mut r)).collect();
        check_g1(b, &bases, &dev, &s, None, &format!("random n={n}"));
    }
    // fewer scalars than bases, mixed edge scalars
    let s = edge_vec(&mut r, 777);
    check_g1(b, &bases, &dev, &s, None, "edge scalars n=777");
}

/// MSMs that start at a later base (`msm`'s `first`: an assignment's auxiliary
/// part after its inputs' bases), with and without a density; past the end an
/// error.
#[test]
fn msm_from_a_later_base() {
    for b in backends() {
        eprintln!("--- msm_from_a_later_base on the {} path", path(b));
        let mut r = rng(21);
        for &(first, nvars, p) in &[(1usize, 300usize, 0.5f64), (70, 1500, 0.7)] {
            let (d, count) = density_of(&mut r, nvars, p);
            let bases = g1_bases(&mut r, first + count, true);
            let dev = b.upload::<G1>(&bases).unwrap();
            let s = edge_vec(&mut r, nvars);
            let got = b.msm(&dev, first, &s, Some(&d)).unwrap();
            assert!(
                eq1(&got, &cpu_msm_g1(&bases[first..], &s, Some(&d))),
                "G1 MSM from base {first}, density, differs from blst"
            );
            let dense = &s[..count];
            let got = b.msm(&dev, first, dense, None).unwrap();
            assert!(
                eq1(&got, &cpu_msm_g1(&bases[first..], dense, None)),
                "G1 MSM from base {first} differs from blst"
            );
            assert!(b.msm(&dev, first + 1, dense, None).is_err());
            assert!(b.msm(&dev, bases.len() + 1, &[], None).is_err());
        }
        let bases = g2_bases(&mut r, 200, true);
        let dev = b.upload::<G2>(&bases).unwrap();
        let s = edge_vec(&mut r, 150);
        let got = b.msm(&dev, 50, &s, None).unwrap();
        assert!(
            eq2(&got, &cpu_msm_g2(&bases[50..], &s, None)),
            "G2 MSM from base 50 differs from blst"
        );
        eprintln!("MSMs from a later base: ok");
    }
}

#[test]
fn msm_g1_edge_cases() {
    for b in backends() {
        msm_g1_edge_cases_on(b);
    }
}

fn msm_g1_edge_cases_on(b: &WgpuDevice) {
    eprintln!("--- msm_g1_edge_cases on the {} path", path(b));
    let mut r = rng(5);
    let n = 600;
    let bases = g1_bases(&mut r, n, true); // identities and repeats
    let dev = b.upload::<G1>(&bases).unwrap();
    check_g1(b, &bases, &dev, &vec![fr_u(0); n], None, "all zero");
    check_g1(b, &bases, &dev, &vec![fr_u(1); n], None, "all one");
    check_g1(b, &bases, &dev, &vec![fr(R_MINUS_1); n], None, "all r-1");
    check_g1(b, &bases, &dev, &vec![fr_u(2); n], None, "all two");
    let same = rand_fr(&mut r);
    check_g1(b, &bases, &dev, &vec![same; n], None, "all equal");
    // crowded and ordinary buckets side by side (the balanced accumulation:
    // buckets spanning many chunks next to buckets inside one)
    let half: Vec<blst_fr> = (0..n)
        .map(|i| if i % 2 == 0 { same } else { rand_fr(&mut r) })
        .collect();
    check_g1(b, &bases, &dev, &half, None, "half equal, half random");
    check_g1(
        b,
        &bases,
        &dev,
        &edge_vec(&mut r, n),
        None,
        "mixed, identity and repeated bases",
    );
    // The same base many times (bucket doublings): P, P, P, ... with equal scalars.
    let rep = vec![bases[0]; 300];
    let drep = b.upload::<G1>(&rep).unwrap();
    check_g1(
        b,
        &rep,
        &drep,
        &vec![same; 300],
        None,
        "repeated base, equal scalars",
    );
    check_g1(
        b,
        &rep,
        &drep,
        &edge_vec(&mut r, 300),
        None,
        "repeated base",
    );
    // P and -P cancel in one bucket.
    let mut neg = bases[0];
    unsafe {
        let mut p = blst_p1::default();
        blst_p1_from_affine(&mut p, &bases[0]);
        blst_p1_cneg(&mut p, true);
        blst_p1_to_affine(&mut neg, &p);
    }
    let pm = vec![bases[0], neg, bases[1]];
    let dpm = b.upload::<G1>(&pm).unwrap();
    check_g1(b, &pm, &dpm, &[same, same, same], None, "P + (-P)");
    // Densities: empty, full, random; scalars cover more variables than bases.
    let nv = 1500;
    let s = edge_vec(&mut r, nv);
    check_g1(
        b,
        &bases,
        &dev,
        &s,
        Some(&vec![0u64; nv.div_ceil(64)]),
        "empty density",
    );
    let (d, cnt) = density_of(&mut r, nv, 0.3);
    assert!(cnt <= n);
    check_g1(
        b,
        &bases,
        &dev,
        &s,
        Some(&d),
        &format!("random density ({cnt} of {nv})"),
    );
    let full = vec![u64::MAX; 600usize.div_ceil(64)];
    check_g1(b, &bases, &dev, &s[..600], Some(&full), "full density");
    // Bits beyond scalars.len() are ignored.
    let mut dx = d.clone();
    *dx.last_mut().unwrap() |= !0u64 << (nv % 64);
    let want = cpu_msm_g1(&bases, &s, Some(&d));
    assert!(
        eq1(&b.msm(&dev, 0, &s, Some(&dx)).unwrap(), &want),
        "density bits beyond the scalars must be ignored"
    );
    let dense_s: Vec<blst_fr> = (0..nv).map(|_| rand_fr(&mut r)).collect();
    check_g1(
        b,
        &bases,
        &dev,
        &dense_s,
        Some(&d),
        "random density, random scalars",
    );
}

#[test]
fn msm_g2_matches_blst() {
    for b in backends().iter().chain(&all_backends().g2_int64) {
        msm_g2_matches_blst_on(b);
    }
}

fn msm_g2_matches_blst_on(b: &WgpuDevice) {
    eprintln!(
        "--- msm_g2_matches_blst on the {} path, G2 on the {} field code",
        path(b),
        if b.uses_int64_for_g2() {
            "int64"
        } else {
            "portable"
        }
    );
    let mut r = rng(6);
    let nmax = (1usize << max_log().saturating_sub(1)).max(512);
    let bases = g2_bases(&mut r, nmax, true);
    let dev = b.upload::<G2>(&bases).unwrap();
    for n in [1usize, 5, 100, nmax] {
        let s: Vec<blst_fr> = (0..n).map(|_| rand_fr(&mut r)).collect();
        check_g2(
            b,
            &bases,
            &dev,
            &s,
            None,
            &format!("random n={n} (identity/repeated bases)"),
        );
    }
    let n = 300;
    check_g2(b, &bases, &dev, &vec![fr_u(0); n], None, "all zero");
    check_g2(b, &bases, &dev, &vec![fr_u(1); n], None, "all one");
    check_g2(b, &bases, &dev, &vec![fr(R_MINUS_1); n], None, "all r-1");
    let same = rand_fr(&mut r);
    let half: Vec<blst_fr> = (0..n)
        .map(|i| if i % 3 == 0 { same } else { rand_fr(&mut r) })
        .collect();
    check_g2(b, &bases, &dev, &half, None, "a third equal");
    check_g2(b, &bases, &dev, &edge_vec(&mut r, n), None, "edge scalars");
    let rep = vec![bases[0]; 64];
    let drep = b.upload::<G2>(&rep).unwrap();
    let same = rand_fr(&mut r);
    check_g2(
        b,
        &rep,
        &drep,
        &vec![same; 64],
        None,
        "repeated base, equal scalars",
    );
    let nv = 700;
    let s = edge_vec(&mut r, nv);
    let (d, _) = density_of(&mut r, nv, 0.4);
    check_g2(b, &bases, &dev, &s, Some(&d), "random density");
    check_g2(b, &bases, &dev, &s, Some(&[0u64; 11]), "empty density");
}

// ------------------------------------------------------------------ large sizes

fn bench_log() -> u32 {
    settings().bench_log
}

fn g1_chain(r: &mut impl Rng, n: usize) -> Vec<blst_p1_affine> {
    let g = unsafe { *blst_p1_generator() };
    let mut q = blst_p1::default();
    let mut p = blst_p1::default();
    unsafe {
        blst_p1_mult(&mut q, &g, scalar_bytes(&rand_fr(r)).as_ptr(), 255);
        blst_p1_mult(&mut p, &g, scalar_bytes(&rand_fr(r)).as_ptr(), 255);
    }
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(p);
        unsafe { blst_p1_add_or_double(&mut p, &p, &q) };
    }
    p1_affines::from(&v).as_slice().to_vec()
}

fn g2_chain(r: &mut impl Rng, n: usize) -> Vec<blst_p2_affine> {
    let g = unsafe { *blst_p2_generator() };
    let mut q = blst_p2::default();
    let mut p = blst_p2::default();
    unsafe {
        blst_p2_mult(&mut q, &g, scalar_bytes(&rand_fr(r)).as_ptr(), 255);
        blst_p2_mult(&mut p, &g, scalar_bytes(&rand_fr(r)).as_ptr(), 255);
    }
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(p);
        unsafe { blst_p2_add_or_double(&mut p, &p, &q) };
    }
    p2_affines::from(&v).as_slice().to_vec()
}

fn bytes_of(s: &[blst_fr]) -> Vec<u8> {
    s.iter().flat_map(scalar_bytes).collect()
}

/// Large sizes with timings (GPU time from timestamp queries, then wall
/// time), each result checked against blst. For a real GPU:
/// `--ignored large_sizes_timed`, size 2^CROSSGROTH_WGPU_BENCH_LOG (20).
#[test]
#[ignore]
fn large_sizes_timed() {
    use blst::MultiPoint;
    let log = bench_log();
    let n = 1usize << log;
    let mut r = rng(9);
    let t = Instant::now();
    let b1 = g1_chain(&mut r, n);
    let n2 = n / 4;
    let b2 = g2_chain(&mut r, n2);
    let uni: Vec<blst_fr> = (0..n).map(|_| rand_fr(&mut r)).collect();
    // Groth16-like: 45% zero, 45% one, 10% random.
    let g16: Vec<blst_fr> = (0..n)
        .map(|_| match r.gen_range(0..20) {
            0..=8 => fr_u(0),
            9..=17 => fr_u(1),
            _ => rand_fr(&mut r),
        })
        .collect();
    let want_uni = b1.as_slice().mult(&bytes_of(&uni), 255);
    let want_g16 = b1.as_slice().mult(&bytes_of(&g16), 255);
    let want_g2 = b2.as_slice().mult(&bytes_of(&uni[..n2]), 255);
    let mut ntt_want = uni.clone();
    cpu_ntt(&mut ntt_want, log, false);
    let hn = n - n / 3;
    let h_want = cpu_h(&uni[..hn], &g16[..hn], &uni[n - hn..], log);
    eprintln!("inputs and blst references in {:.2?}", t.elapsed());
    for b in backends() {
        let p = path(b);
        let t = Instant::now();
        let d1 = b.upload::<G1>(&b1).unwrap();
        let d2 = b.upload::<G2>(&b2).unwrap();
        eprintln!(
            "bench [{p}] upload 2^{log} G1 + 2^{} G2 bases: wall {:.2?}",
            log - 2,
            t.elapsed()
        );
        for rep in 0..2 {
            let t = Instant::now();
            let (got, gt) = b.time(|b| b.msm(&d1, 0, &uni, None)).unwrap();
            assert!(
                eq1(&got, &want_uni),
                "[{p}] G1 MSM 2^{log} uniform differs from blst"
            );
            eprintln!(
                "bench [{p}] G1 MSM 2^{log} uniform (run {rep}): gpu {gt:.2?}, wall {:.2?}",
                t.elapsed()
            );
        }
        let t = Instant::now();
        let (got, gt) = b.time(|b| b.msm(&d1, 0, &g16, None)).unwrap();
        assert!(
            eq1(&got, &want_g16),
            "[{p}] G1 MSM 2^{log} groth16-like differs from blst"
        );
        eprintln!(
            "bench [{p}] G1 MSM 2^{log} 90% zero/one: gpu {gt:.2?}, wall {:.2?}",
            t.elapsed()
        );
        for rep in 0..2 {
            let t = Instant::now();
            let (got, gt) = b.time(|b| b.msm(&d2, 0, &uni[..n2], None)).unwrap();
            assert!(
                eq2(&got, &want_g2),
                "[{p}] G2 MSM 2^{} differs from blst",
                log - 2
            );
            eprintln!(
                "bench [{p}] G2 MSM 2^{} uniform (run {rep}): gpu {gt:.2?}, wall {:.2?}",
                log - 2,
                t.elapsed()
            );
        }
        for rep in 0..2 {
            let mut x = uni.clone();
            let t = Instant::now();
            let (_, gt) = b.time(|b| b.ntt(&mut x, log, false)).unwrap();
            assert!(
                x.iter().zip(&ntt_want).all(|(a, c)| a.l == c.l),
                "[{p}] NTT 2^{log} differs"
            );
            eprintln!(
                "bench [{p}] NTT 2^{log} (run {rep}): gpu {gt:.2?}, wall {:.2?}",
                t.elapsed()
            );
        }
        for rep in 0..2 {
            let t = Instant::now();
            let (h, gt) = b
                .time(|b| b.compute_h(&uni[..hn], &g16[..hn], &uni[n - hn..], log))
                .unwrap();
            assert!(
                h.iter().zip(&h_want).all(|(a, c)| a.l == c.l),
                "[{p}] H 2^{log} differs"
            );
            eprintln!(
                "bench [{p}] compute_h 2^{log} (run {rep}): gpu {gt:.2?}, wall {:.2?}",
                t.elapsed()
            );
        }
        eprintln!(
            "bench [{p}] pipeline creation total {:.2?}",
            b.compile_time()
        );
    }
}

/// The multi-threaded Pippenger reference used above NAIVE_MAX terms agrees with
/// the term-by-term sum, identities and repeated bases included (no GPU needed).
#[test]
fn reference_msms_agree() {
    let mut r = rng(99);
    let n = NAIVE_MAX + 300;
    let s: Vec<blst_fr> = (0..n).map(|_| rand_fr(&mut r)).collect();
    let naive1 = |b: &[blst_p1_affine]| {
        let mut acc = blst_p1::default();
        for (p, k) in b.iter().zip(&s) {
            let (mut j, mut t) = (blst_p1::default(), blst_p1::default());
            unsafe {
                blst_p1_from_affine(&mut j, p);
                blst_p1_mult(&mut t, &j, scalar_bytes(k).as_ptr(), 255);
                blst_p1_add_or_double(&mut acc, &acc, &t);
            }
        }
        acc
    };
    let b1 = g1_bases(&mut r, n, true);
    assert!(eq1(&cpu_msm_g1(&b1, &s, None), &naive1(&b1)));
    let b2 = g2_bases(&mut r, n, true);
    let mut acc = blst_p2::default();
    for (p, k) in b2.iter().zip(&s) {
        let (mut j, mut t) = (blst_p2::default(), blst_p2::default());
        unsafe {
            blst_p2_from_affine(&mut j, p);
            blst_p2_mult(&mut t, &j, scalar_bytes(k).as_ptr(), 255);
            blst_p2_add_or_double(&mut acc, &acc, &t);
        }
    }
    assert!(eq2(&cpu_msm_g2(&b2, &s, None), &acc));
}

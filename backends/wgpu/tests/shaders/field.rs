//! The field code alone (shaders/ff): `{f}_sqr` and `{f}_mul` of Fq and Fr
//! on a device of its own, against blst.

use blst::{blst_fp, blst_fr};
use crossgroth_gpu_host::reference::*;
use rand::RngCore;

use crate::devices::{require, settings, wanted};

/// A device of its own for the field-op kernels (the backend keeps its
/// device private): the adapter the backend would pick
/// (CROSSGROTH_WGPU_ADAPTER, else a discrete GPU first), with SHADER_INT64
/// where the adapter has it. None: no adapter.
fn field_device() -> Option<(wgpu::Device, wgpu::Queue, bool, String)> {
    let a = crate::common::preferred_adapter(settings().adapter.as_deref())?;
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
            Field::Fq => {
                let k = fq_inverse(&fq_from_u64(1u64 << (bits - 384)));
                words_of_limbs(&fq_mul(&fq_mul(&fq_raw(x), &fq_raw(y)), &k).l)
            }
            Field::Fr => {
                let k = fr_inv(&fr_from_u64(1u64 << (bits - 256)));
                words_of_limbs(&fr_mul(&fr_mul(&fr_raw(x), &fr_raw(y)), &k).l)
            }
        }
    }
    /// x - y mod p (the same on raw integers as on any Montgomery form).
    fn sub(self, x: &[u32], y: &[u32]) -> Vec<u32> {
        match self {
            Field::Fq => words_of_limbs(&fq_sub(&fq_raw(x), &fq_raw(y)).l),
            Field::Fr => words_of_limbs(&fr_sub(&fr_raw(x), &fr_raw(y)).l),
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
            Field::Fq => words_of_limbs(&fq_from_u64(1u64 << (bits - 384)).l),
            Field::Fr => words_of_limbs(&fr_from_u64(1u64 << (bits - 256)).l),
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
    /// Uniform below p: the Montgomery form of a uniform element.
    fn random(self, r: &mut impl RngCore) -> Vec<u32> {
        match self {
            Field::Fq => words_of_limbs(&fq_random(r).l),
            Field::Fr => words_of_limbs(&fr_random(r).l),
        }
    }
}

fn fq_raw(w: &[u32]) -> blst_fp {
    blst_fp {
        l: limbs_of_words(w).try_into().unwrap(),
    }
}

fn fr_raw(w: &[u32]) -> blst_fr {
    blst_fr {
        l: limbs_of_words(w).try_into().unwrap(),
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
    let mut r = rng("field_sqr_mul_match_blst");
    const FQ_SRC: [&str; 2] = [
        include_str!("../../../../shaders/ff/fq.wgsl"),
        include_str!("../../../../shaders/ff/fq64.wgsl"),
    ];
    const FR_SRC: [&str; 2] = [
        include_str!("../../../../shaders/ff/fr.wgsl"),
        include_str!("../../../../shaders/ff/fr64.wgsl"),
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

//! Fixed-base products (`WgpuDevice::fixed_base_mul`, the Groth16 setup's
//! bulk) against blst's scalar multiplication, for G1 and G2 on every field
//! path: a table built on the host as the generator builds it, edge and
//! random scalars, at the adapter's binding limit and at one so low that the
//! scalars and the table both go through in several pieces; bad inputs are
//! errors, not panics.

use blst::blst_fr;
use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::{Options, WgpuDevice, WgpuError, FIXED_BASE_TABLE_LEN, G1, G2};

use crate::devices::{all_backends, backends, on_each_backend, options, path, settings};

/// The lowered limit: 21 G1 products (XYZZ, 192 bytes) or 10 G2 products a
/// chunk of scalars, and the table in pieces of 42 G1 or 21 G2 points.
const LIMIT: u64 = 4096;

/// Scalars a case: 0, 1, r - 1, small, r - small and random ones in turn.
const N: usize = 300;

/// G's window table as the host's generator builds it: entry w·256 + b is
/// b·2^(8w)·G, one batched conversion to affine (b = 0 the identity).
fn table<C: RefCurve>(g: &C::Point) -> Vec<C::Affine> {
    let mut proj = Vec::with_capacity(FIXED_BASE_TABLE_LEN);
    let mut window = *g;
    for _ in 0..32 {
        let mut acc = C::Point::default();
        for _ in 0..256 {
            proj.push(acc);
            acc = C::add(&acc, &window);
        }
        for _ in 0..8 {
            window = C::add(&window, &window);
        }
    }
    C::to_affines(&proj)
}

/// blst's affine points as their bytes, for comparisons bit for bit.
fn bytes<C: RefCurve>(points: &[C::Affine]) -> &[u8] {
    // SAFETY: C::Affine is blst's repr(C) affine type of AFFINE_BYTES bytes
    // (crossgroth-gpu-host's G1 and G2), without padding.
    unsafe {
        std::slice::from_raw_parts(points.as_ptr().cast::<u8>(), std::mem::size_of_val(points))
    }
}

/// `b`'s products of `s` by the table of `g` against blst's k·G.
fn check<C: RefCurve>(b: &WgpuDevice, g: &C::Point, t: &[C::Affine], s: &[blst_fr], what: &str) {
    let want = C::to_affines(&s.iter().map(|k| C::mult(g, k)).collect::<Vec<_>>());
    let mut got = vec![C::Affine::default(); s.len()];
    let start = std::time::Instant::now();
    b.fixed_base_mul::<C>(t, s, &mut got)
        .unwrap_or_else(|e| panic!("{} fixed-base {what}: {e}", C::NAME));
    let took = start.elapsed();
    if let Some(i) =
        (0..s.len()).find(|&i| bytes::<C>(&got[i..i + 1]) != bytes::<C>(&want[i..i + 1]))
    {
        panic!(
            "{} fixed-base {what} [{} path, limit {}]: product {i} of {} differs from blst \
             (got {:02x?}.., want {:02x?}..)",
            C::NAME,
            path(b),
            b.max_binding_bytes(),
            s.len(),
            &bytes::<C>(&got[i..i + 1])[..8],
            &bytes::<C>(&want[i..i + 1])[..8]
        );
    }
    eprintln!(
        "{} fixed-base {what}: {} products ok in {took:.2?} (limit {} bytes)",
        C::NAME,
        s.len(),
        b.max_binding_bytes()
    );
}

/// A backend on `b`'s field paths with `limit` bytes a binding.
fn limited(b: &WgpuDevice, limit: u64) -> WgpuDevice {
    WgpuDevice::with_options(Options {
        allow_int64: b.uses_int64(),
        g2_int64: b.uses_int64_for_g2(),
        max_binding_bytes: Some(limit),
        ..options()
    })
    .unwrap_or_else(|e| panic!("a backend with a {limit}-byte binding limit: {e}"))
}

/// The cases of one group on `b` and on its twin with the lowered limit.
fn cases<C: RefCurve>(b: &WgpuDevice, tag: &str) {
    let mut r = rng(tag);
    let g = C::mult(&C::generator(), &fr_random(&mut r));
    let t = table::<C>(&g);
    let s = mixed_scalars(&mut r, N);
    check::<C>(b, &g, &t, &s, "mixed scalars");
    let l = limited(b, LIMIT);
    assert_eq!(l.max_binding_bytes(), LIMIT);
    check::<C>(&l, &g, &t, &s, "mixed scalars, in chunks");
}

#[test]
fn fixed_base_g1_matches_blst() {
    on_each_backend("fixed_base_g1_matches_blst", |b| {
        cases::<G1>(b, "fixed_base_g1_matches_blst");
        // the identity's table holds only identities: every product is one
        let mut r = rng("fixed_base_g1_identity");
        let o = <G1 as crossgroth_wgpu::Curve>::Point::default();
        check::<G1>(
            b,
            &o,
            &table::<G1>(&o),
            &mixed_scalars(&mut r, 12),
            "of the identity",
        );
    });
}

#[test]
fn fixed_base_g2_matches_blst() {
    on_each_backend("fixed_base_g2_matches_blst", |b| {
        cases::<G2>(b, "fixed_base_g2_matches_blst")
    });
    // G2 on the SHADER_INT64 code, where the adapter has it
    if let Some(b) = &all_backends().g2_int64 {
        eprintln!("--- fixed_base_g2_matches_blst with G2 on the int64 path");
        cases::<G2>(b, "fixed_base_g2_matches_blst (G2 on int64)");
    }
}

/// A table of the wrong length, scalars and outputs of different lengths and
/// a limit below one product are errors naming the numbers; no scalars is
/// nothing to do.
#[test]
fn fixed_base_bad_inputs_are_errors() {
    settings();
    let Some(b) = backends().first() else { return };
    let mut r = rng("fixed_base_bad_inputs_are_errors");
    let g = <G1 as RefCurve>::generator();
    let t = table::<G1>(&g);
    let s = random_scalars(&mut r, 4);
    let mut out = vec![<G1 as crossgroth_wgpu::Curve>::Affine::default(); 4];
    match b.fixed_base_mul::<G1>(&t[..100], &s, &mut out) {
        Err(WgpuError::InvalidInput(m)) => {
            assert!(m.contains("100") && m.contains("8192"), "{m}");
            eprintln!("{m}");
        }
        other => panic!("a table of 100 points: {other:?}"),
    }
    match b.fixed_base_mul::<G1>(&t, &s[..3], &mut out) {
        Err(WgpuError::InvalidInput(m)) => {
            assert!(m.contains('3') && m.contains('4'), "{m}");
            eprintln!("{m}");
        }
        other => panic!("3 scalars for 4 products: {other:?}"),
    }
    b.fixed_base_mul::<G1>(&t, &[], &mut []).unwrap();
    let tiny = limited(b, 128);
    match tiny.fixed_base_mul::<G1>(&t, &s, &mut out) {
        Err(WgpuError::OutOfMemory(m)) => {
            assert!(m.contains("192 bytes") && m.contains("128 bytes"), "{m}");
            eprintln!("{m}");
        }
        other => panic!("G1 products over a 128-byte limit: {other:?}"),
    }
}

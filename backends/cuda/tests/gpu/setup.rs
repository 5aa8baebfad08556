//! Fixed-base multiplication for parameter generation
//! (CudaDevice::fixed_base_mul) against blst's scalar multiplication.

use crossgroth_cuda::{Curve, FIXED_BASE_TABLE_LEN, G1, G2};
use crossgroth_gpu_host::reference::*;

/// The window table of G: entry w·256 + b is b·2^(8w)·G.
fn table<C: RefCurve>(g: &C::Point) -> Vec<C::Affine> {
    let mut points = Vec::with_capacity(FIXED_BASE_TABLE_LEN);
    let mut window_base = *g;
    for _ in 0..32 {
        let mut acc = C::mult(&window_base, &fr_zero());
        for _ in 0..256 {
            points.push(acc);
            acc = C::add(&acc, &window_base);
        }
        window_base = acc; // 256·2^(8w)·G
    }
    C::to_affines(&points)
}

fn bytes<T>(v: &[T]) -> &[u8] {
    // SAFETY: blst's affine points are plain arrays of limbs.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn check<C: RefCurve>(name: &str) {
    let gpu = gpu_or_skip!();
    let mut rng = rng(name);
    let g = C::mult(&C::generator(), &fr_random(&mut rng));
    let t = table::<C>(&g);
    for n in [0usize, 1, 7, 1000, 5003] {
        for (what, scalars) in [
            ("mixed", mixed_scalars(&mut rng, n)),
            ("edges", edge_scalars(&mut rng, n, 5)),
        ] {
            let want = C::to_affines(&scalars.iter().map(|s| C::mult(&g, s)).collect::<Vec<_>>());
            let mut got = vec![<C as Curve>::Affine::default(); n];
            gpu.fixed_base_mul::<C>(&t, &scalars, &mut got)
                .expect("fixed-base multiplication");
            assert!(
                bytes(&got) == bytes(&want),
                "{} fixed-base products differ from blst's ({what}, n = {n})",
                C::NAME
            );
        }
    }
    // wrong table and length mismatches are refused, not read past
    let mut out = vec![<C as Curve>::Affine::default(); 2];
    assert!(gpu
        .fixed_base_mul::<C>(&t[..100], &random_scalars(&mut rng, 2), &mut out)
        .is_err());
    assert!(gpu
        .fixed_base_mul::<C>(&t, &random_scalars(&mut rng, 3), &mut out)
        .is_err());
    eprintln!("ok {} fixed-base products", C::NAME);
}

#[test]
fn fixed_base_products_match_blst_g1() {
    check::<G1>("fixed_base_products_match_blst_g1");
}

#[test]
fn fixed_base_products_match_blst_g2() {
    check::<G2>("fixed_base_products_match_blst_g2");
}

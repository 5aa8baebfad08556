//! Inputs larger than the storage binding limit (`Options::max_binding_bytes`
//! lowered to a few KiB, so that small inputs take the chunked paths): G1 and
//! G2 MSMs over bases in several chunks, NTTs and H over vectors in several
//! chunks, against the backend without a limit (the same field path) and
//! against blst; limits too small for one point or element are errors.

use std::sync::OnceLock;

use blst::blst_fr;
use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::{Options, WgpuDevice, WgpuError, G1, G2};

use crate::devices::{backends, options, path, settings};

/// The lowered limit: 42 G1 points (42.7 fit), 21 G2 points, 2^7 Fr elements
/// (exactly) a buffer.
const LIMIT: u64 = 4096;

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

/// The first backend under test beside its twin with the lowered limit,
/// built once. One field path is enough: the chunking is host code, the same
/// on every path, and the other modules test the kernels on each path (a
/// chunked MSM makes a pass a chunk, slow on lavapipe).
fn pairs() -> &'static [(&'static WgpuDevice, WgpuDevice)] {
    static P: OnceLock<Vec<(&'static WgpuDevice, WgpuDevice)>> = OnceLock::new();
    P.get_or_init(|| {
        backends()
            .iter()
            .take(1)
            .map(|b| (b, limited(b, LIMIT)))
            .collect()
    })
}

fn on_each_pair(test: &str, check: impl Fn(&WgpuDevice, &WgpuDevice)) {
    for (b, l) in pairs() {
        eprintln!(
            "--- {test} on the {} path (G2 on {}), limit {} bytes",
            path(b),
            if b.uses_int64_for_g2() {
                "int64"
            } else {
                "portable"
            },
            l.max_binding_bytes()
        );
        assert_eq!(l.max_binding_bytes(), LIMIT);
        check(b, l);
    }
}

/// The MSM of `s` (density `d`) from base `first` on both backends and blst.
fn check_msm<C: RefCurve>(
    (b, l): (&WgpuDevice, &WgpuDevice),
    bases: &[C::Affine],
    first: usize,
    s: &[blst_fr],
    d: Option<&[u64]>,
    what: &str,
) {
    let t0 = std::time::Instant::now();
    let want = msm::<C>(&bases[first..], s, d);
    let t1 = std::time::Instant::now();
    let whole = b.msm(&b.upload::<C>(bases).unwrap(), first, s, d).unwrap();
    let t2 = std::time::Instant::now();
    let chunked = l.msm(&l.upload::<C>(bases).unwrap(), first, s, d).unwrap();
    eprintln!(
        "TIMES {what} ref {:?} whole {:?} chunked {:?} compile {:?}",
        t1 - t0,
        t2 - t1,
        t2.elapsed(),
        l.compile_time()
    );
    assert!(
        C::eq(&whole, &want),
        "{} MSM {what}: one buffer differs from blst",
        C::NAME
    );
    assert!(
        C::eq(&chunked, &want),
        "{} MSM {what}: in chunks differs from blst",
        C::NAME
    );
    eprintln!(
        "{} MSM {what}: ok ({} bases, {} chunks)",
        C::NAME,
        bases.len(),
        bases
            .len()
            .div_ceil((LIMIT / C::AFFINE_BYTES as u64) as usize)
    );
}

/// A random density over `nv` variables (each in with probability 1/2)
/// that includes at most `cap` of them.
fn capped_density(r: &mut impl rand::Rng, nv: usize, cap: usize) -> Vec<u64> {
    let mut d = vec![0u64; nv.div_ceil(64)];
    let mut count = 0;
    for i in 0..nv {
        if count < cap && r.gen_bool(0.5) {
            d[i / 64] |= 1 << (i % 64);
            count += 1;
        }
    }
    d
}

/// The cases of one group over `n` bases (several chunks; `all`: every case,
/// else those whose chunk sizes depend on the group). A chunk costs a pass of
/// ~8 dispatches a window (lavapipe: ~0.1 s G1, ~0.2 s G2), so the cases are
/// few and small.
fn msm_cases<C: RefCurve>(pair: (&WgpuDevice, &WgpuDevice), tag: &str, n: usize, all: bool) {
    let mut r = rng(tag);
    let per = (LIMIT / C::AFFINE_BYTES as u64) as usize;
    // exactly one chunk, and one point more
    let sizes: &[usize] = if all { &[per, per + 1] } else { &[per] };
    for &m in sizes {
        let bases = random_bases::<C>(&mut r, m);
        check_msm::<C>(pair, &bases, 0, &random_scalars(&mut r, m), None, "random");
    }
    // identities and repeated bases; zeros, ones, r - 1 and others
    let bases = bases_with_edges::<C>(&mut r, n);
    if all {
        let s = edge_scalars(&mut r, n, 7);
        check_msm::<C>(pair, &bases, 0, &s, None, "edge scalars and bases");
    }
    let ones: Vec<blst_fr> = (0..n).map(|i| fr_from_u64((i % 3 == 0) as u64)).collect();
    check_msm::<C>(pair, &bases, 0, &ones, None, "zeros and ones only");
    // from a base past the first chunk, through a density whose ranks cross
    // the next chunk boundary
    let first = per + 5;
    let nv = 2 * (n - first);
    let d = capped_density(&mut r, nv, n - first);
    let s = edge_scalars(&mut r, nv, 7);
    check_msm::<C>(
        pair,
        &bases,
        first,
        &s,
        Some(&d),
        "from a later base, density",
    );
    if all {
        let empty = vec![0u64; nv.div_ceil(64)];
        check_msm::<C>(pair, &bases, 0, &s, Some(&empty), "empty density");
        // a dense vector (its ranks counted by the kernels, not listed) from a
        // later base: in the first chunk, and past it
        for first in [5, per + 3] {
            let s = random_scalars(&mut r, n - first);
            check_msm::<C>(pair, &bases, first, &s, None, "dense, from a later base");
        }
    }
}

#[test]
fn chunked_msm_g1_matches() {
    on_each_pair("chunked_msm_g1_matches", |b, l| {
        msm_cases::<G1>((b, l), "chunked_msm_g1_matches", 128, true)
    });
}

#[test]
fn chunked_msm_g2_matches() {
    on_each_pair("chunked_msm_g2_matches", |b, l| {
        msm_cases::<G2>((b, l), "chunked_msm_g2_matches", 64, false)
    });
}

#[test]
fn chunked_ntt_matches() {
    on_each_pair("chunked_ntt_matches", |b, l| {
        let mut r = rng("chunked_ntt_matches");
        // 2^7 fills one buffer exactly; 2^8.. take 2, 8 and 16 chunks
        for log_n in [7u32, 8, 10, 11] {
            let n = 1usize << log_n;
            let x = if log_n % 2 == 0 {
                edge_scalars(&mut r, n, 7)
            } else {
                random_scalars(&mut r, n)
            };
            for inverse in [false, true] {
                let mut want = x.clone();
                ntt(&mut want, log_n, inverse);
                let mut whole = x.clone();
                b.ntt(&mut whole, log_n, inverse).unwrap();
                let mut chunked = x.clone();
                l.ntt(&mut chunked, log_n, inverse).unwrap();
                assert!(fr_slices_eq(&whole, &want), "ntt 2^{log_n} one buffer");
                assert!(
                    fr_slices_eq(&chunked, &want),
                    "ntt 2^{log_n} inverse={inverse} in chunks differs"
                );
            }
            let mut y = x.clone();
            l.ntt(&mut y, log_n, false).unwrap();
            l.ntt(&mut y, log_n, true).unwrap();
            assert!(fr_slices_eq(&y, &x), "ntt round trip 2^{log_n} in chunks");
            eprintln!("ntt 2^{log_n} in chunks: ok");
        }
    });
}

#[test]
fn chunked_compute_h_matches() {
    on_each_pair("chunked_compute_h_matches", |b, l| {
        let mut r = rng("chunked_compute_h_matches");
        for (log_m, na, nb, nc) in [
            (7u32, 125usize, 125usize, 125usize),
            (8, 253, 100, 0),
            (10, 1021, 1021, 1021),
        ] {
            let a = edge_scalars(&mut r, na, 7);
            let bb = edge_scalars(&mut r, nb, 7);
            let c = edge_scalars(&mut r, nc, 7);
            // and a satisfied-looking witness: c = a * b
            let c2: Vec<blst_fr> = a.iter().zip(&bb).map(|(x, y)| fr_mul(x, y)).collect();
            for cc in [&c, &c2] {
                let want = compute_h(&a, &bb, cc, log_m);
                let whole = b.compute_h(&a, &bb, cc, log_m).unwrap();
                let chunked = l.compute_h(&a, &bb, cc, log_m).unwrap();
                assert!(
                    fr_slices_eq(&whole, &want),
                    "compute_h 2^{log_m} one buffer"
                );
                assert!(
                    fr_slices_eq(&chunked, &want),
                    "compute_h 2^{log_m} (a {na}, b {nb}, c {}) in chunks differs",
                    cc.len()
                );
            }
            eprintln!("compute_h 2^{log_m} in chunks: ok");
        }
    });
}

/// H kept on the device (in one buffer, or in chunks in the transposed
/// layout) and read there by the H MSM: the MSM of the coefficients blst
/// computes, from base 0 and from a later base, over bases in several chunks.
#[test]
fn msm_of_h_on_the_device_matches() {
    on_each_pair("msm_of_h_on_the_device_matches", |b, l| {
        let mut r = rng("msm_of_h_on_the_device_matches");
        // 2^7 fills one buffer of the lowered limit; 2^9 takes 4 chunks
        for (log_m, n, first) in [(7u32, 120usize, 0usize), (9, 500, 0), (9, 512, 7)] {
            let a = edge_scalars(&mut r, n, 7);
            let bb = random_scalars(&mut r, n);
            let c = random_scalars(&mut r, n);
            let h = compute_h(&a, &bb, &c, log_m);
            let bases = random_bases::<G1>(&mut r, first + h.len() + 3);
            let want = msm::<G1>(&bases[first..first + h.len()], &h, None);
            for (dev, what) in [(b, "one buffer"), (l, "chunks")] {
                let on = dev.compute_h_on_device(&a, &bb, &c, log_m).unwrap();
                let got = dev
                    .msm_h(&dev.upload::<G1>(&bases).unwrap(), first, &on)
                    .unwrap();
                assert!(
                    G1::eq(&got, &want),
                    "H MSM of 2^{log_m} from base {first}, H on the device ({what}, {on:?})"
                );
                let mut back = vec![blst_fr::default(); h.len()];
                dev.read_h(&on, &mut back).unwrap();
                assert!(fr_slices_eq(&back, &h), "H of 2^{log_m} read back ({what})");
            }
            eprintln!("H MSM of 2^{log_m} from base {first}, H on the device: ok");
        }
        // two threads at once on one device (a, b and c go up before a
        // thread takes the device): each gets its own H's MSM
        let inputs: Vec<[Vec<blst_fr>; 3]> = (0..2)
            .map(|_| [(); 3].map(|_| random_scalars(&mut r, 500)))
            .collect();
        let bases = random_bases::<G1>(&mut r, 511);
        let bases_dev = l.upload::<G1>(&bases).unwrap();
        std::thread::scope(|sc| {
            let runs: Vec<_> = inputs
                .iter()
                .map(|v| {
                    let bases_dev = &bases_dev;
                    sc.spawn(move || {
                        let on = l.compute_h_on_device(&v[0], &v[1], &v[2], 9).unwrap();
                        l.msm_h(bases_dev, 0, &on).unwrap()
                    })
                })
                .collect();
            for (v, run) in inputs.iter().zip(runs) {
                let want = msm::<G1>(&bases, &compute_h(&v[0], &v[1], &v[2], 9), None);
                assert!(G1::eq(&run.join().unwrap(), &want), "H MSM on two threads");
            }
        });
        // the next proof's a, b and c sent ahead while the current one's H
        // MSM runs (as the engine does), in one buffer and in chunks
        for dev in [b, l] {
            let bases_dev = dev.upload::<G1>(&bases).unwrap();
            let (first, staged) = std::thread::scope(|sc| {
                let v = &inputs[1];
                let ahead = sc.spawn(move || dev.stage_abc(&v[0], &v[1], &v[2], 9).unwrap());
                let v = &inputs[0];
                let on = dev.compute_h_on_device(&v[0], &v[1], &v[2], 9).unwrap();
                (
                    dev.msm_h(&bases_dev, 0, &on).unwrap(),
                    ahead.join().unwrap(),
                )
            });
            let second = dev
                .msm_h(&bases_dev, 0, &dev.compute_h_staged(staged).unwrap())
                .unwrap();
            for (v, got) in inputs.iter().zip([first, second]) {
                let want = msm::<G1>(&bases, &compute_h(&v[0], &v[1], &v[2], 9), None);
                assert!(G1::eq(&got, &want), "H MSM of a, b, c sent ahead");
            }
        }
        // a, b and c staged on one backend are refused by another
        let v = &inputs[0];
        let staged = b.stage_abc(&v[0], &v[1], &v[2], 9).unwrap();
        assert!(matches!(
            l.compute_h_staged(staged),
            Err(WgpuError::InvalidInput(_))
        ));
        // more coefficients than bases is an error, not a panic
        let on = l
            .compute_h_on_device(&[fr_from_u64(1)], &[fr_from_u64(2)], &[], 3)
            .unwrap();
        let few = l.upload::<G1>(&random_bases::<G1>(&mut r, 6)).unwrap();
        assert!(matches!(
            l.msm_h(&few, 0, &on),
            Err(WgpuError::InvalidInput(_))
        ));
    });
}

/// Limits too small for one point, one element or a window's buckets are
/// one-line errors naming the bytes needed, not panics.
#[test]
fn limits_below_one_item_are_errors() {
    settings();
    let Some(b) = backends().first() else { return };
    let tiny = limited(b, 40);
    assert_eq!(tiny.max_binding_bytes(), 32);
    let mut r = rng("limits_below_one_item_are_errors");
    let g1 = random_bases::<G1>(&mut r, 4);
    match tiny.upload::<G1>(&g1) {
        Err(WgpuError::OutOfMemory(m)) => {
            assert!(m.contains("96 bytes") && m.contains("32 bytes"), "{m}");
            eprintln!("{m}");
        }
        other => panic!("G1 bases over a 32-byte limit: {:?}", other.map(|_| ())),
    }
    // one Fr element fits 32 bytes: the NTT runs in chunks of one element
    let x = random_scalars(&mut r, 8);
    let mut got = x.clone();
    tiny.ntt(&mut got, 3, false).unwrap();
    let mut want = x.clone();
    ntt(&mut want, 3, false);
    assert!(
        fr_slices_eq(&got, &want),
        "ntt 2^3 in chunks of one element"
    );
    let tinier = limited(b, 16);
    let mut v = vec![fr_from_u64(3); 4];
    match tinier.ntt(&mut v, 2, false) {
        Err(WgpuError::OutOfMemory(m)) => {
            assert!(m.contains("32 bytes") && m.contains("16 bytes"), "{m}");
            eprintln!("{m}");
        }
        other => panic!("ntt over a 16-byte limit: {other:?}"),
    }
    assert!(matches!(
        tinier.compute_h(&v, &v, &v, 2),
        Err(WgpuError::OutOfMemory(_))
    ));
    // G2 points fit 1 KiB, but not the 8 buckets of a window
    let small = limited(b, 1024);
    let g2 = random_bases::<G2>(&mut r, 12);
    let dev = small.upload::<G2>(&g2).unwrap();
    match small.msm(&dev, 0, &random_scalars(&mut r, 12), None) {
        Err(WgpuError::OutOfMemory(m)) => {
            assert!(m.contains("3072 bytes") && m.contains("1024 bytes"), "{m}");
            eprintln!("{m}");
        }
        other => panic!("G2 MSM over a 1 KiB limit: {:?}", other.map(|_| ())),
    }
    // no limit is the adapter's
    let none = limited(b, u64::MAX);
    assert_eq!(none.max_binding_bytes(), b.max_binding_bytes());
}

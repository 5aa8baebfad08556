//! NTTs and H against the host's, on every field path.

use blst::blst_fr;
use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::WgpuDevice;

use crate::devices::{max_log, on_each_backend};

#[test]
fn ntt_matches_cpu() {
    on_each_backend("ntt_matches_cpu", ntt_matches_cpu_on);
}

fn ntt_matches_cpu_on(b: &WgpuDevice) {
    let mut r = rng("ntt_matches_cpu");
    let mut logs: Vec<u32> = vec![1, 2, 3, 4, 5, 7, 10];
    logs.push(max_log());
    for log_n in logs {
        let n = 1usize << log_n;
        let x: Vec<blst_fr> = if log_n % 2 == 0 {
            edge_scalars(&mut r, n, 7)
        } else {
            random_scalars(&mut r, n)
        };
        for inverse in [false, true] {
            let mut want = x.clone();
            ntt(&mut want, log_n, inverse);
            let mut got = x.clone();
            let ((), t) = b.time(|b| b.ntt(&mut got, log_n, inverse)).unwrap();
            assert!(
                fr_slices_eq(&got, &want),
                "ntt 2^{log_n} inverse={inverse} differs from the CPU"
            );
            eprintln!("ntt 2^{log_n} inverse={inverse}: ok (gpu {t:.2?})");
        }
        // round trip
        let mut y = x.clone();
        b.ntt(&mut y, log_n, false).unwrap();
        b.ntt(&mut y, log_n, true).unwrap();
        assert!(fr_slices_eq(&y, &x), "ntt round trip 2^{log_n}");
    }
}

#[test]
fn compute_h_matches_cpu() {
    on_each_backend("compute_h_matches_cpu", compute_h_matches_cpu_on);
}

fn compute_h_matches_cpu_on(b: &WgpuDevice) {
    let mut r = rng("compute_h_matches_cpu");
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
        let mk = |r: &mut rand::rngs::StdRng| -> Vec<blst_fr> { edge_scalars(r, n, 7) };
        let (a, bb, c) = (mk(&mut r), mk(&mut r), mk(&mut r));
        // a satisfied-looking witness too: c = a*b
        let c2: Vec<blst_fr> = a.iter().zip(&bb).map(|(x, y)| fr_mul(x, y)).collect();
        for cc in [&c, &c2] {
            let want = compute_h(&a, &bb, cc, log_m);
            let (got, t) = b.time(|b| b.compute_h(&a, &bb, cc, log_m)).unwrap();
            assert_eq!(got.len(), want.len());
            assert!(
                fr_slices_eq(&got, &want),
                "compute_h 2^{log_m} (n = {n}) differs from the CPU"
            );
            eprintln!("compute_h 2^{log_m} n={n}: ok (gpu {t:.2?})");
        }
    }
    // shorter b and c than a
    let a = random_scalars(&mut r, 13);
    let bb = random_scalars(&mut r, 7);
    let want = compute_h(&a, &bb, &[], 4);
    let got = b.compute_h(&a, &bb, &[], 4).unwrap();
    assert!(fr_slices_eq(&got, &want));
    // In place: H over a (15 of its 16 elements), and an a too short for H
    // is refused.
    let mut in_place = a.clone();
    in_place.resize(16, fr_zero());
    b.compute_h_in_place(&mut in_place, &bb, &[], 4).unwrap();
    assert!(fr_slices_eq(&in_place[..15], &want));
    let mut short = a.clone();
    assert!(b.compute_h_in_place(&mut short, &bb, &[], 4).is_err());
}

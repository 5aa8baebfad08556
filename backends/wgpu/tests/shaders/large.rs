//! Large sizes with timings, for a real GPU (ignored by default).

use std::time::Instant;

use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::{G1, G2};

use crate::devices::{backends, bench_log, path};

/// Large sizes with timings (GPU time from timestamp queries, then wall
/// time), each result checked against blst. For a real GPU:
/// `--ignored large_sizes_timed`, size 2^CROSSGROTH_WGPU_BENCH_LOG (20).
#[test]
#[ignore]
fn large_sizes_timed() {
    let log = bench_log();
    let n = 1usize << log;
    let mut r = rng("large_sizes_timed");
    let t = Instant::now();
    let b1 = random_bases::<G1>(&mut r, n);
    let n2 = n / 4;
    let b2 = random_bases::<G2>(&mut r, n2);
    let uni = random_scalars(&mut r, n);
    // Groth16-like: 45% zero, 45% one, 10% small or random.
    let g16 = groth16_scalars(&mut r, n);
    let want_uni = msm::<G1>(&b1, &uni, None);
    let want_g16 = msm::<G1>(&b1, &g16, None);
    let want_g2 = msm::<G2>(&b2, &uni[..n2], None);
    let mut ntt_want = uni.clone();
    ntt(&mut ntt_want, log, false);
    let hn = n - n / 3;
    let h_want = compute_h(&uni[..hn], &g16[..hn], &uni[n - hn..], log);
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
                point_eq::<G1>(&got, &want_uni),
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
            point_eq::<G1>(&got, &want_g16),
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
                point_eq::<G2>(&got, &want_g2),
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
            assert!(fr_slices_eq(&x, &ntt_want), "[{p}] NTT 2^{log} differs");
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
            assert!(fr_slices_eq(&h, &h_want), "[{p}] H 2^{log} differs");
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

//! NTTs, H and Fr transfers against the host's.

use blst::blst_fr;
use crossgroth_cuda::CudaDevice;
use crossgroth_gpu_host::reference::*;

#[test]
fn fr_transfers_round_trip() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("fr_transfers_round_trip");
    // sizes around the staging threshold (2^17 elements) and chunk size (2^18),
    // with partial chunks
    for &n in &[
        (1usize << 17) - 1,
        1 << 17,
        (1 << 18) + 3,
        (1 << 21) + 5,
        3 << 20,
    ] {
        let v = random_scalars(&mut rng, n);
        let b = gpu.upload_fr(&v).unwrap();
        let back = gpu.download_fr(&b).unwrap();
        assert!(
            fr_slices_eq(&back, &v),
            "upload/download round trip failed at n = {n}"
        );
        eprintln!("ok Fr round trip n = {n}");
    }
    // ntt() (transfers) against ntt_resident (explicit upload/download) at 2^21
    let v = random_scalars(&mut rng, 1 << 21);
    let mut a = v.clone();
    gpu.ntt(&mut a, 21, false).unwrap();
    let mut b = gpu.upload_fr(&v).unwrap();
    gpu.ntt_resident(&mut b, 21, false).unwrap();
    assert!(
        fr_slices_eq(&gpu.download_fr(&b).unwrap(), &a),
        "ntt() and ntt_resident differ at 2^21"
    );
    eprintln!("ok ntt vs ntt_resident 2^21");
}

/// The forward NTT against the host's, and the inverse back to the input.
fn check_ntt_round_trip(gpu: &CudaDevice, input: &[blst_fr], log_n: u32) {
    let mut want = input.to_vec();
    ntt(&mut want, log_n, false);
    let mut got = input.to_vec();
    gpu.ntt(&mut got, log_n, false).unwrap();
    assert!(
        fr_slices_eq(&got, &want),
        "forward NTT mismatch at 2^{log_n}"
    );
    gpu.ntt(&mut got, log_n, true).unwrap();
    assert!(
        fr_slices_eq(&got, input),
        "inverse NTT does not round-trip at 2^{log_n}"
    );
}

#[test]
fn ntt_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("ntt_matches_host");
    for &log_n in &[0u32, 1, 2, 3, 8, 9, 10, 11, 12, 13] {
        let n = 1usize << log_n;
        let w = omega(log_n);
        assert_eq!(fr_pow(&w, n as u64).l, fr_one().l);
        if log_n > 0 {
            assert_ne!(fr_pow(&w, (n / 2) as u64).l, fr_one().l);
        }
        let input = random_scalars(&mut rng, n);
        check_ntt_round_trip(gpu, &input, log_n);
        let mut want_i = input.clone();
        ntt(&mut want_i, log_n, true);
        let mut got_i = input.clone();
        gpu.ntt(&mut got_i, log_n, true).unwrap();
        assert!(
            fr_slices_eq(&got_i, &want_i),
            "inverse NTT mismatch at 2^{log_n}"
        );
        eprintln!("ok NTT 2^{log_n}");
    }
    // resident buffers
    let input = random_scalars(&mut rng, 1 << 12);
    let mut want = input.clone();
    ntt(&mut want, 12, false);
    let mut buf = gpu.upload_fr(&input).unwrap();
    gpu.ntt_resident(&mut buf, 12, false).unwrap();
    assert!(
        fr_slices_eq(&gpu.download_fr(&buf).unwrap(), &want),
        "resident NTT mismatch"
    );
    gpu.ntt_resident(&mut buf, 12, true).unwrap();
    assert!(
        fr_slices_eq(&gpu.download_fr(&buf).unwrap(), &input),
        "resident iNTT mismatch"
    );
    // edge values
    let mut v = vec![fr_minus_one(); 1024];
    let mut want = v.clone();
    ntt(&mut want, 10, false);
    gpu.ntt(&mut v, 10, false).unwrap();
    assert!(fr_slices_eq(&v, &want));
    let mut z = vec![fr_zero(); 512];
    gpu.ntt(&mut z, 9, false).unwrap();
    assert!(z.iter().all(|x| x.l == [0; 4]));
}

/// Sizes of two and three passes (2^11 .. 2^18 take two, 2^19 and up three).
#[test]
fn ntt_large_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("ntt_large_matches_host");
    for log_n in [16u32, 18, 19, 20, 21] {
        let input = random_scalars(&mut rng, 1 << log_n);
        check_ntt_round_trip(gpu, &input, log_n);
        eprintln!("ok NTT 2^{log_n}");
    }
}

#[test]
fn compute_h_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("compute_h_matches_host");
    for &(log_m, len) in &[
        (1u32, 2usize),
        (2, 3),
        (3, 8),
        (5, 20),
        (10, 1000),
        (12, 4096),
        (14, 16_000),
    ] {
        let a = random_scalars(&mut rng, len);
        let b = random_scalars(&mut rng, len);
        let c = random_scalars(&mut rng, len);
        let got = gpu.compute_h(&a, &b, &c, log_m).unwrap();
        let want = compute_h(&a, &b, &c, log_m);
        assert!(
            fr_slices_eq(&got, &want),
            "compute_h mismatch at 2^{log_m}, len {len}"
        );
        eprintln!("ok compute_h 2^{log_m} (len {len})");
    }
    // satisfied-witness shape: c = a * b pointwise, with 0/1 heavy inputs
    let log_m = 11;
    let len = 1500;
    let a: Vec<blst_fr> = (0..len)
        .map(|i| {
            if i % 3 == 0 {
                fr_one()
            } else {
                fr_random(&mut rng)
            }
        })
        .collect();
    let b: Vec<blst_fr> = (0..len)
        .map(|i| {
            if i % 4 == 0 {
                fr_zero()
            } else {
                fr_random(&mut rng)
            }
        })
        .collect();
    let c: Vec<blst_fr> = a.iter().zip(&b).map(|(x, y)| fr_mul(x, y)).collect();
    let got = gpu.compute_h(&a, &b, &c, log_m).unwrap();
    assert!(
        fr_slices_eq(&got, &compute_h(&a, &b, &c, log_m)),
        "compute_h mismatch (satisfied)"
    );
    // shorter inputs than each other
    let got = gpu.compute_h(&a[..10], &b[..700], &c[..0], log_m).unwrap();
    assert!(fr_slices_eq(
        &got,
        &compute_h(&a[..10], &b[..700], &c[..0], log_m)
    ));
    eprintln!("ok compute_h satisfied / ragged");
}

#[test]
fn compute_h_large_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("compute_h_large_matches_host");
    // 2^21 domain: staged upload with a partial chunk and zero padding, staged download
    let log_m = 21;
    let len = (1usize << log_m) - 1000;
    let a = random_scalars(&mut rng, len);
    let b = random_scalars(&mut rng, len);
    let c = random_scalars(&mut rng, len - 7);
    let got = gpu.compute_h(&a, &b, &c, log_m).unwrap();
    assert!(
        fr_slices_eq(&got, &compute_h(&a, &b, &c, log_m)),
        "compute_h mismatch at 2^{log_m}"
    );
    eprintln!("ok compute_h 2^{log_m} (len {len})");
}

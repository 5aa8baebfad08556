//! The device itself: probing, thread safety, bad input, timing.

use crossgroth_cuda::{Bases, CudaDevice, CudaError, CudaOptions, G1, G2};
use crossgroth_gpu_host::reference::*;

use crate::common::{check_msm, device};

#[test]
fn probe_reports_devices_or_reason() {
    let line = crossgroth_cuda::describe();
    eprintln!("crossgroth-cuda: {line}");
    match crossgroth_cuda::probe() {
        Ok(devs) => assert!(!devs.is_empty()),
        Err(e) => {
            assert!(e.is_unavailable(), "probe failed for another reason: {e}");
            assert!(e.to_string().starts_with("unavailable"));
        }
    }
    let _ = device();
}

#[test]
fn backend_and_bases_are_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CudaDevice>();
    assert_send_sync::<Bases<G1>>();
    assert_send_sync::<Bases<G2>>();
}

#[test]
fn bad_input_is_an_error() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("bad_input_is_an_error");
    let bases = random_bases::<G1>(&mut rng, 10);
    let d = gpu.upload::<G1>(&bases, 1).unwrap();
    let s = random_scalars(&mut rng, 11);
    assert!(matches!(
        gpu.msm(&d, 0, &s, None),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.msm(&d, 0, &s, Some(&[])),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.msm(&d, 0, &s, Some(&[u64::MAX])),
        Err(CudaError::InvalidInput(_))
    ));
    let mut v = vec![fr_zero(); 7];
    assert!(matches!(
        gpu.ntt(&mut v, 3, false),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.compute_h(&v, &v, &v, 2),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.compute_h(&v, &v, &v, 0),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        CudaDevice::new(99, CudaOptions::default()),
        Err(CudaError::NoDevice(_))
    ));
    // the backend still works afterwards
    check_msm::<G1>(gpu, &bases, &s[..10], "after errors");
}

#[test]
fn timing_helper_measures_device_time() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("timing_helper_measures_device_time");
    let mut v = random_scalars(&mut rng, 1 << 16);
    let ((), t) = gpu.time(|g| g.ntt(&mut v, 16, false)).unwrap();
    eprintln!("NTT 2^16 with transfers: {t:.2?} (CUDA events)");
    assert!(t.as_nanos() > 0);
}

/// The memory report (what a status poll reads) counts the memory the pool
/// keeps for reuse as free without giving it back: right after an H of 2^22
/// freed its buffers (3 × 128 MiB, kept by the pool), it says what memory()
/// says once it has trimmed the pool.
#[test]
fn memory_report_counts_what_the_pool_keeps_as_free() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("memory_report_counts_what_the_pool_keeps_as_free");
    let n = 1usize << 22;
    let v = random_scalars(&mut rng, 1 << 10);
    let big: Vec<_> = (0..n).map(|i| v[i % v.len()]).collect();
    gpu.compute_h(&big, &big, &big, 22).unwrap();
    let (reported, total) = gpu.memory_report().unwrap();
    let (free, total_trimmed) = gpu.memory().unwrap();
    eprintln!("memory report: free {reported} of {total}; after the trim: free {free}");
    assert_eq!(total, total_trimmed);
    assert!(reported <= total);
    assert!(
        reported.abs_diff(free) < 64 << 20,
        "the report says {reported} bytes free, the trimmed pool leaves {free}"
    );
}

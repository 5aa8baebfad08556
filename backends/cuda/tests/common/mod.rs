//! Setup of crossgroth-cuda's kernel tests (tests/gpu/): the device, opened
//! once with the options of the environment, skipped or failed by
//! CROSSGROTH_REQUIRE_CUDA; MSM option changes; an MSM checked against blst.

pub mod options_from_env;

use std::sync::OnceLock;
use std::time::Instant;

use blst::blst_fr;
use crossgroth_cuda::{CudaDevice, MsmOptions};
use crossgroth_gpu_host::reference::{self, RefCurve};

/// The device, opened once; None (the tests skip) where there is none,
/// unless CROSSGROTH_REQUIRE_CUDA=1 (then the first test to ask panics).
pub fn device() -> Option<&'static CudaDevice> {
    static B: OnceLock<Option<CudaDevice>> = OnceLock::new();
    B.get_or_init(|| {
        let require = std::env::var("CROSSGROTH_REQUIRE_CUDA").map(|v| v == "1").unwrap_or(false);
        let t = Instant::now();
        match CudaDevice::new(0, options_from_env::options_from_env()) {
            Ok(b) => {
                eprintln!("CUDA device: {:?}; module ({}) loaded in {:.2?}", b.info(), b.module_kind(), t.elapsed());
                Some(b)
            }
            Err(e) if e.is_unavailable() && !require => {
                // Written to the real stderr (not the test harness's capture) so
                // it shows even when the tests pass.
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "!!!!!!!! CUDA TESTS SKIPPED: {e} (set CROSSGROTH_REQUIRE_CUDA=1 to fail instead) !!!!!!!!"
                );
                None
            }
            Err(e) => panic!("CUDA backend required but not usable: {e}"),
        }
    })
    .as_ref()
}

/// The device, or return from the test (it was skipped).
macro_rules! gpu_or_skip {
    () => {
        match crate::common::device() {
            Some(b) => b,
            None => {
                eprintln!("SKIPPED (no CUDA device)");
                return;
            }
        }
    };
}

/// Runs `body` with the backend's MSM options changed by `change`, then puts
/// them back.
pub fn with_msm_options<R>(
    gpu: &CudaDevice,
    change: impl FnOnce(&mut MsmOptions),
    body: impl FnOnce() -> R,
) -> R {
    let before = gpu.options().msm;
    let mut changed = before.clone();
    change(&mut changed);
    gpu.set_msm_options(changed);
    let r = body();
    gpu.set_msm_options(before);
    r
}

/// The MSM of `scalars` over `bases` (resident, no copies) against blst's.
pub fn check_msm<C: RefCurve>(
    gpu: &CudaDevice,
    bases: &[C::Affine],
    scalars: &[blst_fr],
    what: &str,
) {
    let d = gpu.upload::<C>(bases, 1).expect("upload");
    let t = Instant::now();
    let got = gpu.msm(&d, 0, scalars, None).expect("msm");
    let gpu_t = t.elapsed();
    let want = reference::msm::<C>(bases, scalars, None);
    assert!(
        C::eq(&got, &want),
        "{} MSM mismatch: {what} (n = {})",
        C::NAME,
        scalars.len()
    );
    eprintln!("ok {} {what}: n = {} ({gpu_t:.2?})", C::NAME, scalars.len());
}

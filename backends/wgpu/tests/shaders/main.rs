//! The wgpu backend against blst on the host (the expected results:
//! crossgroth_gpu_host::reference), one module per operation: NTT, H, G1 and
//! G2 MSM on fresh random inputs and edge cases, the field code's
//! multiplication and squaring on their own, and the pipeline cache on disk.
//!
//! Without an adapter every test prints that it was skipped and passes,
//! unless CROSSGROTH_REQUIRE_WGPU=1 (then it fails). Sizes go up to
//! 2^CROSSGROTH_WGPU_TEST_LOG (default 12; raise it on a real GPU).
//! CROSSGROTH_WGPU_ADAPTER picks the adapter by name substring. Seeds are
//! printed; CROSSGROTH_TEST_SEED replays one.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/devices.rs"]
mod devices;

mod cache;
mod chunked;
mod device;
mod field;
mod large;
mod matrices;
mod msm;
mod ntt;
mod setup;

//! GPU tests of crossgroth-cuda against blst on the host (the expected
//! results: crossgroth_gpu_host::reference), one module per operation.
//!
//! Without a CUDA device every test prints that it was SKIPPED and passes,
//! unless CROSSGROTH_REQUIRE_CUDA=1, in which case a missing device fails.
//! Inputs are fresh random values each run; the seed is printed
//! (CROSSGROTH_TEST_SEED replays one).

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod device;
mod field;
mod msm;
mod ntt;
mod setup;
mod tables;
mod witness;

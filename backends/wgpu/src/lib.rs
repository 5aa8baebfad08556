//! crossgroth's WGSL/wgpu backend: BLS12-381 multi-scalar multiplication (G1,
//! G2), Fr NTTs and the Groth16 H polynomial on any Vulkan / Metal / DX12
//! adapter (software Vulkan such as Mesa's lavapipe included).
//!
//! The vocabulary is blst's `repr(C)` types and plain slices; nothing here
//! knows Groth16. The MSM and its bases are written once, generic over the
//! group ([`G1`], [`G2`]): [`WgpuDevice::upload`], then [`WgpuDevice::msm`];
//! a Groth16 setup's fixed-base products are [`WgpuDevice::fixed_base_mul`];
//! a proof's a, b and c can be computed on the device from its witness and
//! the circuit's resident constraint matrices ([`WgpuDevice::upload_matrices`],
//! [`WgpuDevice::abc_from_witness`]).
//! The crate reads no environment variables: [`Options`] carries every
//! choice. Every entry point returns [`WgpuError`] and never panics; on a
//! machine without an adapter [`WgpuDevice::new`] returns
//! `WgpuError::Unavailable`. The WGSL lives in `shaders/` (ff/, ec/, msm/,
//! ntt/, setup/), is embedded with `include_str!`, and is compiled once per
//! backend, each pipeline on first use (or all at once with
//! [`WgpuDevice::warm_up`]);
//! `Options::pipeline_cache_dir` keeps the compiled pipelines on disk for
//! the next process, where the adapter allows it.
//!
//! Field arithmetic has two paths, chosen at run time: portable u32 code with
//! 13-bit limbs in the products (30 for Fq, 20 for Fr, Montgomery radix 2^390 /
//! 2^260) and values kept two limbs to a u32 in between, and, where the adapter
//! offers SHADER_INT64, 29-bit limbs summed in u64 accumulators. Values are
//! converted from and to blst's radix on the device at the boundary.

mod device;
mod error;
mod gpu;
mod host;
mod matrices;
mod memory;
mod msm;
mod msm_fold;
mod msm_passes;
mod msm_plan;
mod ntt;
mod ntt_chunks;
mod pipeline_cache;
mod setup;
mod shaders;
mod staging;
mod submission;
mod timing;

pub use crossgroth_gpu_host::{Curve, HostBases, G1, G2};
pub use device::{Bases, Options, WgpuDevice};
pub use error::WgpuError;
pub use gpu::{AdapterChoice, AdapterInfo};
pub use matrices::{CsrMatrix, WgpuMatrices, AUX_COLUMN};
pub use msm_plan::SplitAhead;
pub use ntt::{DeviceH, StagedAbc};
pub use setup::FIXED_BASE_TABLE_LEN;

/// Lists the usable adapters, or says why there are none.
pub fn probe() -> Result<Vec<AdapterInfo>, WgpuError> {
    gpu::probe()
}

/// A one-line description for a CLI's backend list: the adapter
/// [`WgpuDevice::new`] would pick, or "unavailable: <reason>".
pub fn describe() -> String {
    match WgpuDevice::new() {
        Ok(b) => b.info(),
        Err(e) => format!("unavailable: {e}"),
    }
}

/// Kept for the engine's earlier stub: the reason wgpu is unusable here, if
/// it is ("" when an adapter exists).
pub fn unavailable_reason() -> String {
    match probe() {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

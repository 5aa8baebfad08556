//! Adapters from the GPU backend crates to the [`Backend`](super::Backend) trait.
//! The crates speak blst's repr(C) types; blstrs' types are `repr(transparent)` over
//! them, so slices are reinterpreted, never copied.

pub(crate) mod cuda;

pub use cuda::CudaBackend;

use std::sync::Arc;

use super::{Backend, G1Bases, G2Bases, MsmInput};
use crate::error::{Error, Result};
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

/// Not yet provided: `open` always reports why.
pub struct WgpuBackend(());

const WGPU_MISSING: &str = "this build has no WGSL shaders yet (crossgroth-wgpu is a shell)";

fn wgpu_missing() -> Error {
    Error::BackendUnavailable {
        backend: "wgpu",
        reason: WGPU_MISSING.to_string(),
    }
}

impl WgpuBackend {
    pub fn open() -> Result<Self> {
        Err(wgpu_missing())
    }
}

impl Backend for WgpuBackend {
    fn name(&self) -> &'static str {
        "wgpu"
    }
    fn device(&self) -> String {
        String::new()
    }
    fn prepare_g1(&self, _: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        Err(wgpu_missing())
    }
    fn prepare_g2(&self, _: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
        Err(wgpu_missing())
    }
    fn ntt(&self, _: &mut [Scalar], _: bool) -> Result<()> {
        Err(wgpu_missing())
    }
    fn compute_h(
        &self,
        _: &mut Vec<Scalar>,
        _: &mut Vec<Scalar>,
        _: &mut Vec<Scalar>,
    ) -> Result<()> {
        Err(wgpu_missing())
    }
    fn msm_g1(&self, _: &G1Bases, _: &[MsmInput<'_>]) -> Result<Vec<G1Projective>> {
        Err(wgpu_missing())
    }
    fn msm_g2(&self, _: &G2Bases, _: &[MsmInput<'_>]) -> Result<Vec<G2Projective>> {
        Err(wgpu_missing())
    }
}

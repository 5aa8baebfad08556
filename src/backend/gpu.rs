//! Adapters from the GPU backend crates to the [`Backend`](super::Backend) trait.
//! Until a crate provides its kernels, opening it reports the backend unavailable.

use std::sync::Arc;

use super::{Backend, G1Bases, G2Bases, MsmInput};
use crate::error::{Error, Result};
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

macro_rules! unavailable_backend {
    ($ty:ident, $name:literal, $reason:expr) => {
        /// Not yet provided: `open` always reports why.
        pub struct $ty(());

        impl $ty {
            pub fn open() -> Result<Self> {
                Err(Error::BackendUnavailable {
                    backend: $name,
                    reason: $reason.to_string(),
                })
            }
        }

        impl Backend for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            fn device(&self) -> String {
                String::new()
            }
            fn prepare_g1(&self, _: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
                Self::open().map(|_| unreachable!())
            }
            fn prepare_g2(&self, _: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
                Self::open().map(|_| unreachable!())
            }
            fn ntt(&self, _: &mut [Scalar], _: bool) -> Result<()> {
                Self::open().map(|_| ())
            }
            fn compute_h(
                &self,
                _: Vec<Scalar>,
                _: Vec<Scalar>,
                _: Vec<Scalar>,
            ) -> Result<Vec<Scalar>> {
                Self::open().map(|_| unreachable!())
            }
            fn msm_g1(&self, _: &G1Bases, _: &[MsmInput<'_>]) -> Result<Vec<G1Projective>> {
                Self::open().map(|_| unreachable!())
            }
            fn msm_g2(&self, _: &G2Bases, _: &[MsmInput<'_>]) -> Result<Vec<G2Projective>> {
                Self::open().map(|_| unreachable!())
            }
        }
    };
}

unavailable_backend!(
    CudaBackend,
    "cuda",
    "this build has no CUDA kernels yet (crossgroth-cuda is a shell)"
);
unavailable_backend!(
    WgpuBackend,
    "wgpu",
    "this build has no WGSL shaders yet (crossgroth-wgpu is a shell)"
);

//! The CPU backend, the reference every other backend is checked against: a rayon
//! NTT and blst's Pippenger MSM run inside rayon's pool, with scalars 0 and 1 kept
//! out of the bucket pass.

pub mod msm;
pub mod ntt;

use std::sync::Arc;

use super::{Backend, G1Bases, G2Bases, MsmInput};
use crate::error::Result;
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device(&self) -> String {
        format!("{} CPU threads (rayon)", rayon::current_num_threads())
    }

    fn prepare_g1(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        Ok(G1Bases {
            host: bases,
            device: None,
        })
    }

    fn prepare_g2(&self, bases: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
        Ok(G2Bases {
            host: bases,
            device: None,
        })
    }

    fn ntt(&self, values: &mut [Scalar], inverse: bool) -> Result<()> {
        ntt::ntt(values, inverse)
    }

    fn compute_h(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()> {
        ntt::compute_h(a, b, c)
    }

    fn msm_g1(&self, bases: &G1Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G1Projective>> {
        inputs
            .iter()
            .map(|input| msm::msm_g1(&bases.host, input))
            .collect()
    }

    fn msm_g2(&self, bases: &G2Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G2Projective>> {
        inputs
            .iter()
            .map(|input| msm::msm_g2(&bases.host, input))
            .collect()
    }
}

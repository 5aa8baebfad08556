//! The CPU backend, the reference every other backend is checked against: a rayon
//! NTT and blst's Pippenger MSM run inside rayon's pool, with scalars 0 and 1 kept
//! out of the bucket pass.

pub mod msm;
pub mod ntt;

use super::{Backend, BasesRef, DeviceBases, HostBases, MsmInput, Placement, Sums};
use crate::error::Result;
use crate::Scalar;

#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device(&self) -> String {
        format!("{} CPU threads (rayon)", rayon::current_num_threads())
    }

    /// The host copy is what the CPU reads, wherever it is told to keep them.
    fn prepare(&self, _bases: &HostBases, _placement: Placement) -> Result<DeviceBases> {
        Ok(None)
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

    fn msm_sums(&self, bases: BasesRef<'_>, inputs: &[MsmInput<'_>]) -> Result<Sums> {
        Ok(match bases {
            BasesRef::G1(b) => Sums::G1(each(inputs, |i| msm::msm::<super::G1>(b.host()?, i))?),
            BasesRef::G2(b) => Sums::G2(each(inputs, |i| msm::msm::<super::G2>(b.host()?, i))?),
        })
    }
}

fn each<T>(inputs: &[MsmInput<'_>], f: impl Fn(&MsmInput<'_>) -> Result<T>) -> Result<Vec<T>> {
    inputs.iter().map(f).collect()
}

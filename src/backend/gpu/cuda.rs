//! The cuda backend: `crossgroth-cuda` behind the `Backend` trait.

use std::sync::Arc;

use blst::{blst_fr, blst_p1_affine, blst_p2_affine};
use crossgroth_cuda as cuda;

use super::super::{
    compose_g1_side, cpu, Backend, G1Bases, G1Side, G2Bases, MsmInput, PreparedParams,
};
use crate::error::{Error, Result};
use crate::synthesis::Assignment;
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

pub struct CudaBackend {
    inner: cuda::CudaBackend,
}

pub(crate) fn err(e: cuda::CudaError) -> Error {
    if e.is_unavailable() {
        let reason = e.to_string();
        Error::BackendUnavailable {
            backend: "cuda",
            reason: reason
                .strip_prefix("unavailable: ")
                .unwrap_or(&reason)
                .to_string(),
        }
    } else {
        Error::Backend {
            backend: "cuda",
            message: e.to_string(),
        }
    }
}

fn fr(v: &[Scalar]) -> &[blst_fr] {
    // SAFETY: Scalar is repr(transparent) over blst_fr.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const blst_fr, v.len()) }
}

fn fr_mut(v: &mut [Scalar]) -> &mut [blst_fr] {
    // SAFETY: Scalar is repr(transparent) over blst_fr.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut blst_fr, v.len()) }
}

/// The device kernels take bases from index 0. A base offset k becomes k leading
/// zero scalars that the density includes: they shift every rank by k and add
/// nothing (zeros never reach the bucket pass).
fn shifted(input: &MsmInput<'_>) -> (Vec<Scalar>, Option<Vec<u64>>) {
    let k = input.base_offset;
    let mut scalars = Vec::with_capacity(k + input.scalars.len());
    scalars.resize(k, Scalar::default());
    scalars.extend_from_slice(input.scalars);
    let n = scalars.len();
    let mut words = vec![0u64; n.div_ceil(64)];
    for i in 0..k {
        words[i / 64] |= 1 << (i % 64);
    }
    match input.density {
        Some(d) => {
            for i in d.ones() {
                let j = k + i;
                words[j / 64] |= 1 << (j % 64);
            }
        }
        None => {
            for j in k..n {
                words[j / 64] |= 1 << (j % 64);
            }
        }
    }
    (scalars, Some(words))
}

impl CudaBackend {
    /// Opens CUDA device 0.
    pub fn open() -> Result<Self> {
        Self::open_device(0)
    }

    pub fn open_device(ordinal: usize) -> Result<Self> {
        Ok(CudaBackend {
            inner: cuda::CudaBackend::new(ordinal).map_err(err)?,
        })
    }

    /// The underlying device handle (for device-event timing in benchmarks).
    pub fn device_handle(&self) -> &cuda::CudaBackend {
        &self.inner
    }

    fn device_bases<'a, T: 'static>(
        &self,
        device: &'a Option<Arc<dyn std::any::Any + Send + Sync>>,
    ) -> Result<&'a T> {
        device
            .as_ref()
            .and_then(|d| d.downcast_ref::<T>())
            .ok_or_else(|| Error::Invalid("bases were not prepared by the cuda backend".into()))
    }

    fn msm_input<P>(
        &self,
        input: &MsmInput<'_>,
        bases_len: usize,
        run: impl Fn(&[blst_fr], Option<&[u64]>) -> std::result::Result<P, cuda::CudaError>,
    ) -> Result<P> {
        let needed = input.bases_needed()?;
        if needed > bases_len {
            return Err(Error::Invalid(format!(
                "MSM reads {needed} bases, only {bases_len} are present"
            )));
        }
        if input.base_offset == 0 {
            let density = input.density.map(|d| d.words());
            run(fr(input.scalars), density).map_err(err)
        } else {
            let (scalars, words) = shifted(input);
            run(fr(&scalars), words.as_deref()).map_err(err)
        }
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn device(&self) -> String {
        let i = self.inner.info();
        format!(
            "cuda:{} {} ({} MiB, sm_{}{})",
            i.ordinal,
            i.name,
            i.total_memory >> 20,
            i.compute_capability.0,
            i.compute_capability.1
        )
    }

    /// The composed G1 side, timed with CUDA events around it.
    fn g1_side(
        &self,
        prepared: &PreparedParams,
        asg: &mut Assignment,
        dispose: &mut dyn FnMut(Vec<Scalar>),
    ) -> Result<G1Side> {
        let (side, took) = self
            .inner
            .time(|_| Ok(compose_g1_side(self, prepared, asg, dispose)))
            .map_err(err)?;
        let mut side = side?;
        side.device_seconds = Some(took.as_secs_f64());
        Ok(side)
    }

    fn device_time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<std::time::Duration>> {
        let (r, took) = self.inner.time(|_| Ok(work())).map_err(err)?;
        r?;
        Ok(Some(took))
    }

    fn memory(&self) -> Option<(usize, usize)> {
        self.inner.memory().ok()
    }

    fn b_g2_on_device(&self, effective_terms: usize) -> bool {
        effective_terms >= 1 << 16
    }

    fn prepare_g1(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
        let raw = unsafe {
            std::slice::from_raw_parts(bases.as_ptr() as *const blst_p1_affine, bases.len())
        };
        let dev = self.inner.upload_g1_bases(raw).map_err(err)?;
        Ok(G1Bases {
            host: bases,
            device: Some(Arc::new(dev)),
        })
    }

    fn prepare_g2(&self, bases: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
        // SAFETY: G2Affine is repr(transparent) over blst_p2_affine.
        let raw = unsafe {
            std::slice::from_raw_parts(bases.as_ptr() as *const blst_p2_affine, bases.len())
        };
        let dev = self.inner.upload_g2_bases(raw).map_err(err)?;
        Ok(G2Bases {
            host: bases,
            device: Some(Arc::new(dev)),
        })
    }

    fn ntt(&self, values: &mut [Scalar], inverse: bool) -> Result<()> {
        if !values.len().is_power_of_two() {
            return Err(Error::Invalid(format!(
                "NTT length {} is not a power of two",
                values.len()
            )));
        }
        let log = values.len().trailing_zeros();
        self.inner.ntt(fr_mut(values), log, inverse).map_err(err)
    }

    fn compute_h(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()> {
        let log = crate::synthesis::log_domain(a.len())?;
        if log == 0 {
            // A one-point domain has no coefficient to return; nothing to offload.
            return cpu::ntt::compute_h(a, b, c);
        }
        if b.len() != a.len() || c.len() != a.len() {
            return Err(Error::Invalid("a, b, c have different lengths".into()));
        }
        let h = self
            .inner
            .compute_h(fr(a), fr(b), fr(c), log)
            .map_err(err)?;
        a.clear();
        a.extend(h.into_iter().map(Scalar::from));
        Ok(())
    }

    fn msm_g1(&self, bases: &G1Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G1Projective>> {
        let dev: &cuda::G1Bases = self.device_bases(&bases.device)?;
        inputs
            .iter()
            .map(|input| {
                self.msm_input(input, dev.len(), |s, d| self.inner.msm_g1(dev, s, d))
                    .map(cpu::msm::g1_from_raw)
            })
            .collect()
    }

    fn msm_g2(&self, bases: &G2Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G2Projective>> {
        let dev: &cuda::G2Bases = self.device_bases(&bases.device)?;
        inputs
            .iter()
            .map(|input| {
                self.msm_input(input, dev.len(), |s, d| self.inner.msm_g2(dev, s, d))
                    .map(cpu::msm::g2_from_raw)
            })
            .collect()
    }
}

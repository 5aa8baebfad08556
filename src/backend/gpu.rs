//! Adapters from the GPU backend crates to the [`Backend`](super::Backend) trait.
//!
//! The crates speak blst's repr(C) types and know nothing of Groth16; both offer the
//! same operations, so one generic adapter, [`GpuBackend`], serves them through the
//! small [`DeviceApi`] trait. blstrs' types are `repr(transparent)` over blst's, so
//! slices are reinterpreted, never copied.

pub(crate) mod cuda;
mod wgpu;

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use blst::{blst_fr, blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};

use super::{compose_g1_side, cpu, Backend, G1Bases, G1Side, G2Bases, MsmInput, PreparedParams};
use crate::error::{Error, Result};
use crate::synthesis::Assignment;
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

pub use wgpu::WgpuOptions;

/// What a GPU crate offers, in its own types and errors.
pub trait DeviceApi: Send + Sync + 'static {
    const NAME: &'static str;
    type G1: Send + Sync + 'static;
    type G2: Send + Sync + 'static;
    type Error: std::fmt::Display;

    /// Whether an error means "no such device here" rather than a failure.
    fn is_unavailable(e: &Self::Error) -> bool;
    fn describe(&self) -> String;
    fn upload_g1(&self, bases: &[blst_p1_affine]) -> Result<Self::G1, Self::Error>;
    fn upload_g2(&self, bases: &[blst_p2_affine]) -> Result<Self::G2, Self::Error>;
    fn g1_len(bases: &Self::G1) -> usize;
    fn g2_len(bases: &Self::G2) -> usize;
    fn msm_g1(
        &self,
        bases: &Self::G1,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p1, Self::Error>;
    fn msm_g2(
        &self,
        bases: &Self::G2,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p2, Self::Error>;
    fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), Self::Error>;
    fn compute_h(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<Vec<blst_fr>, Self::Error>;
    /// Runs `work`, returning its result and the device time it took.
    fn time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<(Result<()>, Duration), Self::Error>;
    fn memory(&self) -> Option<(usize, usize)>;
}

/// A GPU crate behind the `Backend` trait.
pub struct GpuBackend<D: DeviceApi> {
    inner: D,
}

pub(crate) fn err<D: DeviceApi>(e: D::Error) -> Error {
    let reason = e.to_string();
    if D::is_unavailable(&e) {
        let reason = reason.strip_prefix("unavailable: ").unwrap_or(&reason);
        let reason = reason.strip_prefix("wgpu unavailable: ").unwrap_or(reason);
        Error::BackendUnavailable {
            backend: D::NAME,
            reason: reason.to_string(),
        }
    } else {
        Error::Backend {
            backend: D::NAME,
            message: reason,
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
fn shifted(input: &MsmInput<'_>) -> (Vec<Scalar>, Vec<u64>) {
    let k = input.base_offset;
    let mut scalars = Vec::with_capacity(k + input.scalars.len());
    scalars.resize(k, Scalar::default());
    scalars.extend_from_slice(input.scalars);
    let n = scalars.len();
    let mut words = vec![0u64; n.div_ceil(64)];
    let mut set = |j: usize| words[j / 64] |= 1 << (j % 64);
    (0..k).for_each(&mut set);
    match input.density {
        Some(d) => d.ones().for_each(|i| set(k + i)),
        None => (k..n).for_each(&mut set),
    }
    (scalars, words)
}

impl<D: DeviceApi> GpuBackend<D> {
    pub fn from_device(inner: D) -> Self {
        GpuBackend { inner }
    }

    /// The crate's own handle.
    pub fn device_handle(&self) -> &D {
        &self.inner
    }

    fn resident<'a, T: 'static>(
        &self,
        device: &'a Option<Arc<dyn Any + Send + Sync>>,
    ) -> Result<&'a T> {
        device
            .as_ref()
            .and_then(|d| d.downcast_ref::<T>())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "bases were not prepared by the {} backend",
                    D::NAME
                ))
            })
    }

    /// One MSM input through a device call taking (scalars, density) from base 0.
    fn msm_input<P>(
        &self,
        input: &MsmInput<'_>,
        bases_len: usize,
        run: impl Fn(&[blst_fr], Option<&[u64]>) -> Result<P, D::Error>,
    ) -> Result<P> {
        let needed = input.bases_needed()?;
        if needed > bases_len {
            return Err(Error::Invalid(format!(
                "MSM reads {needed} bases, only {bases_len} are present"
            )));
        }
        if input.base_offset == 0 {
            run(fr(input.scalars), input.density.map(|d| d.words())).map_err(err::<D>)
        } else {
            let (scalars, words) = shifted(input);
            run(fr(&scalars), Some(&words)).map_err(err::<D>)
        }
    }
}

impl<D: DeviceApi> Backend for GpuBackend<D> {
    fn name(&self) -> &'static str {
        D::NAME
    }

    fn device(&self) -> String {
        self.inner.describe()
    }

    fn prepare_g1(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
        let raw = unsafe {
            std::slice::from_raw_parts(bases.as_ptr() as *const blst_p1_affine, bases.len())
        };
        let dev = self.inner.upload_g1(raw).map_err(err::<D>)?;
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
        let dev = self.inner.upload_g2(raw).map_err(err::<D>)?;
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
        self.inner
            .ntt(fr_mut(values), log, inverse)
            .map_err(err::<D>)
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
            .map_err(err::<D>)?;
        a.clear();
        a.extend(h.into_iter().map(Scalar::from));
        Ok(())
    }

    fn msm_g1(&self, bases: &G1Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G1Projective>> {
        let dev: &D::G1 = self.resident(&bases.device)?;
        inputs
            .iter()
            .map(|input| {
                self.msm_input(input, D::g1_len(dev), |s, d| self.inner.msm_g1(dev, s, d))
                    .map(cpu::msm::g1_from_raw)
            })
            .collect()
    }

    fn msm_g2(&self, bases: &G2Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G2Projective>> {
        let dev: &D::G2 = self.resident(&bases.device)?;
        inputs
            .iter()
            .map(|input| {
                self.msm_input(input, D::g2_len(dev), |s, d| self.inner.msm_g2(dev, s, d))
                    .map(cpu::msm::g2_from_raw)
            })
            .collect()
    }

    /// The composed G1 side, timed on the device.
    fn g1_side(
        &self,
        prepared: &PreparedParams,
        asg: &mut Assignment,
        dispose: &mut dyn FnMut(Vec<Scalar>),
    ) -> Result<G1Side> {
        let mut side = None;
        let (r, took) = self
            .inner
            .time(&mut || {
                side = Some(compose_g1_side(self, prepared, asg, dispose)?);
                Ok(())
            })
            .map_err(err::<D>)?;
        r?;
        let mut side = side.expect("set when the work succeeded");
        side.device_seconds = Some(took.as_secs_f64());
        Ok(side)
    }

    fn device_time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Option<Duration>> {
        let (r, took) = self.inner.time(work).map_err(err::<D>)?;
        r?;
        Ok(Some(took))
    }

    fn memory(&self) -> Option<(usize, usize)> {
        self.inner.memory()
    }

    /// B_G2 pays on the device once many of its scalars are neither 0 nor 1.
    fn b_g2_on_device(&self, effective_terms: usize) -> bool {
        effective_terms >= 1 << 16
    }
}

pub type CudaBackend = GpuBackend<crossgroth_cuda::CudaBackend>;
pub type WgpuBackend = GpuBackend<crossgroth_wgpu::WgpuBackend>;

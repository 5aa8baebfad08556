//! The `Backend` trait: what a device offers the prover (DESIGN.md, Layout).
//!
//! Fine operations (NTT, H, G1/G2 MSM) are what tests and benchmarks call one by one;
//! the coarse [`Backend::g1_side`] — H then the H, L, A and B_G1 MSMs of one proof —
//! composes them by default, and a GPU backend overrides it to keep data on the
//! device. B_G2 stays a separate call so the finalizer can place it.

pub mod cpu;
mod gpu;
mod select;

use std::any::Any;
use std::sync::Arc;

use crate::density::Density;
use crate::error::{Error, Result};
use crate::groth16::Parameters;
use crate::synthesis::Assignment;
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

pub use cpu::CpuBackend;
pub use gpu::{CudaBackend, DeviceApi, GpuBackend, WgpuBackend, WgpuOptions};
pub use select::{available_backends, open_backend, open_backends, BackendKind, BackendReport};

/// A set of G1 bases prepared by a backend (resident on its device where it has one).
#[derive(Clone)]
pub struct G1Bases {
    pub host: Arc<Vec<G1Affine>>,
    pub device: Option<Arc<dyn Any + Send + Sync>>,
}

/// A set of G2 bases prepared by a backend.
#[derive(Clone)]
pub struct G2Bases {
    pub host: Arc<Vec<G2Affine>>,
    pub device: Option<Arc<dyn Any + Send + Sync>>,
}

/// One scalar vector of an MSM. With a density, `scalars` has one entry per variable
/// and the k-th variable whose bit is set pairs with base `base_offset + k`; without,
/// `scalars[i]` pairs with base `base_offset + i`.
#[derive(Clone, Copy)]
pub struct MsmInput<'a> {
    pub scalars: &'a [Scalar],
    pub density: Option<&'a Density>,
    pub base_offset: usize,
}

impl<'a> MsmInput<'a> {
    pub fn dense(scalars: &'a [Scalar]) -> Self {
        MsmInput {
            scalars,
            density: None,
            base_offset: 0,
        }
    }

    /// Number of bases this input reads, checked against the scalar count.
    pub fn bases_needed(&self) -> Result<usize> {
        let used = match self.density {
            Some(d) => {
                if d.len() != self.scalars.len() {
                    return Err(Error::Invalid(format!(
                        "density of {} bits for {} scalars",
                        d.len(),
                        self.scalars.len()
                    )));
                }
                d.count()
            }
            None => self.scalars.len(),
        };
        Ok(self.base_offset + used)
    }
}

/// A parameter set's bases prepared by one backend.
pub struct PreparedParams {
    pub params: Arc<Parameters>,
    pub h: G1Bases,
    pub l: G1Bases,
    pub a: G1Bases,
    pub b_g1: G1Bases,
    pub b_g2: G2Bases,
}

impl PreparedParams {
    /// Bases prepared as the backend sees fit (the cuda backend keeps them
    /// resident where they fit in device memory and streams them otherwise).
    pub fn new(backend: &dyn Backend, params: Arc<Parameters>) -> Result<Self> {
        Ok(PreparedParams {
            h: backend.prepare_g1(params.h.clone())?,
            l: backend.prepare_g1(params.l.clone())?,
            a: backend.prepare_g1(params.a.clone())?,
            b_g1: backend.prepare_g1(params.b_g1.clone())?,
            b_g2: backend.prepare_g2(params.b_g2.clone())?,
            params,
        })
    }

    /// Bases left in host memory and streamed to the device by every MSM, on a
    /// backend that can stream them ([`Backend::streams_bases`]).
    pub fn streamed(backend: &dyn Backend, params: Arc<Parameters>) -> Result<Self> {
        Ok(PreparedParams {
            h: backend.prepare_g1_streamed(params.h.clone())?,
            l: backend.prepare_g1_streamed(params.l.clone())?,
            a: backend.prepare_g1_streamed(params.a.clone())?,
            b_g1: backend.prepare_g1_streamed(params.b_g1.clone())?,
            b_g2: backend.prepare_g2_streamed(params.b_g2.clone())?,
            params,
        })
    }
}

/// The G1 side of one proof: every MSM result the critical path produces, and how
/// long each step took (seconds, in [`G1_STEPS`] order; 0 where not measured).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct G1Side {
    pub h: G1Projective,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b_g1: G1Projective,
    pub seconds: [f64; 5],
    /// How long the device was busy with it, from device events, where the backend
    /// measures that.
    pub device_seconds: Option<f64>,
}

/// Names of the steps of [`G1Side::seconds`].
pub const G1_STEPS: [&str; 5] = ["h", "msm_h", "msm_l", "msm_a", "msm_b_g1"];

pub trait Backend: Send + Sync {
    /// Short name: `cpu`, `cuda`, `wgpu`.
    fn name(&self) -> &'static str;

    /// The device this backend runs on, in words.
    fn device(&self) -> String;

    fn prepare_g1(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases>;
    fn prepare_g2(&self, bases: Arc<Vec<G2Affine>>) -> Result<G2Bases>;

    /// Whether this backend can leave bases in host memory and stream them to its
    /// device per MSM (for parameter sets larger than the device memory).
    fn streams_bases(&self) -> bool {
        false
    }
    /// Bases kept in host memory and streamed per MSM; backends that do not
    /// stream prepare them as usual.
    fn prepare_g1_streamed(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        self.prepare_g1(bases)
    }
    fn prepare_g2_streamed(&self, bases: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
        self.prepare_g2(bases)
    }

    /// In-place radix-2 NTT of a power-of-two-length vector (inverse includes the
    /// division by its length).
    fn ntt(&self, values: &mut [Scalar], inverse: bool) -> Result<()>;

    /// H of REFERENCE.md step 3: the m − 1 coefficients of (A·B − C)/Z, for a, b, c
    /// of equal length n ≤ m = 2^⌈log2 n⌉. Works in place: on return `a` holds H,
    /// and `b` and `c` are spent scratch the caller releases (so that the engine can
    /// free them off the hot path).
    fn compute_h(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()>;

    /// Several G1 MSMs over one base set.
    fn msm_g1(&self, bases: &G1Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G1Projective>>;

    /// Several G2 MSMs over one base set.
    fn msm_g2(&self, bases: &G2Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G2Projective>>;

    /// The whole G1 side of a proof. Takes a, b and c out of the assignment and hands
    /// every buffer it no longer needs to `dispose` as soon as it is spent (a, b, c
    /// once H exists, H once its MSM ran); reads the variables and densities.
    fn g1_side(
        &self,
        prepared: &PreparedParams,
        asg: &mut Assignment,
        dispose: &mut dyn FnMut(Vec<Scalar>),
    ) -> Result<G1Side> {
        compose_g1_side(self, prepared, asg, dispose)
    }

    /// Free and total device memory in bytes, where the backend has a device.
    fn memory(&self) -> Option<(usize, usize)> {
        None
    }

    /// Builds now what the backend would build on first use (wgpu: its compute
    /// pipelines, seconds on some drivers), so that the first timed call
    /// measures its work alone.
    fn warm_up(&self) -> Result<()> {
        Ok(())
    }

    /// Runs `work` and returns how long the device was busy with it, measured with
    /// device events (CUDA events, GPU timestamps); None for a backend without a
    /// device clock, whose callers time with the host clock.
    fn device_time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<std::time::Duration>> {
        work()?;
        Ok(None)
    }

    /// Whether B_G2 should run on this backend rather than on the CPU, given how many
    /// of its scalars are neither 0 nor 1.
    fn b_g2_on_device(&self, _effective_terms: usize) -> bool {
        false
    }

    /// The B_G2 MSM of a proof.
    fn b_g2(&self, prepared: &PreparedParams, asg: &Assignment) -> Result<G2Projective> {
        let parts = self.msm_g2(&prepared.b_g2, &b_inputs(asg))?;
        Ok(parts[0] + parts[1])
    }
}

/// B's two MSM inputs: inputs in B's input density, then aux variables in B's aux
/// density, whose bases start at |B-input density| (REFERENCE.md step 4).
pub fn b_inputs(asg: &Assignment) -> [MsmInput<'_>; 2] {
    [
        MsmInput {
            scalars: &asg.input,
            density: Some(&asg.b_input_density),
            base_offset: 0,
        },
        MsmInput {
            scalars: &asg.aux,
            density: Some(&asg.b_aux_density),
            base_offset: asg.b_input_density.count(),
        },
    ]
}

/// The G1 side composed from the fine operations: what [`Backend::g1_side`] does
/// unless a backend overrides it (an override may call this and add to it).
pub fn compose_g1_side<B: Backend + ?Sized>(
    backend: &B,
    prepared: &PreparedParams,
    asg: &mut Assignment,
    dispose: &mut dyn FnMut(Vec<Scalar>),
) -> Result<G1Side> {
    let mut seconds = [0.0; 5];
    let mut t = std::time::Instant::now();
    let mut lap = |i: usize| {
        seconds[i] = t.elapsed().as_secs_f64();
        t = std::time::Instant::now();
    };
    let mut h = std::mem::take(&mut asg.a);
    let mut b = std::mem::take(&mut asg.b);
    let mut c = std::mem::take(&mut asg.c);
    backend.compute_h(&mut h, &mut b, &mut c)?;
    dispose(b);
    dispose(c);
    lap(0);
    let asg = &*asg;
    let h_msm = backend.msm_g1(&prepared.h, &[MsmInput::dense(&h)])?[0];
    dispose(h);
    lap(1);
    let l = backend.msm_g1(&prepared.l, &[MsmInput::dense(&asg.aux)])?[0];
    lap(2);
    let a_parts = backend.msm_g1(
        &prepared.a,
        &[
            MsmInput::dense(&asg.input),
            MsmInput {
                scalars: &asg.aux,
                density: Some(&asg.a_aux_density),
                base_offset: asg.input.len(),
            },
        ],
    )?;
    lap(3);
    let b_parts = backend.msm_g1(&prepared.b_g1, &b_inputs(asg))?;
    lap(4);
    Ok(G1Side {
        h: h_msm,
        l,
        a: a_parts[0] + a_parts[1],
        b_g1: b_parts[0] + b_parts[1],
        seconds,
        device_seconds: None,
    })
}

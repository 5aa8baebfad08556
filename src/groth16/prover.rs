//! The prover: synthesis → witness check → the steps of one proof
//! ([`super::steps`]) on a backend. bellperson's `create_proof*` names run it on
//! the CPU backend.

use std::sync::Arc;

use bellpepper_core::Circuit;
use ff::Field;
use group::prime::PrimeCurveAffine;
use rand_core::RngCore;

use super::placement::{self, PlacementConfig};
use super::steps::{self, PreparedParams};
use super::{Parameters, Proof, VerifyingKey};
use crate::backend::{Backend, CpuBackend};
use crate::error::{Error, Result};
use crate::synthesis::{self, check_witness, Assignment, RecordedShape};
use crate::Scalar;

/// What the prover checks besides what correctness requires.
#[derive(Clone, Copy, Debug)]
pub struct ProveOptions {
    /// Check a·b = c on every row before proving (default on).
    pub check_witness: bool,
}

impl Default for ProveOptions {
    fn default() -> Self {
        ProveOptions {
            check_witness: true,
        }
    }
}

/// A backend with a parameter set prepared on it: prove many circuits of one shape.
pub struct Prover {
    backend: Arc<dyn Backend>,
    prepared: PreparedParams,
    options: ProveOptions,
}

impl Prover {
    /// Places the parameters' bases on `backend` as the default
    /// [`PlacementConfig`] decides (cuda: tables of precomputed copies where
    /// they fit).
    pub fn new(backend: Arc<dyn Backend>, params: Arc<Parameters>) -> Result<Self> {
        Self::with_placement(backend, params, &PlacementConfig::default())
    }

    /// Places the parameters' bases on `backend` as `config` decides.
    pub fn with_placement(
        backend: Arc<dyn Backend>,
        params: Arc<Parameters>,
        config: &PlacementConfig,
    ) -> Result<Self> {
        let (prepared, _) = placement::place(backend.as_ref(), &params, config, 0)?;
        Ok(Self::from_prepared(backend, prepared))
    }

    /// A prover over parameters already prepared on `backend`.
    pub fn from_prepared(backend: Arc<dyn Backend>, prepared: PreparedParams) -> Self {
        Prover {
            backend,
            prepared,
            options: ProveOptions::default(),
        }
    }

    pub fn with_options(mut self, options: ProveOptions) -> Self {
        self.options = options;
        self
    }

    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    pub fn params(&self) -> &Arc<Parameters> {
        &self.prepared.params
    }

    pub fn prepared(&self) -> &PreparedParams {
        &self.prepared
    }

    pub fn prove<C: Circuit<Scalar>>(&self, circuit: C, r: Scalar, s: Scalar) -> Result<Proof> {
        let asg = synthesis::synthesize(circuit)?;
        Ok(self.prove_assignments(vec![asg], &[r], &[s])?.remove(0))
    }

    /// Proves circuits of one shape, synthesized in parallel.
    pub fn prove_batch<C: Circuit<Scalar> + Send>(
        &self,
        circuits: Vec<C>,
        r: &[Scalar],
        s: &[Scalar],
    ) -> Result<Vec<Proof>> {
        check_randomness(circuits.len(), r, s)?;
        let asgs = synthesis::synthesize_batch(circuits)?;
        self.prove_assignments(asgs, r, s)
    }

    /// Proves circuits of a recorded shape, synthesizing their witnesses only.
    pub fn prove_recorded<C: Circuit<Scalar> + Send>(
        &self,
        shape: &RecordedShape,
        circuits: Vec<C>,
        r: &[Scalar],
        s: &[Scalar],
    ) -> Result<Vec<Proof>> {
        check_randomness(circuits.len(), r, s)?;
        let asgs = shape.synthesize_batch(circuits)?;
        self.prove_named(asgs, r, s, |row| shape.row_name(row))
    }

    /// Proves already synthesized assignments of one shape.
    pub fn prove_assignments(
        &self,
        asgs: Vec<Assignment>,
        r: &[Scalar],
        s: &[Scalar],
    ) -> Result<Vec<Proof>> {
        self.prove_named(asgs, r, s, |_| None)
    }

    /// Proves assignments; `row_name` names an unsatisfied row where known.
    fn prove_named(
        &self,
        mut asgs: Vec<Assignment>,
        r: &[Scalar],
        s: &[Scalar],
        row_name: impl Fn(usize) -> Option<String>,
    ) -> Result<Vec<Proof>> {
        check_randomness(asgs.len(), r, s)?;
        let shape = asgs[0].shape();
        for (index, asg) in asgs.iter().enumerate().skip(1) {
            if let Some(what) = shape.difference(&asg.shape()) {
                return Err(Error::BatchShapeMismatch { index, what });
            }
        }
        self.prepared.params.check_shape(&shape)?;
        if self.options.check_witness {
            let batch = asgs.len() > 1;
            for (k, asg) in asgs.iter().enumerate() {
                if let Some(row) = check_witness(asg) {
                    return Err(Error::Unsatisfied {
                        row,
                        path: row_name(row),
                        circuit: batch.then_some(k),
                    });
                }
            }
        }
        let vk = &self.prepared.params.vk;
        check_delta(vk)?;
        let backend = self.backend.as_ref();
        asgs.iter_mut()
            .zip(r.iter().zip(s))
            .enumerate()
            .map(|(unit, (asg, (r, s)))| {
                let mut g1 = steps::g1_side(
                    backend,
                    &self.prepared,
                    asg,
                    steps::Pending::default(),
                    &mut drop,
                )?;
                let (b_g2, b_g2_secs) = steps::timed(|| {
                    let params = &self.prepared.params;
                    steps::b_g2(backend, &g1, || Ok(&self.prepared), params, asg)
                });
                let b_g2 = b_g2?;
                if g1.b_g2.is_none() {
                    g1.times.b_g2 = b_g2_secs;
                }
                let (proof, assemble_secs) =
                    steps::timed(|| steps::assemble(vk, &g1, &b_g2, *r, *s));
                g1.times.assemble = assemble_secs;
                g1.times.log(backend.name(), unit);
                Ok(proof)
            })
            .collect()
    }
}

fn check_randomness(n: usize, r: &[Scalar], s: &[Scalar]) -> Result<()> {
    if n == 0 {
        return Err(Error::EmptyBatch);
    }
    if r.len() != n || s.len() != n {
        return Err(Error::Invalid(format!(
            "{n} circuits need {n} values of r and of s, got {} and {}",
            r.len(),
            s.len()
        )));
    }
    Ok(())
}

pub(crate) fn check_delta(vk: &VerifyingKey) -> Result<()> {
    if bool::from(vk.delta_g1.is_identity()) || bool::from(vk.delta_g2.is_identity()) {
        return Err(Error::IdentityDelta);
    }
    Ok(())
}

/// r then s, bellperson's order for one proof; for a batch, every r then every s.
pub fn draw_randomness<R: RngCore>(n: usize, rng: &mut R) -> (Vec<Scalar>, Vec<Scalar>) {
    let r = (0..n).map(|_| Scalar::random(&mut *rng)).collect();
    let s = (0..n).map(|_| Scalar::random(&mut *rng)).collect();
    (r, s)
}

fn cpu_prover(params: &Parameters) -> Result<Prover> {
    Prover::new(Arc::new(CpuBackend), Arc::new(params.clone()))
}

/// bellperson's `create_proof`, on the CPU backend.
pub fn create_proof<C: Circuit<Scalar>>(
    circuit: C,
    params: &Parameters,
    r: Scalar,
    s: Scalar,
) -> Result<Proof> {
    cpu_prover(params)?.prove(circuit, r, s)
}

/// bellperson's `create_proof_batch`, on the CPU backend.
pub fn create_proof_batch<C: Circuit<Scalar> + Send>(
    circuits: Vec<C>,
    params: &Parameters,
    r: Vec<Scalar>,
    s: Vec<Scalar>,
) -> Result<Vec<Proof>> {
    cpu_prover(params)?.prove_batch(circuits, &r, &s)
}

/// bellperson's `create_random_proof`: r then s from `rng`.
pub fn create_random_proof<C: Circuit<Scalar>, R: RngCore>(
    circuit: C,
    params: &Parameters,
    rng: &mut R,
) -> Result<Proof> {
    let (r, s) = draw_randomness(1, rng);
    create_proof(circuit, params, r[0], s[0])
}

/// bellperson's `create_random_proof_batch`: every r, then every s.
pub fn create_random_proof_batch<C: Circuit<Scalar> + Send, R: RngCore>(
    circuits: Vec<C>,
    params: &Parameters,
    rng: &mut R,
) -> Result<Vec<Proof>> {
    let (r, s) = draw_randomness(circuits.len(), rng);
    create_proof_batch(circuits, params, r, s)
}

//! Jobs: what callers submit, and the handle that resolves to their proofs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bellpepper_core::Circuit;
use futures::channel::oneshot;
use rand_core::OsRng;

use crate::error::{Error, Result};
use crate::groth16::{draw_randomness, Parameters, Proof};
use crate::synthesis::{synthesize, Assignment, RecordedShape};
use crate::Scalar;

/// Synthesis of one circuit, boxed so one engine runs any circuit type.
pub type Synthesizer = Box<dyn FnOnce() -> Result<Assignment> + Send>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Priority {
    Low,
    Normal,
    High,
    /// Ahead of everything queued (WinningPoSt, due within an epoch).
    Critical,
}

/// A batch of circuits of one shape with their parameters: the unit of submission.
pub struct Job {
    pub(crate) id: String,
    pub(crate) priority: Priority,
    pub(crate) params: Arc<Parameters>,
    pub(crate) units: Vec<Synthesizer>,
    pub(crate) randomness: Option<(Vec<Scalar>, Vec<Scalar>)>,
    pub(crate) checked: bool,
    /// The recorded shape whose witness-only assignments the units return.
    pub(crate) shape: Option<Arc<RecordedShape>>,
}

impl Job {
    /// A job whose circuits are synthesized directly.
    pub fn new<C: Circuit<Scalar> + Send + 'static>(
        id: impl Into<String>,
        params: Arc<Parameters>,
        circuits: Vec<C>,
    ) -> Self {
        let units = circuits
            .into_iter()
            .map(|c| Box::new(move || synthesize(c)) as Synthesizer)
            .collect();
        Self::from_synthesizers(id, params, units)
    }

    /// A job whose circuits are synthesized from a recorded shape (witness pass
    /// only; a, b and c are computed on the device where it holds the shape's
    /// matrices, on the host otherwise).
    pub fn recorded<C: Circuit<Scalar> + Send + 'static>(
        id: impl Into<String>,
        params: Arc<Parameters>,
        shape: Arc<RecordedShape>,
        circuits: Vec<C>,
    ) -> Self {
        let units = circuits
            .into_iter()
            .map(|c| {
                let shape = shape.clone();
                Box::new(move || shape.witness(c)) as Synthesizer
            })
            .collect();
        Self::from_synthesizers(id, params, units).with_recorded_shape(shape)
    }

    /// A job made of arbitrary synthesis functions (tests inject faults this way).
    pub fn from_synthesizers(
        id: impl Into<String>,
        params: Arc<Parameters>,
        units: Vec<Synthesizer>,
    ) -> Self {
        Job {
            id: id.into(),
            priority: Priority::Normal,
            params,
            units,
            randomness: None,
            checked: true,
            shape: None,
        }
    }

    /// Says that the units return witness-only assignments of `shape`
    /// (`RecordedShape::witness`), so that where every device computes a, b
    /// and c the budget charges each circuit its witness alone from the first.
    pub fn with_recorded_shape(mut self, shape: Arc<RecordedShape>) -> Self {
        self.shape = Some(shape);
        self
    }

    /// BENCHMARK ONLY: proves circuits whose witness is not satisfied (workloads
    /// fabricated to have a real circuit's shape and scalar mix), skipping the
    /// check of every row and the verification of the proofs, which would refuse
    /// them. The proofs such a job returns are never valid.
    pub fn unchecked_benchmark(mut self) -> Self {
        self.checked = false;
        self
    }

    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// Explicit r and s per circuit (default: the operating system's CSPRNG).
    pub fn with_randomness(mut self, r: Vec<Scalar>, s: Vec<Scalar>) -> Self {
        self.randomness = Some((r, s));
        self
    }

    pub(crate) fn take_randomness(&mut self) -> Result<(Vec<Scalar>, Vec<Scalar>)> {
        let n = self.units.len();
        match self.randomness.take() {
            Some((r, s)) if r.len() == n && s.len() == n => Ok((r, s)),
            Some((r, s)) => Err(Error::Invalid(format!(
                "job {}: {n} circuits need {n} values of r and of s, got {} and {}",
                self.id,
                r.len(),
                s.len()
            ))),
            None => Ok(draw_randomness(n, &mut OsRng)),
        }
    }
}

/// Progress of one job inside the engine.
pub(crate) struct JobState {
    pub id: String,
    pub priority: Priority,
    pub params: Arc<Parameters>,
    pub r: Vec<Scalar>,
    pub s: Vec<Scalar>,
    /// Whether rows are checked and proofs verified (see Job::unchecked_benchmark).
    pub checked: bool,
    /// Bytes of one circuit's witness where the circuits stay witness-only
    /// until a device takes them (see Job::with_recorded_shape): decided once,
    /// at submission, from whether every device computes a, b and c.
    pub witness_bytes: Option<usize>,
    pub cancelled: AtomicBool,
    pub results: Mutex<JobResults>,
}

pub(crate) struct JobResults {
    pub proofs: Vec<Option<Proof>>,
    pub public_inputs: Vec<Vec<Scalar>>,
    pub remaining: usize,
    pub tx: Option<oneshot::Sender<Result<Vec<Proof>>>>,
}

impl JobState {
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Resolves the job's future with `result` unless it already was; true if this
    /// call resolved it.
    pub fn resolve(&self, result: Result<Vec<Proof>>) -> bool {
        if result.is_err() {
            self.cancelled.store(true, Ordering::Release);
        }
        let tx = self.results.lock().unwrap().tx.take();
        match tx {
            Some(tx) => {
                let _ = tx.send(result);
                true
            }
            None => false,
        }
    }
}

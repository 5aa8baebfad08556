//! Synthesis: running a bellpepper circuit to get what the prover needs.
//!
//! Two modes give identical [`Assignment`]s:
//! - **direct** ([`synthesize`]): evaluates every linear combination as the circuit
//!   builds it, with bellperson's exact semantics (REFERENCE.md, step 1);
//! - **recorded** ([`RecordedShape`]): the constraint matrices of a circuit shape are
//!   captured once; later proofs run the circuit for its witness only and get a, b, c
//!   by a sparse matrix-vector product.

mod check;
pub mod progress;
mod prover_cs;
mod recorded;
mod row_names;
mod shape_file;
mod witness;

pub use check::check_witness;
use prover_cs::NamedSynthesis;
pub use prover_cs::ProvingSystem;
pub(crate) use recorded::AUX as AUX_COLUMN;
pub(crate) use recorded::{Csr, Var};
pub use recorded::{RecordedShape, ShapeRecorder};
pub use shape_file::{read_shape, write_shape, ShapeFileError};
pub use witness::WitnessSystem;

use std::panic::{catch_unwind, AssertUnwindSafe};

use bellpepper_core::{Circuit, ConstraintSystem, Index, Variable};
use ff::Field;
use rayon::prelude::*;

use crate::density::Density;
use crate::error::{Error, Result};
use crate::Scalar;

/// Everything a proof needs from one synthesized circuit.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// ⟨A, w⟩, ⟨B, w⟩, ⟨C, w⟩ per constraint row, input rows included.
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    /// Input assignment; element 0 is ONE.
    pub input: Vec<Scalar>,
    pub aux: Vec<Scalar>,
    pub a_aux_density: Density,
    pub b_input_density: Density,
    pub b_aux_density: Density,
    /// Set when a, b and c are still to be computed from a recorded shape's
    /// matrices (they are empty until then): on a device that holds the
    /// matrices, or on the host by [`Assignment::evaluate`].
    pub pending: Option<PendingEvaluations>,
}

/// The recorded shape whose matrices give a witness-only assignment its a, b
/// and c ([`RecordedShape::witness`]).
#[derive(Clone)]
pub struct PendingEvaluations(pub std::sync::Arc<RecordedShape>);

impl PartialEq for PendingEvaluations {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for PendingEvaluations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PendingEvaluations({} rows)", self.0.num_rows())
    }
}

impl Assignment {
    pub fn num_rows(&self) -> usize {
        match &self.pending {
            Some(p) => p.0.num_rows(),
            None => self.a.len(),
        }
    }

    /// Whether a, b and c are still to be computed (see [`Assignment::pending`]).
    pub fn is_witness_only(&self) -> bool {
        self.pending.is_some()
    }

    /// Whether a proof can still be made of it: its a, b and c are here or
    /// pending (a proof's device steps take them).
    pub(crate) fn can_give_abc(&self) -> bool {
        self.pending.is_some() || !self.a.is_empty()
    }

    /// Pending again on `shape` (the evaluations it had before a failed proof
    /// took the a, b and c computed from it), so that another proof can be
    /// made of the witness it still holds.
    pub(crate) fn with_pending_restored(mut self, shape: Option<PendingEvaluations>) -> Self {
        if self.pending.is_none() && self.a.is_empty() {
            if let Some(shape) = shape {
                self.b = Vec::new();
                self.c = Vec::new();
                self.pending = Some(shape);
            }
        }
        self
    }

    /// Computes a, b and c on the host where they are still pending; a no-op
    /// otherwise.
    pub fn evaluate(&mut self) {
        if let Some(PendingEvaluations(shape)) = self.pending.take() {
            let [a, b, c] = shape.evaluate(&self.input, &self.aux);
            (self.a, self.b, self.c) = (a, b, c);
        }
    }

    /// What fixes the parameters' lengths: two assignments with the same shape can be
    /// proved with the same parameters and batched together.
    pub fn shape(&self) -> Shape {
        Shape {
            num_rows: self.num_rows(),
            num_inputs: self.input.len(),
            num_aux: self.aux.len(),
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        }
    }

    /// Public inputs as a verifier sees them (ONE excluded).
    pub fn public_inputs(&self) -> &[Scalar] {
        &self.input[1..]
    }

    /// Bytes held by the vectors, for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        (self.a.capacity() + self.b.capacity() + self.c.capacity()) * std::mem::size_of::<Scalar>()
            + (self.input.capacity() + self.aux.capacity()) * std::mem::size_of::<Scalar>()
            + (self.a_aux_density.words().len()
                + self.b_input_density.words().len()
                + self.b_aux_density.words().len())
                * 8
    }
}

/// The parts of an assignment that fix the parameters' lengths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub num_rows: usize,
    pub num_inputs: usize,
    pub num_aux: usize,
    pub a_aux_density: Density,
    pub b_input_density: Density,
    pub b_aux_density: Density,
}

impl Shape {
    /// log2 of the evaluation domain: the smallest power of two ≥ the row count.
    pub fn log_domain(&self) -> Result<u32> {
        log_domain(self.num_rows)
    }

    /// Describes how `other` differs from `self`, if it does.
    pub fn difference(&self, other: &Shape) -> Option<String> {
        let counts = [
            ("constraint rows", self.num_rows, other.num_rows),
            ("inputs", self.num_inputs, other.num_inputs),
            ("aux variables", self.num_aux, other.num_aux),
        ];
        for (what, a, b) in counts {
            if a != b {
                return Some(format!("{b} {what} instead of {a}"));
            }
        }
        let densities = [
            ("A-aux density", &self.a_aux_density, &other.a_aux_density),
            (
                "B-input density",
                &self.b_input_density,
                &other.b_input_density,
            ),
            ("B-aux density", &self.b_aux_density, &other.b_aux_density),
        ];
        for (what, a, b) in densities {
            if a != b {
                return Some(format!("its {what} differs"));
            }
        }
        None
    }
}

/// log2 of the smallest power of two ≥ `rows`, refusing domains the field cannot
/// hold (bellperson: `PolynomialDegreeTooLarge` once log2 m ≥ S = 32).
pub fn log_domain(rows: usize) -> Result<u32> {
    let m = rows.max(1).next_power_of_two();
    let log = m.trailing_zeros();
    if log >= Scalar::S {
        return Err(Error::DomainTooLarge { rows, log });
    }
    Ok(log)
}

use ff::PrimeField as _;

/// The namespace path of a constraint: the open namespaces, then its own name.
pub(crate) fn row_path(namespaces: &[String], own: String) -> String {
    let mut path = namespaces.join("/");
    if !own.is_empty() {
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(&own);
    }
    path
}

/// Runs `f`, turning a panic inside circuit code into an error.
pub(crate) fn guard_panics<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string panic payload)".into());
            Err(Error::CircuitPanicked(msg))
        }
    }
}

/// Adds bellperson's `input_i · 0 = 0` rows, one per input (ONE included), which make
/// the IC query fully dense.
pub(crate) fn enforce_input_rows<CS: ConstraintSystem<Scalar>>(cs: &mut CS, num_inputs: usize) {
    for i in 0..num_inputs {
        cs.enforce(
            || format!("input {i} · 0 = 0"),
            |lc| lc + Variable(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
}

/// Synthesizes one circuit directly, with bellperson's semantics.
pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> Result<Assignment> {
    guard_panics(|| {
        let mut cs = ProvingSystem::without_names();
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut cs)?;
        let n = cs.num_inputs();
        enforce_input_rows(&mut cs, n);
        Ok(cs.into_assignment())
    })
}

/// Synthesizes directly while tracking namespaces, so that an unsatisfied row can be
/// named: one name per row, input rows included. Slower: used to diagnose, not to prove.
pub fn synthesize_with_names<C: Circuit<Scalar>>(circuit: C) -> Result<(Assignment, Vec<String>)> {
    let _named = NamedSynthesis::begin();
    guard_panics(|| {
        let mut cs = ProvingSystem::with_names();
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut cs)?;
        let n = cs.num_inputs();
        enforce_input_rows(&mut cs, n);
        let names = cs.row_names().to_vec();
        let asg = cs.into_assignment();
        debug_assert_eq!(names.len(), asg.num_rows());
        Ok((asg, names))
    })
}

/// Synthesizes many circuits in parallel (rayon); the first error wins.
pub fn synthesize_batch<C: Circuit<Scalar> + Send>(circuits: Vec<C>) -> Result<Vec<Assignment>> {
    circuits.into_par_iter().map(synthesize).collect()
}

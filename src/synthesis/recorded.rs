//! Recorded mode: capture a circuit shape's constraint matrices once, then prove
//! later instances by running the circuit for its witness only.
//!
//! Building bellpepper `LinearCombination`s dominates direct synthesis; the witness
//! pass skips them (their closures are never called) and a, b, c come from a
//! parallel sparse matrix-vector product over the recorded CSR matrices.

use std::collections::HashMap;
use std::sync::Arc;

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blst::blst_fr;
use ff::Field;
use rayon::prelude::*;

use super::row_names::RowNames;
use super::witness::WitnessSystem;
use super::{enforce_input_rows, guard_panics, Assignment, PendingEvaluations};
use crate::density::Density;
use crate::error::{Error, Result};
use crate::Scalar;

/// Column tag: set for aux variables, clear for inputs.
pub(crate) const AUX: u32 = 1 << 31;
/// Coefficient-table indices with a fast path.
const COEFF_ONE: u32 = 0;
const COEFF_MINUS_ONE: u32 = 1;

/// One constraint matrix in compressed sparse rows, merged zero terms dropped.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Csr {
    row_start: Vec<usize>,
    col: Vec<u32>,
    coeff: Vec<u32>,
}

impl Csr {
    fn new() -> Self {
        Csr {
            row_start: vec![0],
            col: vec![],
            coeff: vec![],
        }
    }

    pub(crate) fn rows(&self) -> usize {
        self.row_start.len() - 1
    }

    /// The terms of `row`, as (variable, coefficient-table index).
    pub(crate) fn row(&self, row: usize) -> impl Iterator<Item = (Var, u32)> + '_ {
        let (s, e) = (self.row_start[row], self.row_start[row + 1]);
        self.col[s..e]
            .iter()
            .zip(&self.coeff[s..e])
            .map(|(&c, &k)| (Var::decode(c), k))
    }

    fn nonzeros(&self) -> usize {
        self.col.len()
    }

    /// A matrix from its row starts, columns and coefficient indices (as
    /// [`Self::parts`] gives them), its row starts checked.
    pub(crate) fn from_parts(
        row_start: Vec<usize>,
        col: Vec<u32>,
        coeff: Vec<u32>,
    ) -> std::result::Result<Csr, String> {
        let ordered = row_start.first() == Some(&0)
            && row_start.windows(2).all(|w| w[0] <= w[1])
            && row_start.last() == Some(&col.len());
        if !ordered || col.len() != coeff.len() {
            return Err("a matrix's row starts do not hold together".into());
        }
        Ok(Csr {
            row_start,
            col,
            coeff,
        })
    }

    /// Row starts, columns (see [`AUX`]) and coefficient-table indices.
    pub(crate) fn parts(&self) -> (&[usize], &[u32], &[u32]) {
        (&self.row_start, &self.col, &self.coeff)
    }

    /// Gives back what growing by doubling over-allocated (near half of a
    /// 2^27-row shape's terms).
    fn shrink(&mut self) {
        self.row_start.shrink_to_fit();
        self.col.shrink_to_fit();
        self.coeff.shrink_to_fit();
    }
}

/// A variable of the recorded shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Var {
    Input(usize),
    Aux(usize),
}

impl Var {
    fn decode(c: u32) -> Var {
        if c & AUX != 0 {
            Var::Aux((c & !AUX) as usize)
        } else {
            Var::Input(c as usize)
        }
    }
}

/// A circuit shape's constraint matrices and densities, captured once.
#[derive(Clone, Debug)]
pub struct RecordedShape {
    pub(crate) num_inputs: usize,
    pub(crate) num_aux: usize,
    /// Rows the circuit itself enforced (input rows excluded).
    pub(crate) num_user_rows: usize,
    pub(crate) a: Csr,
    pub(crate) b: Csr,
    pub(crate) c: Csr,
    pub(crate) coeffs: Vec<Scalar>,
    pub(crate) a_aux_density: Density,
    pub(crate) b_input_density: Density,
    pub(crate) b_aux_density: Density,
    pub(crate) row_names: RowNames,
}

impl RecordedShape {
    /// Runs `circuit` once, recording its matrices. Returns the shape and, when every
    /// allocation had a value, that circuit's assignment (parameter-generation
    /// circuits may have none).
    pub fn record<C: bellpepper_core::Circuit<Scalar>>(
        circuit: C,
    ) -> Result<(RecordedShape, Option<Assignment>)> {
        guard_panics(|| {
            let mut rec = ShapeRecorder::new();
            rec.alloc_input(|| "one", || Ok(Scalar::ONE))?;
            circuit.synthesize(&mut rec)?;
            let num_user_rows = rec.a.rows();
            let n = rec.input.len();
            enforce_input_rows(&mut rec, n);
            let missing = rec.missing_values;
            let (shape, input, aux) = rec.finish(num_user_rows);
            let asg = if missing {
                None
            } else {
                Some(shape.assignment_from_witness(input, aux)?)
            };
            Ok((shape, asg))
        })
    }

    /// Runs `circuit` for its witness only and computes its assignment from the
    /// recorded matrices. A witness whose variable or constraint counts differ from
    /// the recording is refused.
    pub fn synthesize<C: bellpepper_core::Circuit<Scalar>>(
        &self,
        circuit: C,
    ) -> Result<Assignment> {
        let (input, aux) = self.witness_pass(circuit)?;
        self.assignment_from_witness(input, aux)
    }

    /// Runs `circuit` for its witness only and leaves a, b and c pending
    /// ([`Assignment::pending`]): a device holding these matrices computes
    /// them there, and [`Assignment::evaluate`] on the host.
    pub fn witness<C: bellpepper_core::Circuit<Scalar>>(
        self: &Arc<Self>,
        circuit: C,
    ) -> Result<Assignment> {
        let (input, aux) = self.witness_pass(circuit)?;
        self.check_witness_lengths(&input, &aux)?;
        Ok(Assignment {
            a: vec![],
            b: vec![],
            c: vec![],
            input,
            aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            pending: Some(PendingEvaluations(self.clone())),
        })
    }

    fn witness_pass<C: bellpepper_core::Circuit<Scalar>>(
        &self,
        circuit: C,
    ) -> Result<(Vec<Scalar>, Vec<Scalar>)> {
        guard_panics(|| {
            let mut ws = WitnessSystem::new(self.num_inputs, self.num_aux);
            ws.alloc_input(|| "one", || Ok(Scalar::ONE))?;
            circuit.synthesize(&mut ws)?;
            let enforced = ws.enforced();
            if enforced != 0 && enforced != self.num_user_rows {
                return Err(Error::ShapeDrift(format!(
                    "the circuit enforced {enforced} constraints, the recording has {}",
                    self.num_user_rows
                )));
            }
            Ok(ws.into_witness())
        })
    }

    /// Synthesizes many circuits of this shape in parallel.
    pub fn synthesize_batch<C: bellpepper_core::Circuit<Scalar> + Send>(
        &self,
        circuits: Vec<C>,
    ) -> Result<Vec<Assignment>> {
        circuits
            .into_par_iter()
            .map(|c| self.synthesize(c))
            .collect()
    }

    /// a, b, c = A·w, B·w, C·w for a witness of this shape.
    pub fn assignment_from_witness(
        &self,
        input: Vec<Scalar>,
        aux: Vec<Scalar>,
    ) -> Result<Assignment> {
        self.check_witness_lengths(&input, &aux)?;
        let [a, b, c] = self.evaluate(&input, &aux);
        Ok(Assignment {
            a,
            b,
            c,
            input,
            aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
            pending: None,
        })
    }

    fn check_witness_lengths(&self, input: &[Scalar], aux: &[Scalar]) -> Result<()> {
        if input.len() != self.num_inputs || aux.len() != self.num_aux {
            return Err(Error::ShapeDrift(format!(
                "{} inputs and {} aux variables, the recording has {} and {}",
                input.len(),
                aux.len(),
                self.num_inputs,
                self.num_aux
            )));
        }
        Ok(())
    }

    /// A·w, B·w and C·w on the host's cores, for a witness of this shape's
    /// lengths.
    pub(crate) fn evaluate(&self, input: &[Scalar], aux: &[Scalar]) -> [Vec<Scalar>; 3] {
        let (a, (b, c)) = rayon::join(
            || self.spmv(&self.a, input, aux),
            || {
                rayon::join(
                    || self.spmv(&self.b, input, aux),
                    || self.spmv(&self.c, input, aux),
                )
            },
        );
        [a, b, c]
    }

    /// The A, B and C matrices with the coefficient table they index, for a
    /// device to hold.
    pub(crate) fn matrices(&self) -> ([&Csr; 3], &[Scalar]) {
        ([&self.a, &self.b, &self.c], &self.coeffs)
    }

    fn spmv(&self, m: &Csr, input: &[Scalar], aux: &[Scalar]) -> Vec<Scalar> {
        let coeffs = &self.coeffs;
        (0..m.rows())
            .into_par_iter()
            .with_min_len(1024)
            .map(|row| {
                let mut acc = Scalar::ZERO;
                for (var, k) in m.row(row) {
                    let v = match var {
                        Var::Input(i) => input[i],
                        Var::Aux(i) => aux[i],
                    };
                    match k {
                        COEFF_ONE => acc += v,
                        COEFF_MINUS_ONE => acc -= v,
                        _ => acc += v * coeffs[k as usize],
                    }
                }
                acc
            })
            .collect()
    }

    /// What fixes the parameters' lengths, as [`Assignment::shape`] gives it.
    pub fn shape(&self) -> super::Shape {
        super::Shape {
            num_rows: self.num_rows(),
            num_inputs: self.num_inputs,
            num_aux: self.num_aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        }
    }

    /// A shape from its parts (as a shape file holds them), checked: the three
    /// matrices of one row count, every term's variable and coefficient within
    /// their tables, the densities as long as their variables.
    pub(crate) fn from_parts(
        num_inputs: usize,
        num_aux: usize,
        num_user_rows: usize,
        [a, b, c]: [Csr; 3],
        coeffs: Vec<Scalar>,
        [a_aux_density, b_input_density, b_aux_density]: [Density; 3],
        row_names: RowNames,
    ) -> std::result::Result<RecordedShape, String> {
        let rows = a.rows();
        if b.rows() != rows || c.rows() != rows || num_user_rows + num_inputs != rows {
            return Err(format!(
                "matrices of {}, {} and {} rows for {num_user_rows} rows and {num_inputs} inputs",
                a.rows(),
                b.rows(),
                c.rows()
            ));
        }
        let terms_ok = |m: &Csr| {
            m.col.par_iter().all(|&col| {
                let idx = (col & !AUX) as usize;
                if col & AUX != 0 {
                    idx < num_aux
                } else {
                    idx < num_inputs
                }
            }) && m.coeff.par_iter().all(|&k| (k as usize) < coeffs.len())
        };
        if !(terms_ok(&a) && terms_ok(&b) && terms_ok(&c)) {
            return Err("a term names a variable or coefficient past its table".into());
        }
        if a_aux_density.len() != num_aux
            || b_aux_density.len() != num_aux
            || b_input_density.len() != num_inputs
        {
            return Err("densities of other lengths than the variables".into());
        }
        Ok(RecordedShape {
            num_inputs,
            num_aux,
            num_user_rows,
            a,
            b,
            c,
            coeffs,
            a_aux_density,
            b_input_density,
            b_aux_density,
            row_names,
        })
    }

    pub fn num_rows(&self) -> usize {
        self.a.rows()
    }
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }
    pub fn num_aux(&self) -> usize {
        self.num_aux
    }
    /// Distinct coefficients in the matrices (after deduplication).
    pub fn num_coefficients(&self) -> usize {
        self.coeffs.len()
    }
    /// Nonzero terms of A, B and C.
    pub fn nonzeros(&self) -> (usize, usize, usize) {
        (self.a.nonzeros(), self.b.nonzeros(), self.c.nonzeros())
    }
    /// Namespace path of `row`, as the circuit named it.
    pub fn row_name(&self, row: usize) -> Option<String> {
        self.row_names.get(row)
    }
    /// Bytes the shape holds: matrices, coefficients, densities and row names.
    pub fn heap_bytes(&self) -> usize {
        let csr =
            |m: &Csr| m.row_start.capacity() * 8 + (m.col.capacity() + m.coeff.capacity()) * 4;
        let density = |d: &Density| d.heap_bytes();
        csr(&self.a)
            + csr(&self.b)
            + csr(&self.c)
            + self.coeffs.capacity() * std::mem::size_of::<Scalar>()
            + density(&self.a_aux_density)
            + density(&self.b_input_density)
            + density(&self.b_aux_density)
            + self.row_names.heap_bytes()
    }
    pub fn a_aux_density(&self) -> &Density {
        &self.a_aux_density
    }
    pub fn b_input_density(&self) -> &Density {
        &self.b_input_density
    }
    pub fn b_aux_density(&self) -> &Density {
        &self.b_aux_density
    }
}

/// Constraint system that records the matrices (and the values, when present).
pub struct ShapeRecorder {
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    missing_values: bool,
    a: Csr,
    b: Csr,
    c: Csr,
    coeffs: Vec<Scalar>,
    coeff_index: HashMap<[u64; 4], u32>,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    row_names: RowNames,
}

impl ShapeRecorder {
    fn coeff_id(&mut self, coeff: &Scalar) -> u32 {
        let key = blst_fr::from(*coeff).l;
        if let Some(&id) = self.coeff_index.get(&key) {
            return id;
        }
        let id = self.coeffs.len() as u32;
        self.coeffs.push(*coeff);
        self.coeff_index.insert(key, id);
        id
    }

    fn record_lc(
        &mut self,
        lc: &LinearCombination<Scalar>,
        which: usize,
        track_inputs: bool,
        track_aux: bool,
    ) {
        let mut cols = Vec::new();
        for (&i, coeff) in lc.iter_inputs() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let id = self.coeff_id(coeff);
            cols.push((i as u32, id));
            if track_inputs {
                self.b_input_density.set(i);
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let id = self.coeff_id(coeff);
            cols.push((i as u32 | AUX, id));
            if track_aux {
                match which {
                    0 => self.a_aux_density.set(i),
                    _ => self.b_aux_density.set(i),
                }
            }
        }
        let m = match which {
            0 => &mut self.a,
            1 => &mut self.b,
            _ => &mut self.c,
        };
        for (col, id) in cols {
            m.col.push(col);
            m.coeff.push(id);
        }
        m.row_start.push(m.col.len());
    }

    fn finish(mut self, num_user_rows: usize) -> (RecordedShape, Vec<Scalar>, Vec<Scalar>) {
        for m in [&mut self.a, &mut self.b, &mut self.c] {
            m.shrink();
        }
        self.coeffs.shrink_to_fit();
        let shape = RecordedShape {
            num_inputs: self.input.len(),
            num_aux: self.aux.len(),
            num_user_rows,
            a: self.a,
            b: self.b,
            c: self.c,
            coeffs: self.coeffs,
            a_aux_density: self.a_aux_density,
            b_input_density: self.b_input_density,
            b_aux_density: self.b_aux_density,
            row_names: {
                let mut names = self.row_names;
                names.finish();
                names
            },
        };
        (shape, self.input, self.aux)
    }

    fn value(
        &mut self,
        f: impl FnOnce() -> Result<Scalar, SynthesisError>,
    ) -> Result<Scalar, SynthesisError> {
        match f() {
            Ok(v) => Ok(v),
            Err(SynthesisError::AssignmentMissing) => {
                self.missing_values = true;
                Ok(Scalar::ZERO)
            }
            Err(e) => Err(e),
        }
    }
}

impl ConstraintSystem<Scalar> for ShapeRecorder {
    type Root = Self;

    fn new() -> Self {
        let mut rec = ShapeRecorder {
            input: vec![],
            aux: vec![],
            missing_values: false,
            a: Csr::new(),
            b: Csr::new(),
            c: Csr::new(),
            coeffs: vec![],
            coeff_index: HashMap::new(),
            a_aux_density: Density::new(),
            b_input_density: Density::new(),
            b_aux_density: Density::new(),
            row_names: RowNames::default(),
        };
        assert_eq!(rec.coeff_id(&Scalar::ONE), COEFF_ONE);
        assert_eq!(rec.coeff_id(&-Scalar::ONE), COEFF_MINUS_ONE);
        rec
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = self.value(f)?;
        self.aux.push(v);
        self.a_aux_density.push(false);
        self.b_aux_density.push(false);
        Ok(Variable(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let v = self.value(f)?;
        self.input.push(v);
        self.b_input_density.push(false);
        Ok(Variable(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.row_names.push_row(annotation().into());
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        self.record_lc(&a, 0, false, true);
        self.record_lc(&b, 1, true, true);
        self.record_lc(&c, 2, false, false);
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.row_names.push_namespace(name_fn().into());
    }

    fn pop_namespace(&mut self) {
        self.row_names.pop_namespace();
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

//! The scalars of a setup's queries: the QAP's polynomials at τ, evaluated
//! through Lagrange coefficients, laid out for each query. A vector of a
//! scalar a variable is 4 GB at Filecoin's 32 GiB partition, so the
//! evaluations keep as few of them alive as they can: A's and B's are made
//! together (a thread each), B's is kept only over its density before it
//! becomes L's scalars, and C's is added into those rather than made apart.

use ff::Field;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::synthesis::{Csr, RecordedShape, Var};
use crate::Scalar;

/// A query's scalars, each over its variables (inputs first).
pub(super) struct QueryScalars {
    /// A(τ) over A's density.
    pub a: Vec<Scalar>,
    /// B(τ) over B's density.
    pub b: Vec<Scalar>,
    /// β·A(τ) + α·B(τ) + C(τ) of every variable: IC's and L's scalars before
    /// their division by γ and δ.
    pub abc: Vec<Scalar>,
}

/// `out[v] += Σ_row m[row][v] · lagrange[row]`.
fn add_evaluations(out: &mut [Scalar], shape: &RecordedShape, m: &Csr, lagrange: &[Scalar]) {
    let ni = shape.num_inputs();
    for (row, &l) in lagrange.iter().enumerate().take(m.rows()) {
        for (v, k) in m.row(row) {
            let i = match v {
                Var::Input(i) => i,
                Var::Aux(i) => ni + i,
            };
            out[i] += shape.coeffs[k as usize] * l;
        }
    }
}

fn evaluations(shape: &RecordedShape, m: &Csr, lagrange: &[Scalar]) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; shape.num_inputs() + shape.num_aux()];
    add_evaluations(&mut out, shape, m, lagrange);
    out
}

/// The queries' scalars from the Lagrange coefficients of τ (freed here once
/// C is evaluated). At the peak: the coefficients, two vectors a variable, a
/// byte a variable and B's scalars ([`scratch_bytes`]). An aux variable in no
/// polynomial is an error (its L point would be the identity).
pub(super) fn query_scalars(
    shape: &RecordedShape,
    lagrange: Vec<Scalar>,
    alpha: Scalar,
    beta: Scalar,
) -> Result<QueryScalars> {
    let ni = shape.num_inputs();
    let (mut at, bt) = rayon::join(
        || evaluations(shape, &shape.a, &lagrange),
        || evaluations(shape, &shape.b, &lagrange),
    );
    // Where A and B are both zero, β·A + α·B + C is C alone: zero there, after
    // C is added, means the variable is in no polynomial.
    let in_neither: Vec<bool> = at
        .par_iter()
        .zip(&bt)
        .map(|(a, b)| bool::from(a.is_zero()) && bool::from(b.is_zero()))
        .collect();
    let b: Vec<Scalar> = shape
        .b_input_density()
        .ones()
        .chain(shape.b_aux_density().ones().map(|k| ni + k))
        .map(|v| bt[v])
        .collect();
    let mut abc = bt;
    abc.par_iter_mut()
        .zip(&at)
        .for_each(|(x, a)| *x = beta * a + alpha * *x);
    let a_aux = shape.a_aux_density();
    let mut v = 0;
    at.retain(|_| {
        let keep = v < ni || a_aux.get(v - ni);
        v += 1;
        keep
    });
    add_evaluations(&mut abc, shape, &shape.c, &lagrange);
    drop(lagrange);
    if let Some(k) = (0..shape.num_aux())
        .into_par_iter()
        .find_first(|&k| in_neither[ni + k] && bool::from(abc[ni + k].is_zero()))
    {
        return Err(Error::UnconstrainedVariable(format!("aux {k}")));
    }
    Ok(QueryScalars { a: at, b, abc })
}

/// Host bytes [`query_scalars`] holds at its peak besides the Lagrange
/// coefficients it is given.
pub(super) fn scratch_bytes(shape: &RecordedShape) -> usize {
    let scalar = std::mem::size_of::<Scalar>();
    let vars = shape.num_inputs() + shape.num_aux();
    let b = shape.b_input_density().count() + shape.b_aux_density().count();
    2 * vars * scalar + vars + b * scalar
}

//! The direct-mode constraint system: bellperson's `ProvingAssignment`, same
//! semantics, with optional namespace tracking for diagnostics.

use std::slice;
use std::sync::atomic::{AtomicUsize, Ordering};

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::Field;

use super::Assignment;
use crate::density::Density;
use crate::Scalar;

/// Evaluates constraints as the circuit emits them.
pub struct ProvingSystem {
    asg: Assignment,
    /// Present when namespaces are tracked: the open namespaces and each row's path.
    names: Option<Names>,
}

#[derive(Default)]
struct Names {
    stack: Vec<String>,
    /// One path per row: `rows.len() == asg.a.len()` always.
    rows: Vec<String>,
    /// Systems merged by `extend` so far, which tells their rows apart.
    extended: usize,
}

/// Named syntheses in progress, in the whole process.
static NAMED_SYNTHESES: AtomicUsize = AtomicUsize::new(0);

/// Marks a named synthesis in progress for as long as it lives (through an error or a
/// panic too).
pub(crate) struct NamedSynthesis(());

impl NamedSynthesis {
    pub(crate) fn begin() -> Self {
        NAMED_SYNTHESES.fetch_add(1, Ordering::SeqCst);
        NamedSynthesis(())
    }
}

impl Drop for NamedSynthesis {
    fn drop(&mut self) {
        NAMED_SYNTHESES.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ProvingSystem {
    pub fn with_names() -> Self {
        ProvingSystem {
            names: Some(Names::default()),
            ..Self::without_names()
        }
    }

    /// A system that never tracks names, whatever else runs: what proving uses.
    pub(crate) fn without_names() -> Self {
        ProvingSystem {
            asg: Assignment {
                a: vec![],
                b: vec![],
                c: vec![],
                input: vec![],
                aux: vec![],
                a_aux_density: Density::new(),
                b_input_density: Density::new(),
                b_aux_density: Density::new(),
                pending: None,
            },
            names: None,
        }
    }

    pub fn num_inputs(&self) -> usize {
        self.asg.input.len()
    }

    /// Namespace path of each row (empty unless built [`with_names`](Self::with_names)).
    pub fn row_names(&self) -> &[String] {
        self.names.as_ref().map(|n| &n.rows[..]).unwrap_or(&[])
    }

    pub fn into_assignment(self) -> Assignment {
        self.asg
    }
}

/// ⟨lc, w⟩, marking in the densities every variable whose merged coefficient is
/// nonzero (bellperson's `eval_with_trackers`).
#[inline]
pub(crate) fn eval_tracked(
    lc: &LinearCombination<Scalar>,
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
    input: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += if *coeff == Scalar::ONE {
            input[i]
        } else {
            input[i] * coeff
        };
        if let Some(d) = input_density.as_deref_mut() {
            d.set(i);
        }
    }
    for (&i, coeff) in lc.iter_aux() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += if *coeff == Scalar::ONE {
            aux[i]
        } else {
            aux[i] * coeff
        };
        if let Some(d) = aux_density.as_deref_mut() {
            d.set(i);
        }
    }
    acc
}

impl ConstraintSystem<Scalar> for ProvingSystem {
    type Root = Self;

    /// Circuits such as FallbackPoSt make sub-systems with `CS::new()` on rayon threads
    /// and `extend` them, so these track names while any named synthesis runs (an
    /// unnamed synthesis running meanwhile tracks names it drops, a cost accepted for
    /// a diagnosis).
    fn new() -> Self {
        if NAMED_SYNTHESES.load(Ordering::SeqCst) > 0 {
            Self::with_names()
        } else {
            Self::without_names()
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.asg.aux.push(f()?);
        self.asg.a_aux_density.push(false);
        self.asg.b_aux_density.push(false);
        Ok(Variable(Index::Aux(self.asg.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.asg.input.push(f()?);
        self.asg.b_input_density.push(false);
        Ok(Variable(Index::Input(self.asg.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        if let Some(names) = &mut self.names {
            let path = super::row_path(&names.stack, annotation().into());
            names.rows.push(path);
        }
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        let asg = &mut self.asg;
        // Inputs are always dense in A (the input rows), so A tracks aux only.
        let va = eval_tracked(&a, None, Some(&mut asg.a_aux_density), &asg.input, &asg.aux);
        let vb = eval_tracked(
            &b,
            Some(&mut asg.b_input_density),
            Some(&mut asg.b_aux_density),
            &asg.input,
            &asg.aux,
        );
        let vc = eval_tracked(&c, None, None, &asg.input, &asg.aux);
        asg.a.push(va);
        asg.b.push(vb);
        asg.c.push(vc);
        if asg.a.len().is_multiple_of(super::progress::REPORT_EVERY) {
            let values = 3 * asg.a.len() + asg.aux.len() + asg.input.len();
            super::progress::report(values * std::mem::size_of::<Scalar>());
        }
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        if let Some(names) = &mut self.names {
            names.stack.push(name_fn().into());
        }
    }

    fn pop_namespace(&mut self) {
        if let Some(names) = &mut self.names {
            names.stack.pop();
        }
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_extensible() -> bool {
        true
    }

    /// bellperson's semantics: `other` was synthesized into a fresh system whose input 0
    /// is a temporary ONE; it is skipped and its density bit merged.
    fn extend(&mut self, other: &Self) {
        let asg = &mut self.asg;
        asg.a_aux_density.extend(&other.asg.a_aux_density, false);
        asg.b_input_density.extend(&other.asg.b_input_density, true);
        asg.b_aux_density.extend(&other.asg.b_aux_density, false);
        asg.a.extend_from_slice(&other.asg.a);
        asg.b.extend_from_slice(&other.asg.b);
        asg.c.extend_from_slice(&other.asg.c);
        asg.input
            .extend_from_slice(other.asg.input.get(1..).unwrap_or(&[]));
        asg.aux.extend_from_slice(&other.asg.aux);
        if let Some(mine) = &mut self.names {
            // `extend_{k}` tells merged systems apart: their own namespaces may repeat.
            let prefix = super::row_path(&mine.stack, format!("extend_{}", mine.extended));
            mine.extended += 1;
            match &other.names {
                Some(theirs) => mine.rows.extend(
                    theirs
                        .rows
                        .iter()
                        .map(|r| super::row_path(slice::from_ref(&prefix), r.clone())),
                ),
                // Placeholders keep one name per row, so later rows keep their own names.
                None => mine.rows.extend(
                    (0..other.asg.a.len()).map(|j| format!("{prefix}/row {j} (name not tracked)")),
                ),
            }
            debug_assert_eq!(mine.rows.len(), self.asg.a.len());
        }
    }
}

//! Faults for the command line's own tests, injected through the environment
//! variable `CROSSGROTH_TEST_FAULT` (never set in normal use):
//!
//! - `unsatisfied:<k>`: the k-th private allocation of every proved circuit gets a
//!   wrong value, so that a constraint row is unsatisfied;
//! - `panic`: the command panics once it has parsed its arguments;
//! - `slow-write`: output files are written 4 KiB at a time, 2 ms apart, so that a
//!   test can interrupt a write.

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use crossgroth::circuits::{BuiltinCircuit, CircuitSpec};
use crossgroth::Scalar;
use ff::Field;

const VAR: &str = "CROSSGROTH_TEST_FAULT";

fn fault() -> Option<String> {
    std::env::var(VAR).ok().filter(|v| !v.is_empty())
}

/// Panics when the `panic` fault is set.
pub fn maybe_panic() {
    if fault().as_deref() == Some("panic") {
        panic!("{VAR}=panic");
    }
}

/// Whether output files are to be written slowly.
pub fn slow_writes() -> bool {
    fault().as_deref() == Some("slow-write")
}

/// A writer that writes 4 KiB at a time, 2 ms apart.
pub struct Slow<W>(pub W);

impl<W: std::io::Write> std::io::Write for Slow<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::thread::sleep(std::time::Duration::from_millis(2));
        self.0.write(&buf[..buf.len().min(4096)])
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A built-in circuit, with the `unsatisfied` fault applied when it is set.
#[derive(Clone, Debug)]
pub struct CliCircuit {
    inner: BuiltinCircuit,
    tamper_at: Option<usize>,
}

/// `spec`'s instance for witness seed `seed`.
pub fn instance(spec: &CircuitSpec, seed: u64) -> CliCircuit {
    let tamper_at = fault()
        .as_deref()
        .and_then(|f| f.strip_prefix("unsatisfied:"))
        .and_then(|k| k.parse().ok());
    CliCircuit {
        inner: spec.instance(seed),
        tamper_at,
    }
}

impl CliCircuit {
    pub fn public_inputs(&self) -> Vec<Scalar> {
        self.inner.public_inputs()
    }
}

impl Circuit<Scalar> for CliCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self.tamper_at {
            None => self.inner.synthesize(cs),
            Some(at) => self.inner.synthesize(&mut Tamper { cs, count: 0, at }),
        }
    }
}

/// Forwards everything to `cs`, adding one to the value of allocation `at`.
struct Tamper<'a, CS> {
    cs: &'a mut CS,
    count: usize,
    at: usize,
}

impl<CS: ConstraintSystem<Scalar>> ConstraintSystem<Scalar> for Tamper<'_, CS> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let hit = self.count == self.at;
        self.count += 1;
        self.cs.alloc(annotation, move || {
            f().map(|v| if hit { v + Scalar::ONE } else { v })
        })
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.cs.alloc_input(annotation, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.cs.enforce(annotation, a, b, c)
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        self.cs.get_root().push_namespace(name_fn)
    }

    fn pop_namespace(&mut self) {
        self.cs.get_root().pop_namespace()
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

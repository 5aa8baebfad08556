//! A proof ready for the engine: its parameter set, its partitions' synthesis and
//! the verifier its output must pass. Circuit types differ per kind and sector
//! size; a plan hides them behind boxed closures.

use std::sync::Arc;

use crossgroth::engine::{recording_estimate, SetLease, Synthesizer};
use crossgroth::synthesis::{synthesize, RecordedShape};
use crossgroth::{Circuit, Scalar};

use crate::error::{FilecoinError, Result};
use crate::params::CircuitParams;

type MakeUnits = Box<dyn FnOnce(Option<&SetLease>) -> Result<Units> + Send>;
type Verify = Box<dyn FnOnce(&[u8]) -> Result<bool> + Send>;

pub(crate) struct Plan {
    pub params: CircuitParams,
    pub partitions: usize,
    pub kind: &'static str,
    /// Whether proving from a recorded shape beats direct synthesis for this kind.
    pub recording_pays: bool,
    units: Option<MakeUnits>,
    verify: Option<Verify>,
}

/// The partitions' synthesis functions, and the shape they follow when recorded.
pub(crate) struct Units {
    pub synthesizers: Vec<Synthesizer>,
    pub shape: Option<Arc<RecordedShape>>,
    /// True when this call recorded the shape (the circuit's first proof).
    pub recorded_now: bool,
}

impl Plan {
    pub fn new<C: Circuit<Scalar> + Send + 'static>(
        params: CircuitParams,
        circuits: Vec<C>,
    ) -> Self {
        let partitions = circuits.len();
        let units = Box::new(move |recorded: Option<&SetLease>| {
            if let Some(lease) = recorded {
                recorded_units(lease, circuits)
            } else {
                Ok(Units {
                    synthesizers: circuits
                        .into_iter()
                        .map(|c| Box::new(move || synthesize(c)) as Synthesizer)
                        .collect(),
                    shape: None,
                    recorded_now: false,
                })
            }
        });
        Plan {
            params,
            partitions,
            kind: "",
            recording_pays: true,
            units: Some(units),
            verify: None,
        }
    }

    pub fn with_verifier(
        mut self,
        kind: &'static str,
        verify: impl FnOnce(&[u8]) -> Result<bool> + Send + 'static,
    ) -> Self {
        self.kind = kind;
        self.verify = Some(Box::new(verify));
        self
    }

    /// Marks a kind whose witness pass costs as much as its direct synthesis.
    pub fn recording_does_not_pay(mut self) -> Self {
        self.recording_pays = false;
        self
    }

    /// The partitions' synthesis: from the set's recorded shape (recorded now
    /// if it has none) where `recorded` holds the set's lease, direct otherwise.
    pub fn units(&mut self, recorded: Option<&SetLease>) -> Result<Units> {
        let make = self.units.take().expect("a plan's units are made once");
        make(recorded)
    }

    /// Runs filecoin-proofs' verifier on the output; an output it refuses is an error.
    pub fn verify(&mut self, bytes: &[u8]) -> Result<()> {
        let verify = self.verify.take().expect("a plan is verified once");
        match verify(bytes)? {
            true => Ok(()),
            false => Err(FilecoinError::Rejected(self.kind)),
        }
    }
}

/// The partitions' synthesis from the set's recorded shape: the set's first
/// proof records it from its first partition (whose assignment comes with it),
/// later ones run every partition for the witness only.
fn recorded_units<C: Circuit<Scalar> + Send + 'static>(
    lease: &SetLease,
    circuits: Vec<C>,
) -> Result<Units> {
    let witness_only = |shape: &Arc<RecordedShape>, c: C| {
        let shape = shape.clone();
        Box::new(move || shape.witness(c)) as Synthesizer
    };
    let mut circuits = circuits.into_iter();
    let mut first = Some(
        circuits
            .next()
            .ok_or_else(|| FilecoinError::input("no partitions"))?,
    );
    let estimate = recording_estimate(lease.params());
    let (shape, recorded) = lease
        .shape_or_record(estimate, || {
            let c = first.take().expect("recorded once");
            let (shape, asg) = RecordedShape::record(c)?;
            // A shape that does not fit the parameters is never kept: every
            // later proof of the set would follow it.
            lease.params().check_shape(&shape.shape())?;
            Ok((shape, asg))
        })
        .map_err(FilecoinError::Proving)?;
    let recorded_now = recorded.is_some();
    let mut synthesizers = Vec::with_capacity(circuits.len() + 1);
    match (recorded, first) {
        (Some(asg), _) => {
            let asg = asg.ok_or_else(|| {
                FilecoinError::input("the circuit left a witness value unassigned")
            })?;
            synthesizers.push(Box::new(move || Ok(asg)) as Synthesizer);
        }
        (None, Some(c)) => synthesizers.push(witness_only(&shape, c)),
        (None, None) => unreachable!("the first circuit is either recorded or still here"),
    }
    synthesizers.extend(circuits.map(|c| witness_only(&shape, c)));
    Ok(Units {
        synthesizers,
        shape: Some(shape),
        recorded_now,
    })
}

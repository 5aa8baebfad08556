//! A proof ready for the engine: its parameter set, its partitions' synthesis and
//! the verifier its output must pass. Circuit types differ per kind and sector
//! size; a plan hides them behind boxed closures.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crossgroth::engine::Synthesizer;
use crossgroth::synthesis::{synthesize, RecordedShape};
use crossgroth::{Circuit, Scalar};

use crate::error::{FilecoinError, Result};
use crate::params::CircuitParams;

type MakeUnits = Box<dyn FnOnce(&ShapeBook, bool) -> Result<Units> + Send>;
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
        let key = params.cache_id.clone();
        let units = Box::new(move |book: &ShapeBook, recorded: bool| {
            if recorded {
                book.units(&key, circuits)
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

    pub fn units(&mut self, book: &ShapeBook, recorded: bool) -> Result<Units> {
        let make = self.units.take().expect("a plan's units are made once");
        make(book, recorded)
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

/// Recorded shapes, one per circuit (by parameter cache id): the first proof of a
/// circuit records its constraint matrices, later ones run it for the witness only.
#[derive(Default)]
pub struct ShapeBook {
    shapes: Mutex<HashMap<String, Arc<RecordedShape>>>,
}

impl ShapeBook {
    pub fn get(&self, cache_id: &str) -> Option<Arc<RecordedShape>> {
        self.shapes.lock().unwrap().get(cache_id).cloned()
    }

    fn units<C: Circuit<Scalar> + Send + 'static>(
        &self,
        key: &str,
        circuits: Vec<C>,
    ) -> Result<Units> {
        let witness_only = |shape: &Arc<RecordedShape>, c: C| {
            let shape = shape.clone();
            Box::new(move || shape.witness(c)) as Synthesizer
        };
        if let Some(shape) = self.get(key) {
            let synthesizers = circuits
                .into_iter()
                .map(|c| witness_only(&shape, c))
                .collect();
            return Ok(Units {
                synthesizers,
                shape: Some(shape),
                recorded_now: false,
            });
        }
        let mut circuits = circuits.into_iter();
        let first = circuits
            .next()
            .ok_or_else(|| FilecoinError::input("no partitions"))?;
        let (shape, asg) = RecordedShape::record(first).map_err(FilecoinError::Proving)?;
        let asg =
            asg.ok_or_else(|| FilecoinError::input("the circuit left a witness value unassigned"))?;
        let shape = Arc::new(shape);
        self.shapes
            .lock()
            .unwrap()
            .insert(key.to_string(), shape.clone());
        let mut synthesizers = vec![Box::new(move || Ok(asg)) as Synthesizer];
        synthesizers.extend(circuits.map(|c| witness_only(&shape, c)));
        Ok(Units {
            synthesizers,
            shape: Some(shape),
            recorded_now: true,
        })
    }
}

//! A proof ready for the engine: its parameter set, its partitions' synthesis and
//! the verifier its output must pass. Circuit types differ per kind and sector
//! size; a plan hides them behind boxed closures.

use std::path::PathBuf;
use std::sync::Arc;

use crossgroth::engine::{recording_estimate, SetLease, Synthesizer};
use crossgroth::synthesis::{read_shape, synthesize, write_shape, RecordedShape, ShapeFileError};
use crossgroth::{Circuit, Scalar};

use crate::error::{FilecoinError, Result};
use crate::params::CircuitParams;

type MakeUnits = Box<dyn FnOnce(Option<&SetLease>, Option<ShapeFile>) -> Result<Units> + Send>;

/// Where a set's recorded shape is kept on disk, and the key it is kept under.
pub(crate) struct ShapeFile {
    pub path: PathBuf,
    pub key: String,
}

impl ShapeFile {
    pub(crate) fn of(params: &CircuitParams, dir: &std::path::Path) -> ShapeFile {
        ShapeFile {
            path: dir.join(format!("{}.shape", params.cache_id)),
            // Everything that decides the shape besides the file's own format.
            key: format!(
                "{} {} crossgroth-filecoin {} storage-proofs-core 19.1.0",
                params.label(),
                params.params_file(),
                env!("CARGO_PKG_VERSION")
            ),
        }
    }
}
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
        let units = Box::new(
            move |recorded: Option<&SetLease>, file: Option<ShapeFile>| {
                if let Some(lease) = recorded {
                    recorded_units(lease, circuits, file)
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
            },
        );
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

    /// The partitions' synthesis: from the set's recorded shape (read from
    /// `shapes_dir` where it was kept, else recorded now if the set has none)
    /// where `recorded` holds the set's lease, direct otherwise.
    pub fn units(
        &mut self,
        recorded: Option<&SetLease>,
        shapes_dir: Option<&std::path::Path>,
    ) -> Result<Units> {
        let make = self.units.take().expect("a plan's units are made once");
        make(
            recorded,
            shapes_dir.map(|dir| ShapeFile::of(&self.params, dir)),
        )
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
    file: Option<ShapeFile>,
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
    let mut read_from_disk = false;
    let (shape, recorded) = lease
        .shape_or_record(estimate, || {
            if let Some(shape) = file.as_ref().and_then(|f| kept_shape(f, lease, estimate)) {
                read_from_disk = true;
                return Ok((shape, None));
            }
            let c = first.take().expect("recorded once");
            let (shape, asg) = RecordedShape::record(c)?;
            // A shape that does not fit the parameters is never kept: every
            // later proof of the set would follow it.
            lease.params().check_shape(&shape.shape())?;
            if let Some(f) = &file {
                let t = std::time::Instant::now();
                match write_shape(&f.path, &f.key, &shape) {
                    Ok(()) => log::info!(
                        "kept the recorded shape in {} ({:.1} s)",
                        f.path.display(),
                        t.elapsed().as_secs_f64()
                    ),
                    Err(e) => log::warn!("{e}: the shape is kept in memory only"),
                }
            }
            Ok((shape, asg))
        })
        .map_err(FilecoinError::Proving)?;
    // A shape read from disk comes without an assignment: every partition,
    // the first included, runs for its witness.
    let recorded = recorded.filter(|_| !read_from_disk);
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

/// The shape kept in `file`, if it is there, whole, of this key and fits the
/// set's parameters; anything else is said and the shape recorded again.
fn kept_shape(file: &ShapeFile, lease: &SetLease, max_bytes: usize) -> Option<RecordedShape> {
    read_kept(file, max_bytes as u64).and_then(|s| fits(s, file, lease.params()))
}

/// The shape kept in `file` if it is there, whole, of this key and within
/// `max_bytes`; anything else but its absence is said.
pub(crate) fn read_kept(file: &ShapeFile, max_bytes: u64) -> Option<RecordedShape> {
    let t = std::time::Instant::now();
    match read_shape(&file.path, &file.key, max_bytes) {
        Ok(shape) => {
            log::info!(
                "read the recorded shape from {} in {:.1} s",
                file.path.display(),
                t.elapsed().as_secs_f64()
            );
            Some(shape)
        }
        Err(ShapeFileError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            None
        }
        Err(e) => {
            log::warn!("{e}: recording it again");
            None
        }
    }
}

/// `shape` if it fits `params` (its matrices their lengths, its size what a
/// recording of them may take); otherwise said, and None.
pub(crate) fn fits(
    shape: RecordedShape,
    file: &ShapeFile,
    params: &crossgroth::groth16::Parameters,
) -> Option<RecordedShape> {
    let max = recording_estimate(params);
    let checked = params.check_shape(&shape.shape()).and_then(|()| {
        if shape.heap_bytes() > max {
            Err(crossgroth::Error::Invalid(format!(
                "{} bytes, over the {max} bytes a shape of this circuit may take",
                shape.heap_bytes()
            )))
        } else {
            Ok(())
        }
    });
    match checked {
        Ok(()) => Some(shape),
        Err(e) => {
            log::warn!("{}: {e}: recording it again", file.path.display());
            None
        }
    }
}

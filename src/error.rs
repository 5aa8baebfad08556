//! One error type for the library. Every variant names what is wrong so that the CLI
//! can print it as one line; nothing in crossgroth panics on bad input.
//!
//! Each variant's message says its cause itself, so none also returns it as a
//! `source()`: printed with its chain (anyhow's `{:#}`), an error says each cause once.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written; the message is the OS's.
    #[error("{}: {}", path.display(), os_message(error))]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },

    #[error("i/o error: {}", os_message(.0))]
    Stream(std::io::Error),

    #[error("parameter file: {0}")]
    ParamsFormat(String),

    #[error("parameters do not match the circuit: {vector} has {found} elements, the circuit needs {expected}")]
    ParamsMismatch {
        vector: &'static str,
        expected: usize,
        found: usize,
    },

    #[error("verifying key: {0}")]
    VerifyingKey(String),

    #[error("proof: {0}")]
    ProofFormat(String),

    #[error("public inputs: the verifying key is for a circuit with {expected}, got {found}", expected = inputs(*expected))]
    PublicInputCount { expected: usize, found: usize },

    #[error("public input {index} is not a canonical scalar (it is not below the field modulus)")]
    NonCanonicalScalar { index: usize },

    #[error("synthesis failed: {0}")]
    Synthesis(bellpepper_core::SynthesisError),

    #[error("circuit panicked during synthesis: {0}")]
    CircuitPanicked(String),

    /// `circuit` is the circuit's place in its batch or job, where there are several.
    #[error("unsatisfied constraint: {}row {row}{} has a·b ≠ c", circuit.map(|k| format!("circuit {k} of the batch, ")).unwrap_or_default(), path.as_ref().map(|p| format!(" ({p})")).unwrap_or_default())]
    Unsatisfied {
        row: usize,
        path: Option<String>,
        circuit: Option<usize>,
    },

    #[error("the circuit's {rows} constraint rows need a domain of 2^{log} elements; BLS12-381's scalar field supports at most 2^31")]
    DomainTooLarge { rows: usize, log: u32 },

    #[error("variable {0} is unconstrained: it appears in no constraint, so its L-query base would be the identity")]
    UnconstrainedVariable(String),

    #[error("batch element {index} has a different shape from element 0: {what}")]
    BatchShapeMismatch { index: usize, what: String },

    #[error("empty batch: at least one circuit is needed")]
    EmptyBatch,

    #[error("the witness does not fit the recorded shape: {0}")]
    ShapeDrift(String),

    #[error("the verifying key's delta is the identity (a subverted setup)")]
    IdentityDelta,

    /// A prover needed the host copy of a parameter query that placement freed
    /// (`PlacementConfig::release_host_copies`), typically on a device rebuilt
    /// after a fault; loading the parameters again brings it back.
    #[error("the host copy of the parameters' {0} query was released once the devices held it; load the parameters again to use them without those devices")]
    HostCopyReleased(&'static str),

    #[error("{backend} backend: {message}")]
    Backend {
        backend: &'static str,
        message: String,
    },

    /// The device failed in a way that leaves it unusable for the rest of the
    /// process (a CUDA kernel fault) and no new context could be opened: work on
    /// it fails until the process restarts. The engine takes such a device out
    /// of service at once.
    #[error("{backend} backend: device lost: {message}")]
    DeviceLost {
        backend: &'static str,
        message: String,
    },

    #[error("{backend} backend unavailable: {reason}")]
    BackendUnavailable {
        backend: &'static str,
        reason: String,
    },

    #[error("unknown circuit spec '{0}' (expected one of: cubic, sha256:<bytes>, chain:<log2 rows>, multi:<inputs>)")]
    UnknownCircuit(String),

    #[error("job {0} was cancelled")]
    Cancelled(String),

    #[error("job {id}: one circuit needs about {needed} bytes beside the {held} bytes the process holds without jobs (parameters, shapes), more than the memory budget of {budget} bytes")]
    JobTooLarge {
        id: String,
        needed: usize,
        held: usize,
        budget: usize,
    },

    #[error("job id {0} is already in flight")]
    DuplicateJob(String),

    #[error("{0}")]
    Invalid(String),
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Stream(e)
    }
}

impl From<bellpepper_core::SynthesisError> for Error {
    fn from(e: bellpepper_core::SynthesisError) -> Self {
        Error::Synthesis(e)
    }
}

/// An OS error's message without Rust's " (os error N)" suffix: "No such file or
/// directory", not "No such file or directory (os error 2)".
pub fn os_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

fn inputs(n: usize) -> String {
    format!("{n} public input{}", if n == 1 { "" } else { "s" })
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

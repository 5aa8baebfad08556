//! What can go wrong with a Filecoin proof, each said in one line that names the
//! input, file or partition at fault.

use std::path::PathBuf;

pub type Result<T> = std::result::Result<T, FilecoinError>;

#[derive(Debug, thiserror::Error)]
pub enum FilecoinError {
    /// The request itself is malformed or contradicts itself.
    #[error("{0}")]
    Input(String),

    #[error("parameter file {}: {reason}", path.display())]
    Params { path: PathBuf, reason: String },

    /// A partition's witness does not satisfy its circuit: the vanilla proofs do not
    /// prove what the public inputs claim. Nothing was proved.
    #[error("partition {partition} of {partitions}: the witness fails constraint row {row}{}: the vanilla proofs do not match the public inputs", name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default())]
    Unsatisfied {
        partition: usize,
        partitions: usize,
        row: usize,
        name: Option<String>,
    },

    #[error("proving failed: {0}")]
    Proving(crossgroth::Error),

    /// filecoin-proofs refused the inputs or the output (its own message follows).
    #[error("{what}: {message}")]
    Filecoin { what: &'static str, message: String },

    /// The output was proved but filecoin-proofs' verifier does not accept it; it is
    /// never returned.
    #[error("the {0} proof did not pass filecoin-proofs' verifier; it was not returned")]
    Rejected(&'static str),

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl FilecoinError {
    pub(crate) fn input(message: impl Into<String>) -> Self {
        FilecoinError::Input(message.into())
    }

    /// filecoin-proofs' error chain on one line.
    pub(crate) fn filecoin(what: &'static str, e: anyhow::Error) -> Self {
        let message = format!("{e:#}").replace('\n', " ");
        FilecoinError::Filecoin { what, message }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        FilecoinError::Io {
            path: path.into(),
            source,
        }
    }
}

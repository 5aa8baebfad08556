//! The public-inputs file written next to a proof.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use crossgroth::circuits::CircuitSpec;
use crossgroth::{Error, Scalar};
use serde::{Deserialize, Serialize};

/// `<proof>.inputs.json`
pub fn inputs_path(proof: &Path) -> PathBuf {
    let mut s = proof.as_os_str().to_owned();
    s.push(".inputs.json");
    PathBuf::from(s)
}

/// Public inputs as 32-byte little-endian hex strings (ONE excluded).
#[derive(Serialize, Deserialize)]
pub struct PublicInputsFile {
    pub circuit: String,
    /// True when r and s came from a seed: reproducible, not for production.
    pub seeded: bool,
    pub public_inputs: Vec<String>,
}

impl PublicInputsFile {
    pub fn new(circuit: &CircuitSpec, inputs: &[Scalar], seeded: bool) -> Self {
        PublicInputsFile {
            circuit: circuit.to_string(),
            seeded,
            public_inputs: inputs
                .iter()
                .map(|x| hex::encode(x.to_bytes_le()))
                .collect(),
        }
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text).map_err(|e| Error::io(path, e))?;
        Ok(())
    }

    /// Reads and decodes the inputs, refusing any that is not a canonical scalar.
    pub fn read(path: &Path) -> Result<Vec<Scalar>> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let file: PublicInputsFile = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a public-inputs file", path.display()))?;
        file.public_inputs
            .iter()
            .enumerate()
            .map(|(index, h)| {
                let bytes: [u8; 32] = hex::decode(h)
                    .ok()
                    .and_then(|b| b.try_into().ok())
                    .with_context(|| format!("public input {index} is not 64 hex digits"))?;
                Option::<Scalar>::from(Scalar::from_bytes_le(&bytes))
                    .ok_or_else(|| Error::NonCanonicalScalar { index }.into())
            })
            .collect()
    }
}

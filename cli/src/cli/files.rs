//! The public-inputs file written next to a proof.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
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

    pub fn write_to(&self, w: &mut dyn Write) -> Result<()> {
        serde_json::to_writer_pretty(&mut *w, self)?;
        w.write_all(b"\n")?;
        Ok(())
    }

    /// Reads and decodes the inputs, refusing any that is not a canonical scalar;
    /// with them, the circuit the file says they are for.
    pub fn read_with_circuit(path: &Path) -> Result<(Vec<Scalar>, Option<String>)> {
        let text = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        // serde's message quotes the offending value in full; main's one-line
        // report cuts every quoted value to a few dozen characters.
        let file: PublicInputsFile = serde_json::from_slice(&text)
            .map_err(|e| anyhow!("{} is not a public-inputs file: {e}", path.display()))?;
        let inputs = file
            .public_inputs
            .iter()
            .enumerate()
            .map(|(index, h)| {
                let bytes: [u8; 32] = hex::decode(h)
                    .ok()
                    .and_then(|b| b.try_into().ok())
                    .with_context(|| {
                        format!(
                            "{}: public input {index} is not 64 hex digits",
                            path.display()
                        )
                    })?;
                Option::<Scalar>::from(Scalar::from_bytes_le(&bytes))
                    .ok_or_else(|| Error::NonCanonicalScalar { index }.into())
            })
            .collect::<Result<Vec<_>>>()?;
        let circuit = Some(crate::abbreviate(&file.circuit, 40)).filter(|c| !c.is_empty());
        Ok((inputs, circuit))
    }
}

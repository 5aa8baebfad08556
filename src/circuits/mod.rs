//! Built-in circuits for demos, tests and benchmarks, chosen by a short spec string:
//!
//! | spec | circuit |
//! |---|---|
//! | `cubic` | x³ + x + 5 = out, out public |
//! | `sha256:N` | SHA-256 of an N-byte preimage (bellpepper's gadget), digest public |
//! | `chain:K` | a squaring chain whose rows, input rows included, fill 2^K exactly |
//! | `multi:N` | N public inputs, with aux variables missing from the A and B densities |
//!
//! Witness values are derived from a seed, so the same spec and seed always give the
//! same assignment.

mod chain;
mod cubic;
mod multi;
mod sha256;

pub use chain::SquaringChain;
pub use cubic::Cubic;
pub use multi::MultiInput;
pub use sha256::Sha256Preimage;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};

use crate::error::{Error, Result};
use crate::Scalar;

/// A parsed circuit spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitSpec {
    Cubic,
    Sha256 { bytes: usize },
    Chain { log_rows: u32 },
    Multi { inputs: usize },
}

impl std::str::FromStr for CircuitSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::UnknownCircuit(s.to_string());
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let num =
            |a: Option<&str>| -> Result<usize> { a.ok_or_else(bad)?.parse().map_err(|_| bad()) };
        Ok(match name {
            "cubic" if arg.is_none() => CircuitSpec::Cubic,
            "sha256" => CircuitSpec::Sha256 { bytes: num(arg)? },
            "chain" => {
                let log = num(arg)?;
                if !(2..=31).contains(&log) {
                    return Err(Error::Invalid(format!(
                        "chain:{log}: the chain's size must be between 2^2 and 2^31 rows"
                    )));
                }
                CircuitSpec::Chain {
                    log_rows: log as u32,
                }
            }
            "multi" => {
                let n = num(arg)?;
                if n == 0 {
                    return Err(Error::Invalid(
                        "multi:0: at least one public input is needed".into(),
                    ));
                }
                CircuitSpec::Multi { inputs: n }
            }
            _ => return Err(bad()),
        })
    }
}

impl std::fmt::Display for CircuitSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CircuitSpec::Cubic => write!(f, "cubic"),
            CircuitSpec::Sha256 { bytes } => write!(f, "sha256:{bytes}"),
            CircuitSpec::Chain { log_rows } => write!(f, "chain:{log_rows}"),
            CircuitSpec::Multi { inputs } => write!(f, "multi:{inputs}"),
        }
    }
}

impl CircuitSpec {
    /// An instance with witness values derived from `seed`.
    pub fn instance(&self, seed: u64) -> BuiltinCircuit {
        match *self {
            CircuitSpec::Cubic => BuiltinCircuit::Cubic(Cubic::from_seed(seed)),
            CircuitSpec::Sha256 { bytes } => {
                BuiltinCircuit::Sha256(Sha256Preimage::from_seed(bytes, seed))
            }
            CircuitSpec::Chain { log_rows } => {
                BuiltinCircuit::Chain(SquaringChain::from_seed(log_rows, seed))
            }
            CircuitSpec::Multi { inputs } => {
                BuiltinCircuit::Multi(MultiInput::from_seed(inputs, seed))
            }
        }
    }

    /// An instance without values, as parameter generation sees it.
    pub fn blank(&self) -> BuiltinCircuit {
        let mut c = self.instance(0);
        c.clear_values();
        c
    }
}

/// Any built-in circuit.
#[derive(Clone, Debug)]
pub enum BuiltinCircuit {
    Cubic(Cubic),
    Sha256(Sha256Preimage),
    Chain(SquaringChain),
    Multi(MultiInput),
}

impl BuiltinCircuit {
    fn clear_values(&mut self) {
        match self {
            BuiltinCircuit::Cubic(c) => c.x = None,
            BuiltinCircuit::Sha256(c) => c.preimage = None,
            BuiltinCircuit::Chain(c) => c.x0 = None,
            BuiltinCircuit::Multi(c) => c.xs = None,
        }
    }

    /// The public inputs a verifier needs (ONE excluded), computed outside the circuit.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        match self {
            BuiltinCircuit::Cubic(c) => c.public_inputs(),
            BuiltinCircuit::Sha256(c) => c.public_inputs(),
            BuiltinCircuit::Chain(c) => c.public_inputs(),
            BuiltinCircuit::Multi(c) => c.public_inputs(),
        }
    }
}

impl Circuit<Scalar> for BuiltinCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            BuiltinCircuit::Cubic(c) => c.synthesize(cs),
            BuiltinCircuit::Sha256(c) => c.synthesize(cs),
            BuiltinCircuit::Chain(c) => c.synthesize(cs),
            BuiltinCircuit::Multi(c) => c.synthesize(cs),
        }
    }
}

/// A deterministic RNG for witness values.
pub(crate) fn witness_rng(seed: u64, domain: &str) -> rand_chacha::ChaCha20Rng {
    use rand_core::SeedableRng;
    use sha2::Digest;
    let digest = sha2::Sha256::new()
        .chain_update(domain.as_bytes())
        .chain_update(seed.to_le_bytes())
        .finalize();
    rand_chacha::ChaCha20Rng::from_seed(digest.into())
}

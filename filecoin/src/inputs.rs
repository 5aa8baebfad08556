//! Curio's inputs, decoded exactly as it sends them, every malformed field refused
//! with a message that names it.

use bincode::Options as _;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use serde::Deserialize;

use crate::error::{FilecoinError, Result};

/// The PoRep C2 input: Curio wraps filecoin-proofs-api's `SealCommitPhase1Output`
/// JSON in a JSON object of its own, the inner JSON base64-encoded (Go's encoding
/// of `[]byte`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct C1Wrapper {
    #[serde(rename = "SectorNum")]
    sector_num: i64,
    #[serde(rename = "Phase1Out")]
    phase1_out: String,
    #[serde(rename = "SectorSize")]
    sector_size: u64,
}

/// A decoded C1 output and what the wrapper said about it.
pub struct C1Input {
    pub output: SealCommitPhase1Output,
    /// The wrapper's sector number and size; absent when the input was the bare
    /// `SealCommitPhase1Output` JSON (as `lotus-bench` and filecoin-ffi write it).
    pub sector_number: Option<u64>,
    pub sector_size: Option<u64>,
}

/// The top-level keys that tell a wrapper from a bare output, read without
/// building the document (a 32 GiB sector's C1 output is ~50 MB of JSON).
#[derive(Deserialize)]
struct Probe {
    #[serde(rename = "Phase1Out")]
    phase1_out: Option<serde::de::IgnoredAny>,
    registered_proof: Option<serde::de::IgnoredAny>,
    vanilla_proofs: Option<serde::de::IgnoredAny>,
}

/// Decodes Curio's C1 wrapper, or a bare `SealCommitPhase1Output` JSON.
pub fn decode_c1(bytes: &[u8]) -> Result<C1Input> {
    let probe = |b: &[u8], what: &str| {
        serde_json::from_slice::<serde::de::IgnoredAny>(b)
            .map_err(|e| FilecoinError::input(format!("{what}: {e}")))?;
        Ok(serde_json::from_slice::<Probe>(b).ok())
    };
    let top = probe(bytes, "the C1 output is not JSON")?;
    if top.as_ref().is_none_or(|p| p.phase1_out.is_none()) {
        let output = phase1_output(bytes, top, "the C1 output")?;
        return Ok(C1Input {
            output,
            sector_number: None,
            sector_size: None,
        });
    }
    let w: C1Wrapper = serde_json::from_slice(bytes).map_err(|e| {
        FilecoinError::input(format!(
            "the C1 wrapper (SectorNum, Phase1Out, SectorSize): {e}"
        ))
    })?;
    use base64::Engine as _;
    let inner = base64::engine::general_purpose::STANDARD
        .decode(w.phase1_out.as_bytes())
        .map_err(|e| {
            FilecoinError::input(format!("the C1 wrapper's Phase1Out is not base64: {e}"))
        })?;
    let what = "the C1 wrapper's Phase1Out";
    let top = probe(&inner, "the C1 wrapper's Phase1Out does not hold JSON")?;
    let output = phase1_output(&inner, top, what)?;
    let sector_number = u64::try_from(w.sector_num).map_err(|_| {
        FilecoinError::input(format!(
            "the C1 wrapper's SectorNum {} is negative",
            w.sector_num
        ))
    })?;
    Ok(C1Input {
        output,
        sector_number: Some(sector_number),
        sector_size: Some(w.sector_size),
    })
}

fn phase1_output(bytes: &[u8], top: Option<Probe>, what: &str) -> Result<SealCommitPhase1Output> {
    if top.is_none_or(|p| p.registered_proof.is_none() || p.vanilla_proofs.is_none()) {
        return Err(FilecoinError::input(format!(
            "{what} is not a SealCommitPhase1Output (no registered_proof and vanilla_proofs)"
        )));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        FilecoinError::input(format!("{what} is not a valid SealCommitPhase1Output: {e}"))
    })
}

/// The prover id of miner `f0<miner_id>`: the ID address's payload, the actor id as
/// an unsigned LEB128 varint, left-aligned in 32 zero bytes (Go's `toProverID`).
pub fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    let mut v = miner_id;
    let mut i = 0;
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            id[i] = low;
            return id;
        }
        id[i] = low | 0x80;
        i += 1;
    }
}

/// A 32-byte field (randomness, a commitment), refused at any other length.
pub fn bytes32(bytes: &[u8], what: &str) -> Result<[u8; 32]> {
    bytes
        .try_into()
        .map_err(|_| FilecoinError::input(format!("{what} must be 32 bytes, got {}", bytes.len())))
}

/// bincode as filecoin-proofs-api writes it (fixed-width integers), bounded by the
/// input's own length so that a forged length prefix cannot allocate without limit.
pub fn bincode_decode<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .with_limit(bytes.len() as u64)
        .deserialize(bytes)
        .map_err(|e| FilecoinError::input(format!("{what} is not a valid bincode encoding: {e}")))
}

/// Refuses an empty list of vanilla proofs.
pub fn non_empty<T>(list: &[T], what: &str) -> Result<()> {
    if list.is_empty() {
        return Err(FilecoinError::input(format!("no {what} were given")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prover_ids_are_leb128_payloads() {
        assert_eq!(prover_id(0)[..2], [0, 0]);
        assert_eq!(prover_id(1000)[..3], [0xe8, 0x07, 0]);
        assert_eq!(prover_id(127)[..2], [127, 0]);
        assert_eq!(prover_id(128)[..3], [0x80, 0x01, 0]);
        let max = prover_id(u64::MAX);
        assert_eq!(max[9], 0x01);
        assert!(max[10..].iter().all(|&b| b == 0));
    }

    #[test]
    fn bad_c1_inputs_are_named() {
        let e = |b: &[u8]| decode_c1(b).err().unwrap().to_string();
        assert!(e(b"{\"SectorNum\": 1, \"Phase1").contains("not JSON"));
        assert!(e(b"[1,2]").contains("not a SealCommitPhase1Output"));
        let w = br#"{"SectorNum": 1, "Phase1Out": "@@not base64@@", "SectorSize": 2048}"#;
        assert!(e(w).contains("Phase1Out is not base64"), "{}", e(w));
        let w = br#"{"SectorNum": 1, "Phase1Out": "aGVsbG8=", "SectorSize": 2048}"#;
        assert!(e(w).contains("does not hold JSON"), "{}", e(w));
        let w = br#"{"SectorNum": 1, "Phase1Out": 7, "SectorSize": 2048}"#;
        assert!(e(w).contains("C1 wrapper"), "{}", e(w));
    }

    #[test]
    fn lengths_are_checked() {
        assert!(bytes32(&[0; 32], "randomness").is_ok());
        let e = bytes32(&[0; 31], "randomness").unwrap_err().to_string();
        assert_eq!(e, "randomness must be 32 bytes, got 31");
        let e = bincode_decode::<Vec<u64>>(&[255, 255, 255, 255, 255, 255, 255, 127], "a list")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a list is not a valid bincode encoding"), "{e}");
    }
}

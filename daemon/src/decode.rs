//! A `SubmitProofRequest` checked and turned into a Filecoin request: its kind,
//! priority and parameter set. What can be told from the message alone (kind,
//! registered proof, field sizes) is refused here with INVALID_ARGUMENT; the
//! vanilla proofs themselves are decoded by the prover, and a bad one fails its job.

use crossgroth::engine::Priority;
use crossgroth_filecoin::{
    registered, PoRepRequest, PoStRequest, ProofKind, Registered, Request, SnapRequest,
};

use crate::pb;

/// Longest `request_id` kept (Curio's are a few dozen characters).
pub const MAX_REQUEST_ID: usize = 256;
/// Most vanilla proofs one request may carry (a WindowPoSt partition has 2349 sectors).
pub const MAX_VANILLA_PROOFS: usize = 10_000;

/// A request ready for the job table.
pub struct Decoded {
    pub kind: ProofKind,
    pub priority: Priority,
    /// The parameter set, as cuzk names it ("porep-32g"), when the message says
    /// which (PoRep's may leave it to the C1 output).
    pub circuit: Option<Circuit>,
    pub request: Request,
    /// What decides the proof (every field but the request id and priority):
    /// with the request id, what names a job (see `inputs_digest`).
    pub digest: InputsDigest,
}

/// SHA-256 of the fields of a request that decide its proof.
pub type InputsDigest = [u8; 32];

/// The digest of every field of `req` that decides its proof: the kind, sizes,
/// registered proof, vanilla proofs, sector, miner, randomness, partition and
/// commitments. Not the request id (the caller's label) nor the priority (when,
/// not what). Each field is hashed with its tag and length, so no two requests
/// that differ in a field share a digest by moving bytes across fields.
pub fn inputs_digest(req: &pb::SubmitProofRequest) -> InputsDigest {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut field = |tag: u8, bytes: &[u8]| {
        h.update([tag]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(2, &req.proof_kind.to_le_bytes());
    field(3, &req.sector_size.to_le_bytes());
    field(4, &req.registered_proof.to_le_bytes());
    field(10, &req.vanilla_proof);
    field(11, &(req.vanilla_proofs.len() as u64).to_le_bytes());
    for v in &req.vanilla_proofs {
        field(11, v);
    }
    field(20, &req.sector_number.to_le_bytes());
    field(21, &req.miner_id.to_le_bytes());
    field(22, &req.randomness);
    field(23, &req.partition_index.to_le_bytes());
    field(30, &req.comm_r_old);
    field(31, &req.comm_r_new);
    field(32, &req.comm_d_new);
    h.finalize().into()
}

/// A parameter set by kind and sector size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Circuit {
    pub kind: ProofKind,
    pub sector_size: u64,
}

const SIZES: [(u64, &str); 5] = [
    (2 << 10, "2k"),
    (8 << 20, "8m"),
    (512 << 20, "512m"),
    (32 << 30, "32g"),
    (64 << 30, "64g"),
];

impl Circuit {
    /// cuzk's name: "porep-32g", "wpost-32g", "winning-32g", "snap-32g" ("-2k" for 2 KiB).
    pub fn id(&self) -> String {
        let size = SIZES
            .iter()
            .find(|(b, _)| *b == self.sector_size)
            .map_or("?", |(_, s)| s);
        format!("{}-{size}", kind_prefix(self.kind))
    }

    /// Parses a cuzk circuit id.
    pub fn parse(id: &str) -> Result<Circuit, String> {
        let bad = || {
            format!(
                "unknown circuit_id {:?}: expected porep-, wpost-, winning- or snap- and a sector size (2k, 8m, 512m, 32g, 64g), e.g. \"porep-32g\"",
                abbreviate(id)
            )
        };
        let (prefix, size) = id.trim().rsplit_once('-').ok_or_else(bad)?;
        let kind = ProofKind::ALL
            .into_iter()
            .find(|k| kind_prefix(*k) == prefix)
            .ok_or_else(bad)?;
        let sector_size = SIZES
            .iter()
            .find(|(_, s)| *s == size)
            .map(|(b, _)| *b)
            .ok_or_else(bad)?;
        Ok(Circuit { kind, sector_size })
    }

    /// Every circuit id there is, for messages and for naming loaded sets.
    pub fn all() -> impl Iterator<Item = Circuit> {
        ProofKind::ALL.into_iter().flat_map(|kind| {
            SIZES.iter().map(move |(b, _)| Circuit {
                kind,
                sector_size: *b,
            })
        })
    }

    /// filecoin-proofs' parameter set of this circuit.
    pub fn params(&self) -> Result<crossgroth_filecoin::CircuitParams, String> {
        Registered::for_sector_size(self.sector_size)
            .and_then(|r| r.params(self.kind))
            .map_err(|e| e.to_string())
    }
}

fn kind_prefix(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PoRep => "porep",
        ProofKind::WindowPoSt => "wpost",
        ProofKind::WinningPoSt => "winning",
        ProofKind::SnapDeals => "snap",
    }
}

/// The kind as cuzk names its queues ("porep-c2", "snap-update", "window-post",
/// "winning-post").
pub fn queue_name(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PoRep => "porep-c2",
        ProofKind::SnapDeals => "snap-update",
        ProofKind::WindowPoSt => "window-post",
        ProofKind::WinningPoSt => "winning-post",
    }
}

/// The kind as a Prometheus label ("porep_c2" …, as cuzk labels it).
pub fn metric_label(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PoRep => "porep_c2",
        ProofKind::SnapDeals => "snap_update",
        ProofKind::WindowPoSt => "window_post",
        ProofKind::WinningPoSt => "winning_post",
    }
}

/// Curio's priorities: WinningPoSt CRITICAL, WindowPoSt HIGH, the rest NORMAL.
pub fn default_priority(kind: ProofKind) -> Priority {
    match kind {
        ProofKind::WinningPoSt => Priority::Critical,
        ProofKind::WindowPoSt => Priority::High,
        ProofKind::PoRep | ProofKind::SnapDeals => Priority::Normal,
    }
}

pub fn proto_kind(kind: ProofKind) -> pb::ProofKind {
    match kind {
        ProofKind::PoRep => pb::ProofKind::PorepSealCommit,
        ProofKind::SnapDeals => pb::ProofKind::SnapDealsUpdate,
        ProofKind::WindowPoSt => pb::ProofKind::WindowPostPartition,
        ProofKind::WinningPoSt => pb::ProofKind::WinningPost,
    }
}

/// Checks a request and builds the prover's. Takes the message, so that its
/// (possibly large) vanilla proofs move instead of being copied.
pub fn decode(req: pb::SubmitProofRequest) -> Result<Decoded, String> {
    let digest = inputs_digest(&req);
    if req.request_id.len() > MAX_REQUEST_ID {
        return Err(format!(
            "request_id is {} bytes: at most {MAX_REQUEST_ID}",
            req.request_id.len()
        ));
    }
    let kind = match pb::ProofKind::try_from(req.proof_kind) {
        Ok(pb::ProofKind::PorepSealCommit) => ProofKind::PoRep,
        Ok(pb::ProofKind::SnapDealsUpdate) => ProofKind::SnapDeals,
        Ok(pb::ProofKind::WindowPostPartition) => ProofKind::WindowPoSt,
        Ok(pb::ProofKind::WinningPost) => ProofKind::WinningPoSt,
        Ok(pb::ProofKind::Unspecified) => {
            return Err("proof_kind is unspecified: set POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION or WINNING_POST".into())
        }
        Err(_) => {
            return Err(format!(
                "unknown proof_kind {} (known: 1 POREP_SEAL_COMMIT, 2 SNAP_DEALS_UPDATE, 3 WINDOW_POST_PARTITION, 4 WINNING_POST)",
                req.proof_kind
            ))
        }
    };
    let priority = match pb::Priority::try_from(req.priority) {
        Ok(pb::Priority::Unspecified) => default_priority(kind),
        Ok(pb::Priority::Low) => Priority::Low,
        Ok(pb::Priority::Normal) => Priority::Normal,
        Ok(pb::Priority::High) => Priority::High,
        Ok(pb::Priority::Critical) => Priority::Critical,
        Err(_) => {
            return Err(format!(
                "unknown priority {} (known: 1 LOW … 4 CRITICAL, 0 for the kind's default)",
                req.priority
            ))
        }
    };
    if req.vanilla_proofs.len() > MAX_VANILLA_PROOFS {
        return Err(format!(
            "{} vanilla proofs: at most {MAX_VANILLA_PROOFS}",
            req.vanilla_proofs.len()
        ));
    }
    let e = |e: crossgroth_filecoin::FilecoinError| e.to_string();
    let size_of = |size: u64| Some(size).filter(|&s| s != 0);
    let (request, sector_size) = match kind {
        ProofKind::PoRep => {
            if req.vanilla_proof.is_empty() {
                return Err(
                    "a PoRep request carries its C1 output in vanilla_proof, which is empty".into(),
                );
            }
            let from_proof = u64::from(
                registered::seal_proof(req.registered_proof)
                    .map_err(e)?
                    .sector_size(),
            );
            if let Some(claimed) = size_of(req.sector_size).filter(|&s| s != from_proof) {
                return Err(format!(
                    "sector_size {} contradicts registered_proof {} ({})",
                    registered::sector_size_name(claimed),
                    req.registered_proof,
                    registered::sector_size_name(from_proof)
                ));
            }
            let request = Request::PoRep(PoRepRequest {
                c1: req.vanilla_proof,
                miner_id: req.miner_id,
                sector_number: (req.sector_number != 0).then_some(req.sector_number),
                registered_proof: Some(req.registered_proof),
                sector_size: size_of(req.sector_size),
            });
            (request, from_proof)
        }
        ProofKind::WinningPoSt | ProofKind::WindowPoSt => {
            let proof = registered::post_proof(req.registered_proof).map_err(e)?;
            let winning = proof.typ() == filecoin_proofs_api::PoStType::Winning;
            if winning != (kind == ProofKind::WinningPoSt) {
                return Err(format!(
                    "registered_proof {} ({proof:?}) is not a {} proof",
                    req.registered_proof,
                    queue_name(kind)
                ));
            }
            if req.randomness.len() != 32 {
                return Err(format!(
                    "randomness is {} bytes: a PoSt challenge seed is 32",
                    req.randomness.len()
                ));
            }
            if req.vanilla_proofs.is_empty() {
                return Err("a PoSt request carries one vanilla proof a sector in vanilla_proofs, which is empty".into());
            }
            let size = u64::from(proof.sector_size());
            let post = PoStRequest {
                registered_proof: req.registered_proof,
                miner_id: req.miner_id,
                randomness: req.randomness,
                vanilla_proofs: req.vanilla_proofs,
                partition_index: req.partition_index,
            };
            let request = match kind {
                ProofKind::WinningPoSt => Request::WinningPoSt(post),
                _ => Request::WindowPoSt(post),
            };
            (request, size)
        }
        ProofKind::SnapDeals => {
            let proof = registered::update_proof(req.registered_proof).map_err(e)?;
            for (name, c) in [
                ("comm_r_old", &req.comm_r_old),
                ("comm_r_new", &req.comm_r_new),
                ("comm_d_new", &req.comm_d_new),
            ] {
                if c.len() != 32 {
                    return Err(format!("{name} is {} bytes: a commitment is 32", c.len()));
                }
            }
            if req.vanilla_proofs.is_empty() {
                return Err("a SnapDeals request carries one vanilla proof a partition in vanilla_proofs, which is empty".into());
            }
            let size = u64::from(proof.sector_size());
            let request = Request::SnapDeals(SnapRequest {
                registered_proof: req.registered_proof,
                vanilla_proofs: req.vanilla_proofs,
                comm_r_old: req.comm_r_old,
                comm_r_new: req.comm_r_new,
                comm_d_new: req.comm_d_new,
            });
            (request, size)
        }
    };
    Ok(Decoded {
        kind,
        priority,
        circuit: Some(Circuit { kind, sector_size }),
        request,
        digest,
    })
}

/// A client's text cut to a few dozen characters for an error message.
pub fn abbreviate(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX).collect();
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circuit_ids_round_trip() {
        for c in Circuit::all() {
            assert_eq!(Circuit::parse(&c.id()).unwrap(), c);
        }
        assert_eq!(
            Circuit::parse("porep-32g").unwrap(),
            Circuit {
                kind: ProofKind::PoRep,
                sector_size: 32 << 30
            }
        );
        assert!(Circuit::parse("porep-3g").is_err());
        assert!(Circuit::parse("x").is_err());
    }

    #[test]
    fn kinds_and_priorities() {
        let mut r = pb::SubmitProofRequest {
            proof_kind: 99,
            ..Default::default()
        };
        assert!(decode(r.clone())
            .err()
            .unwrap()
            .contains("unknown proof_kind 99"));
        r.proof_kind = 0;
        assert!(decode(r.clone()).err().unwrap().contains("unspecified"));
        r.proof_kind = pb::ProofKind::WinningPost as i32;
        r.randomness = vec![0; 32];
        r.vanilla_proofs = vec![vec![1]];
        let d = decode(r.clone()).unwrap();
        assert_eq!(d.priority, Priority::Critical);
        assert_eq!(d.circuit.unwrap().id(), "winning-2k");
        r.registered_proof = 10;
        assert!(decode(r.clone())
            .err()
            .unwrap()
            .contains("not a winning-post"));
        r.registered_proof = 77;
        assert!(decode(r).is_err());
    }
}

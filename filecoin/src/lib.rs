//! Filecoin proofs from Curio's inputs, proved by crossgroth: PoRep C2,
//! WinningPoSt, WindowPoSt (one partition) and SnapDeals.
//!
//! Each kind decodes its inputs exactly as Curio sends them, builds the circuits
//! and public inputs filecoin-proofs builds (through storage-proofs' compound
//! proofs), proves all partitions as one crossgroth engine job and returns the bytes
//! filecoin-proofs' own function returns, after filecoin-proofs' verifier has
//! accepted them. This is the only crate of crossgroth that depends on
//! rust-fil-proofs (19.1.0, without GPU features).

pub mod benchmark;
pub mod digest;
pub mod error;
pub mod fabricated;
pub mod inputs;
pub mod params;
mod plan;
pub mod porep;
pub mod post;
pub mod prover;
pub mod registered;
mod shapes;
pub mod snap;
pub mod test_sector;
mod vanilla;

use std::path::{Path, PathBuf};

pub use error::{FilecoinError, Result};
pub use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
pub use params::{CircuitParams, ParamsCache};
pub use porep::PoRepRequest;
pub use post::PoStRequest;
pub use prover::{FilecoinOptions, FilecoinProver, Output, Request, Timings};
pub use snap::SnapRequest;
pub use vanilla::panic_first_line;

use shapes::with_tree;

/// The Filecoin proof kinds, each at its current registered-proof version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofKind {
    PoRep,
    WinningPoSt,
    WindowPoSt,
    SnapDeals,
}

impl ProofKind {
    pub const ALL: [ProofKind; 4] = [
        ProofKind::PoRep,
        ProofKind::WinningPoSt,
        ProofKind::WindowPoSt,
        ProofKind::SnapDeals,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ProofKind::PoRep => "PoRep C2",
            ProofKind::WinningPoSt => "WinningPoSt",
            ProofKind::WindowPoSt => "WindowPoSt",
            ProofKind::SnapDeals => "SnapDeals",
        }
    }
}

/// The current registered proofs of a sector size: seal `V1_1`, WinningPoSt `V1`,
/// WindowPoSt `V1_2` (the FFI's `V1_1`), update `V1`.
#[derive(Clone, Copy, Debug)]
pub struct Registered {
    pub seal: RegisteredSealProof,
    pub winning: RegisteredPoStProof,
    pub window: RegisteredPoStProof,
    pub update: RegisteredUpdateProof,
}

impl Registered {
    pub fn for_sector_size(bytes: u64) -> Result<Self> {
        let i = [2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30]
            .iter()
            .position(|&b| b == bytes)
            .ok_or_else(|| {
                FilecoinError::input(format!(
                    "sector size {} is not a Filecoin sector size",
                    registered::sector_size_name(bytes)
                ))
            })? as u64;
        Ok(Registered {
            seal: registered::seal_proof(5 + i)?,
            winning: registered::post_proof(i)?,
            window: registered::post_proof(10 + i)?,
            update: registered::update_proof(i)?,
        })
    }

    /// The parameter set of one kind.
    pub fn params(&self, kind: ProofKind) -> Result<CircuitParams> {
        let size = u64::from(self.seal.sector_size());
        match kind {
            ProofKind::PoRep => with_tree!(size, porep_params, self.seal),
            ProofKind::WinningPoSt => with_tree!(size, post_params, self.winning),
            ProofKind::WindowPoSt => with_tree!(size, post_params, self.window),
            ProofKind::SnapDeals => with_tree!(size, snap_params, self.update),
        }
    }
}

fn porep_params<Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait>(
    p: RegisteredSealProof,
) -> Result<CircuitParams> {
    porep::params::<Tree>(p)
}

fn post_params<Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait>(
    p: RegisteredPoStProof,
) -> Result<CircuitParams> {
    post::params::<Tree>(p)
}

fn snap_params<
    Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>,
>(
    p: RegisteredUpdateProof,
) -> Result<CircuitParams> {
    Ok(snap::params::<Tree>(p))
}

/// Writes random, insecure parameters for one kind at one sector size into `dir`
/// under filecoin-proofs' names (kept when already written there). Refuses a
/// directory that holds parameters crossgroth did not write.
pub fn write_insecure_params(
    kind: ProofKind,
    sector_size: u64,
    dir: &Path,
    seed: u64,
    progress: Option<crossgroth::groth16::SetupProgress<'_>>,
) -> Result<PathBuf> {
    let reg = Registered::for_sector_size(sector_size)?;
    let p = reg.params(kind)?;
    match kind {
        ProofKind::PoRep => with_tree!(sector_size, write_porep, dir, &p, reg.seal, seed, progress),
        ProofKind::WinningPoSt => {
            with_tree!(
                sector_size,
                write_post,
                dir,
                &p,
                reg.winning,
                seed,
                progress
            )
        }
        ProofKind::WindowPoSt => {
            with_tree!(sector_size, write_post, dir, &p, reg.window, seed, progress)
        }
        ProofKind::SnapDeals => {
            with_tree!(sector_size, write_snap, dir, &p, reg.update, seed, progress)
        }
    }
}

fn write_porep<Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait>(
    dir: &Path,
    p: &CircuitParams,
    proof: RegisteredSealProof,
    seed: u64,
    progress: Option<crossgroth::groth16::SetupProgress<'_>>,
) -> Result<PathBuf> {
    params::write_insecure(dir, p, porep::blank_circuit::<Tree>(proof)?, seed, progress)
}

fn write_post<Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait>(
    dir: &Path,
    p: &CircuitParams,
    proof: RegisteredPoStProof,
    seed: u64,
    progress: Option<crossgroth::groth16::SetupProgress<'_>>,
) -> Result<PathBuf> {
    params::write_insecure(dir, p, post::blank_circuit::<Tree>(proof)?, seed, progress)
}

fn write_snap<
    Tree: 'static + storage_proofs_core::merkle::MerkleTreeTrait<Hasher = filecoin_proofs::TreeRHasher>,
>(
    dir: &Path,
    p: &CircuitParams,
    proof: RegisteredUpdateProof,
    seed: u64,
    progress: Option<crossgroth::groth16::SetupProgress<'_>>,
) -> Result<PathBuf> {
    params::write_insecure(dir, p, snap::blank_circuit::<Tree>(proof), seed, progress)
}

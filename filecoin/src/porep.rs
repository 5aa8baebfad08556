//! PoRep C2: the partitions of a sector's seal proof from its C1 output, as
//! filecoin-proofs' `seal_commit_phase2` builds them.

use filecoin_hashers::Domain;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::parameters::{public_params, setup_params};
use filecoin_proofs::types::PoRepConfig;
use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::{ApiFeature, RegisteredSealProof, SectorId};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

use crate::error::{FilecoinError, Result};
use crate::inputs::{self, C1Input};
use crate::params::CircuitParams;
use crate::plan::Plan;
use crate::registered;
use crate::shapes::with_tree;

/// A PoRep C2 request as Curio sends it.
#[derive(Clone, Debug)]
pub struct PoRepRequest {
    /// Curio's C1 wrapper JSON, or a bare `SealCommitPhase1Output` JSON.
    pub c1: Vec<u8>,
    pub miner_id: u64,
    /// The request's sector number; the C1 wrapper's is used when absent.
    pub sector_number: Option<u64>,
    /// The request's registered proof and sector size: checked against the C1
    /// output, which decides.
    pub registered_proof: Option<u64>,
    pub sector_size: Option<u64>,
}

/// The circuits of one seal proof, one per partition.
pub struct PoRepCircuits<Tree: 'static + MerkleTreeTrait> {
    pub params: CircuitParams,
    pub circuits: Vec<StackedCircuit<Tree, DefaultPieceHasher>>,
}

pub(crate) fn plan(req: &PoRepRequest) -> Result<Plan> {
    let C1Input {
        output,
        sector_number,
        sector_size,
    } = inputs::decode_c1(&req.c1)?;
    let proof = output.registered_proof;
    let size = u64::from(proof.sector_size());
    if let Some(n) = req.registered_proof {
        let asked = registered::seal_proof(n)?;
        if asked != proof {
            return Err(FilecoinError::input(format!(
                "the request's registered proof {n} ({asked:?}) contradicts the C1 output's {proof:?}"
            )));
        }
    }
    for (what, claimed) in [("request", req.sector_size), ("C1 wrapper", sector_size)] {
        if let Some(claimed) = claimed.filter(|&c| c != 0 && c != size) {
            return Err(FilecoinError::input(format!(
                "the {what}'s sector size {claimed} contradicts the C1 output's {proof:?} ({} sectors)",
                registered::sector_size_name(size)
            )));
        }
    }
    let sector = match (req.sector_number, sector_number) {
        (Some(a), Some(b)) if a != b => {
            return Err(FilecoinError::input(format!(
                "the request's sector number {a} contradicts the C1 wrapper's {b}"
            )))
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => {
            return Err(FilecoinError::input(
                "no sector number: the bare C1 output needs one given with it",
            ))
        }
    };
    let prover_id = inputs::prover_id(req.miner_id);
    let config = proof.as_v1_config();
    if config.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Err(FilecoinError::input(format!(
            "{proof:?}: non-interactive PoRep (an aggregate of partition proofs) is not supported"
        )));
    }
    let (comm_r, comm_d, ticket, seed) = (output.comm_r, output.comm_d, output.ticket, output.seed);
    let built = with_tree!(size, build, &config, output)?;
    let verify = move |bytes: &[u8]| {
        filecoin_proofs_api::seal::verify_seal(
            proof,
            comm_r,
            comm_d,
            prover_id,
            SectorId::from(sector),
            ticket,
            seed,
            bytes,
        )
        .map_err(|e| FilecoinError::filecoin("filecoin-proofs' verify_seal", e))
    };
    Ok(built.with_verifier("PoRep C2", verify))
}

fn build<Tree: 'static + MerkleTreeTrait>(
    config: &PoRepConfig,
    output: SealCommitPhase1Output,
) -> Result<Plan> {
    let c = circuits::<Tree>(config, output)?;
    Ok(Plan::new(c.params, c.circuits))
}

/// The circuits of a request (for comparisons with other provers).
pub fn request_circuits<Tree: 'static + MerkleTreeTrait>(
    req: &PoRepRequest,
) -> Result<PoRepCircuits<Tree>> {
    let output = inputs::decode_c1(&req.c1)?.output;
    circuits::<Tree>(&output.registered_proof.as_v1_config(), output)
}

/// The partitions' circuits of a C1 output, exactly as `seal_commit_phase2` makes
/// them (and the same checks first).
pub fn circuits<Tree: 'static + MerkleTreeTrait>(
    config: &PoRepConfig,
    output: SealCommitPhase1Output,
) -> Result<PoRepCircuits<Tree>> {
    let err = |e| FilecoinError::filecoin("the C1 output", e);
    let SealCommitPhase1Output {
        registered_proof,
        vanilla_proofs,
        comm_r,
        comm_d,
        replica_id,
        seed,
        ticket: _,
    } = output;
    for (name, value) in [("comm_d", comm_d), ("comm_r", comm_r), ("seed", seed)] {
        if value == [0; 32] {
            return Err(FilecoinError::input(format!(
                "the C1 output's {name} is all zeros"
            )));
        }
    }
    let vanilla: Vec<Vec<stacked::Proof<Tree, DefaultPieceHasher>>> =
        vanilla_proofs.try_into().map_err(|e: anyhow::Error| {
            FilecoinError::input(format!(
                "the C1 output's vanilla proofs do not have the tree shape of {registered_proof:?}: {e:#}"
            ))
        })?;
    let partitions = usize::from(config.partitions);
    if vanilla.len() != partitions || vanilla.iter().any(|p| p.is_empty()) {
        return Err(FilecoinError::input(format!(
            "{registered_proof:?} has {partitions} partitions; the C1 output holds vanilla proofs for {} ({} of them empty)",
            vanilla.len(),
            vanilla.iter().filter(|p| p.is_empty()).count()
        )));
    }
    let replica_id: blstrs::Scalar = replica_id.into();
    let public_inputs = stacked::PublicInputs {
        replica_id: replica_id.into(),
        tau: Some(stacked::Tau {
            comm_d: DefaultPieceDomain::try_from_bytes(&comm_d).map_err(err)?,
            comm_r: as_safe_commitment(&comm_r, "comm_r").map_err(err)?,
        }),
        k: None,
        seed: Some(seed),
    };
    let setup = compound_proof::SetupParams {
        vanilla_params: setup_params(config).map_err(err)?,
        partitions: Some(partitions),
        priority: false,
    };
    let compound = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&setup)
    .map_err(err)?;
    let circuits = vanilla
        .iter()
        .enumerate()
        .map(|(k, proof)| {
            StackedCompound::<Tree, DefaultPieceHasher>::circuit(
                &public_inputs,
                (),
                proof,
                &compound.vanilla_params,
                Some(k),
            )
            .map_err(err)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(PoRepCircuits {
        params: params::<Tree>(registered_proof)?,
        circuits,
    })
}

/// The parameter set of a seal proof, by filecoin-proofs' cache id.
pub fn params<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
) -> Result<CircuitParams> {
    let config = proof.as_v1_config();
    let pp = public_params::<Tree>(&config)
        .map_err(|e| FilecoinError::filecoin("the PoRep public parameters", e))?;
    let cache_id = <StackedCompound<Tree, DefaultPieceHasher> as CacheableParameters<
        StackedCircuit<Tree, DefaultPieceHasher>,
        _,
    >>::cache_identifier(&pp);
    Ok(CircuitParams::new(
        "porep",
        u64::from(config.sector_size),
        cache_id,
    ))
}

/// The blank circuit parameters are generated from.
pub fn blank_circuit<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
    let config = proof.as_v1_config();
    let pp = public_params::<Tree>(&config)
        .map_err(|e| FilecoinError::filecoin("the PoRep public parameters", e))?;
    Ok(
        <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::blank_circuit(&pp),
    )
}

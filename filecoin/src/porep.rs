//! PoRep C2: the partitions of a sector's seal proof from its C1 output, as
//! filecoin-proofs' `seal_commit_phase2` builds them.

use filecoin_hashers::Domain;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::parameters::{public_params, setup_params};
use filecoin_proofs::types::PoRepConfig;
use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain, DefaultTreeHasher};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::{ApiFeature, RegisteredSealProof, SectorId};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_porep::stacked::{
    self, generate_replica_id, StackedCircuit, StackedCompound, StackedDrg,
};

use crate::error::{FilecoinError, Result};
use crate::inputs::{self, C1Input};
use crate::params::CircuitParams;
use crate::plan::Plan;
use crate::registered;
use crate::shapes::with_tree;
use crate::vanilla;

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
    commitments_are_field_elements(&output)?;
    // The replica id binds the C1 output to its miner and sector: another one would
    // prove a statement the verifier never accepts.
    let replica_id = generate_replica_id::<DefaultTreeHasher, _>(
        &prover_id,
        sector,
        &ticket,
        comm_d,
        &config.porep_id,
    );
    if replica_id != output.replica_id {
        return Err(FilecoinError::input(format!(
            "the C1 output's replica_id is not the one of miner_id {} and sector {sector} with its ticket and comm_d: the C1 output is another miner's or sector's, or was altered",
            req.miner_id
        )));
    }
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

/// The C1 output's values that storage-proofs converts to field elements unchecked.
fn commitments_are_field_elements(output: &SealCommitPhase1Output) -> Result<()> {
    for (name, value) in [
        ("comm_d", &output.comm_d[..]),
        ("comm_r", &output.comm_r[..]),
        ("replica_id", output.replica_id.as_ref()),
    ] {
        if !vanilla::is_field_element(value) {
            return Err(FilecoinError::input(format!(
                "the C1 output's {name} is not a field element (above the BLS12-381 scalar modulus)"
            )));
        }
    }
    Ok(())
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
/// them (and the same checks first), built only after storage-proofs' vanilla
/// verification of the C1 output passes.
pub fn circuits<Tree: 'static + MerkleTreeTrait>(
    config: &PoRepConfig,
    output: SealCommitPhase1Output,
) -> Result<PoRepCircuits<Tree>> {
    let err = |e| FilecoinError::filecoin("the C1 output", e);
    commitments_are_field_elements(&output)?;
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
    let partition_proofs: Vec<Vec<stacked::Proof<Tree, DefaultPieceHasher>>> =
        vanilla_proofs.try_into().map_err(|e: anyhow::Error| {
            FilecoinError::input(format!(
                "the C1 output's vanilla proofs do not have the tree shape of {registered_proof:?}: {e:#}"
            ))
        })?;
    let partitions = usize::from(config.partitions);
    if partition_proofs.len() != partitions || partition_proofs.iter().any(|p| p.is_empty()) {
        return Err(FilecoinError::input(format!(
            "{registered_proof:?} has {partitions} partitions; the C1 output holds vanilla proofs for {} ({} of them empty)",
            partition_proofs.len(),
            partition_proofs.iter().filter(|p| p.is_empty()).count()
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
    let vanilla_setup = setup_params(config).map_err(err)?;
    let setup = compound_proof::SetupParams {
        vanilla_params: vanilla_setup.clone(),
        partitions: Some(partitions),
        priority: false,
    };
    let compound = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&setup)
    .map_err(err)?;
    // seal_commit_phase2 leaves the vanilla verification to C1; a C1 output edited
    // since must not reach the circuits.
    vanilla::porep(
        &vanilla_setup,
        &compound.vanilla_params,
        &public_inputs,
        &partition_proofs,
    )?;
    let circuits = vanilla::guarded("the C1 output's vanilla proofs", || {
        partition_proofs
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
            .collect::<Result<Vec<_>>>()
    })?;
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

//! WinningPoSt and one WindowPoSt partition from the sectors' vanilla proofs, as
//! filecoin-proofs' `generate_winning_post_with_vanilla` and
//! `generate_single_window_post_with_vanilla` build them.

use std::collections::BTreeMap;

use filecoin_hashers::Hasher;
use filecoin_proofs::parameters::{
    window_post_public_params, window_post_setup_params, winning_post_public_params,
    winning_post_setup_params,
};
use filecoin_proofs::types::{PoStConfig, PoStType};
use filecoin_proofs::{
    as_safe_commitment, partition_vanilla_proofs, single_partition_vanilla_proofs,
    FallbackPoStSectorProof,
};
use filecoin_proofs_api::post::{verify_window_post, verify_winning_post};
use filecoin_proofs_api::{PublicReplicaInfo, RegisteredPoStProof};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector,
};

use crate::error::{FilecoinError, Result};
use crate::inputs;
use crate::params::CircuitParams;
use crate::plan::Plan;
use crate::registered;
use crate::shapes::with_tree;
use crate::vanilla;

/// A WinningPoSt or WindowPoSt request as Curio sends it.
#[derive(Clone, Debug)]
pub struct PoStRequest {
    pub registered_proof: u64,
    pub miner_id: u64,
    pub randomness: Vec<u8>,
    /// One bincode `FallbackPoStSectorProof` per sector.
    pub vanilla_proofs: Vec<Vec<u8>>,
    /// WindowPoSt only: which partition of the deadline these sectors are.
    pub partition_index: u32,
}

/// The circuits of one PoSt proof (WinningPoSt: one; a WindowPoSt partition: one).
pub struct PoStCircuits<Tree: 'static + MerkleTreeTrait> {
    pub params: CircuitParams,
    pub circuits: Vec<FallbackPoStCircuit<Tree>>,
}

pub(crate) fn plan(req: &PoStRequest, typ: PoStType) -> Result<Plan> {
    let proof = registered::post_proof(req.registered_proof)?;
    let kind = kind_name(&typ);
    if proof.typ() != typ {
        return Err(FilecoinError::input(format!(
            "registered proof {} ({proof:?}) is not a {kind} proof",
            req.registered_proof
        )));
    }
    let randomness = inputs::bytes32(&req.randomness, "randomness")?;
    inputs::non_empty(&req.vanilla_proofs, "vanilla proofs")?;
    let prover_id = inputs::prover_id(req.miner_id);
    let size = u64::from(proof.sector_size());
    let (built, replicas) = with_tree!(
        size,
        build,
        proof,
        randomness,
        prover_id,
        &req.vanilla_proofs,
        req.partition_index as usize
    )?;
    let verify = move |bytes: &[u8]| match typ {
        PoStType::Winning => verify_winning_post(&randomness, bytes, &replicas, prover_id)
            .map_err(|e| FilecoinError::filecoin("filecoin-proofs' verify_winning_post", e)),
        PoStType::Window => {
            verify_window_post(&randomness, &[(proof, bytes)], &replicas, prover_id)
                .map_err(|e| FilecoinError::filecoin("filecoin-proofs' verify_window_post", e))
        }
    };
    Ok(built.with_verifier(kind, verify))
}

fn kind_name(typ: &PoStType) -> &'static str {
    match typ {
        PoStType::Winning => "WinningPoSt",
        PoStType::Window => "WindowPoSt",
    }
}

type Replicas = BTreeMap<filecoin_proofs_api::SectorId, PublicReplicaInfo>;

fn build<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
    randomness: [u8; 32],
    prover_id: [u8; 32],
    vanilla: &[Vec<u8>],
    partition_index: usize,
) -> Result<(Plan, Replicas)> {
    let sectors = vanilla
        .iter()
        .enumerate()
        .map(|(i, b)| {
            inputs::bincode_decode::<FallbackPoStSectorProof<Tree>>(
                b,
                &format!("vanilla proof {i}"),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    // The bytes as sent: converting an unchecked comm_r to a field element panics.
    let replicas = sectors
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let comm_r = <[u8; 32]>::try_from(s.comm_r.as_ref()).map_err(|_| {
                FilecoinError::input(format!(
                    "vanilla_proofs[{i}] (sector {}): comm_r is not 32 bytes",
                    s.sector_id
                ))
            })?;
            Ok((s.sector_id, PublicReplicaInfo::new(proof, comm_r)))
        })
        .collect::<Result<_>>()?;
    let c = circuits::<Tree>(proof, &randomness, prover_id, sectors, partition_index)?;
    Ok((
        Plan::new(c.params, c.circuits).recording_does_not_pay(),
        replicas,
    ))
}

/// The circuits of a request (for comparisons with other provers).
pub fn request_circuits<Tree: 'static + MerkleTreeTrait>(
    req: &PoStRequest,
) -> Result<PoStCircuits<Tree>> {
    let proof = registered::post_proof(req.registered_proof)?;
    let randomness = inputs::bytes32(&req.randomness, "randomness")?;
    let sectors = req
        .vanilla_proofs
        .iter()
        .map(|b| inputs::bincode_decode(b, "a vanilla proof"))
        .collect::<Result<Vec<_>>>()?;
    let prover_id = inputs::prover_id(req.miner_id);
    circuits::<Tree>(
        proof,
        &randomness,
        prover_id,
        sectors,
        req.partition_index as usize,
    )
}

/// The circuits filecoin-proofs proves for these vanilla proofs, built only after
/// the vanilla proofs' structure and storage-proofs' own verification of them pass.
pub fn circuits<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
    randomness: &[u8; 32],
    prover_id: [u8; 32],
    sectors: Vec<FallbackPoStSectorProof<Tree>>,
    partition_index: usize,
) -> Result<PoStCircuits<Tree>> {
    let config = proof.as_v1_config();
    let kind = kind_name(&config.typ);
    let err = move |e| FilecoinError::filecoin(kind, e);
    inputs::non_empty(&sectors, "vanilla proofs")?;
    let randomness_safe: <Tree::Hasher as Hasher>::Domain =
        as_safe_commitment(randomness, "randomness").map_err(err)?;
    let prover_id_safe: <Tree::Hasher as Hasher>::Domain =
        as_safe_commitment(&prover_id, "prover_id").map_err(err)?;
    let (vanilla_params, partitions, k) = match config.typ {
        PoStType::Winning => {
            if sectors.len() != config.sector_count {
                return Err(FilecoinError::input(format!(
                    "WinningPoSt proves {} sector(s); {} vanilla proofs were given",
                    config.sector_count,
                    sectors.len()
                )));
            }
            (winning_post_setup_params(&config).map_err(err)?, None, None)
        }
        PoStType::Window => {
            if sectors.len() > config.sector_count {
                return Err(FilecoinError::input(format!(
                    "a WindowPoSt partition of {proof:?} holds at most {} sectors; {} vanilla proofs were given",
                    config.sector_count,
                    sectors.len()
                )));
            }
            (
                window_post_setup_params(&config),
                None,
                Some(partition_index),
            )
        }
    };
    let setup = compound_proof::SetupParams {
        vanilla_params,
        partitions,
        priority: config.priority,
    };
    let pub_params: compound_proof::PublicParams<'_, FallbackPoSt<'_, Tree>> =
        FallbackPoStCompound::setup(&setup).map_err(err)?;
    vanilla::post_structure(&config, &sectors)?;
    let challenges = |partition| {
        vanilla::post_challenges(
            &pub_params.vanilla_params,
            &config.typ,
            randomness_safe,
            partition,
            &sectors,
        )
    };
    // storage-proofs' verification of a WinningPoSt opens only its first challenge.
    if config.typ == PoStType::Winning {
        challenges(0)?;
    }
    let pub_inputs = fallback::PublicInputs {
        randomness: randomness_safe,
        prover_id: prover_id_safe,
        sectors: sectors
            .iter()
            .map(|s| PublicSector {
                id: s.sector_id,
                comm_r: s.comm_r,
            })
            .collect(),
        k,
    };
    let refused = |e| vanilla::refused("vanilla_proofs", e);
    let partitioned = vanilla::guarded("vanilla_proofs", || match config.typ {
        PoStType::Winning => {
            let n = pub_params.partitions.unwrap_or(1);
            partition_vanilla_proofs(
                &config,
                &pub_params.vanilla_params,
                &pub_inputs,
                n,
                &sectors,
            )
            .map_err(refused)
        }
        PoStType::Window => single_partition_vanilla_proofs(
            &config,
            &pub_params.vanilla_params,
            &pub_inputs,
            &sectors,
        )
        .map(|p| vec![p])
        .map_err(refused),
    });
    // storage-proofs says only that some proof failed; name the first that does.
    let partitioned = match partitioned {
        Ok(p) => p,
        Err(e) => {
            challenges(partition_index)?;
            return Err(e);
        }
    };
    let circuits = vanilla::guarded("vanilla_proofs", || {
        partitioned
            .iter()
            .enumerate()
            .map(|(i, p)| {
                FallbackPoStCompound::<Tree>::circuit(
                    &pub_inputs,
                    Default::default(),
                    p,
                    &pub_params.vanilla_params,
                    Some(i),
                )
                .map_err(err)
            })
            .collect::<Result<Vec<_>>>()
    })?;
    Ok(PoStCircuits {
        params: params::<Tree>(proof)?,
        circuits,
    })
}

fn public_params<Tree: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
) -> Result<fallback::PublicParams> {
    match config.typ {
        PoStType::Winning => winning_post_public_params::<Tree>(config),
        PoStType::Window => window_post_public_params::<Tree>(config),
    }
    .map_err(|e| FilecoinError::filecoin("the PoSt public parameters", e))
}

/// The parameter set of a PoSt proof, by filecoin-proofs' cache id.
pub fn params<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
) -> Result<CircuitParams> {
    let config = proof.as_v1_config();
    let pp = public_params::<Tree>(&config)?;
    let cache_id = <FallbackPoStCompound<Tree> as CacheableParameters<
        FallbackPoStCircuit<Tree>,
        _,
    >>::cache_identifier(&pp);
    let kind = match config.typ {
        PoStType::Winning => "winning-post",
        PoStType::Window => "window-post",
    };
    Ok(CircuitParams::new(
        kind,
        u64::from(config.sector_size),
        cache_id,
    ))
}

/// The blank circuit parameters are generated from.
pub fn blank_circuit<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
) -> Result<FallbackPoStCircuit<Tree>> {
    let pp = public_params::<Tree>(&proof.as_v1_config())?;
    Ok(<FallbackPoStCompound<Tree> as CompoundProof<
        FallbackPoSt<'_, Tree>,
        FallbackPoStCircuit<Tree>,
    >>::blank_circuit(&pp))
}

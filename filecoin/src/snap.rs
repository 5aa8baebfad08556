//! SnapDeals: the empty-sector-update proof from its partitions' vanilla proofs, as
//! filecoin-proofs' `generate_empty_sector_update_proof_with_vanilla` builds it.

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::types::{PoRepConfig, SectorUpdateConfig};
use filecoin_proofs::{DefaultPieceDomain, TreeRHasher};
use filecoin_proofs_api::update::verify_empty_sector_update_proof;
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PartitionProof,
    PublicInputs, PublicParams, SetupParams,
};

use crate::error::{FilecoinError, Result};
use crate::inputs;
use crate::params::CircuitParams;
use crate::plan::Plan;
use crate::registered;
use crate::shapes::with_tree;
use crate::vanilla;

/// A SnapDeals request as Curio sends it.
#[derive(Clone, Debug)]
pub struct SnapRequest {
    pub registered_proof: u64,
    /// One bincode `PartitionProof` per partition.
    pub vanilla_proofs: Vec<Vec<u8>>,
    pub comm_r_old: Vec<u8>,
    pub comm_r_new: Vec<u8>,
    pub comm_d_new: Vec<u8>,
}

/// The circuits of one update proof, one per partition.
pub struct SnapCircuits<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    pub params: CircuitParams,
    pub circuits: Vec<EmptySectorUpdateCircuit<Tree>>,
}

/// The three commitments of an update, 32 bytes each.
#[derive(Clone, Copy, Debug)]
pub struct Commitments {
    pub comm_r_old: [u8; 32],
    pub comm_r_new: [u8; 32],
    pub comm_d_new: [u8; 32],
}

pub(crate) fn plan(req: &SnapRequest) -> Result<Plan> {
    let proof = registered::update_proof(req.registered_proof)?;
    let comms = Commitments {
        comm_r_old: inputs::bytes32(&req.comm_r_old, "comm_r_old")?,
        comm_r_new: inputs::bytes32(&req.comm_r_new, "comm_r_new")?,
        comm_d_new: inputs::bytes32(&req.comm_d_new, "comm_d_new")?,
    };
    inputs::non_empty(&req.vanilla_proofs, "partition vanilla proofs")?;
    let size = u64::from(proof.sector_size());
    let built = with_tree!(size, build, proof, &req.vanilla_proofs, comms)?;
    let verify = move |bytes: &[u8]| {
        verify_empty_sector_update_proof(
            proof,
            bytes,
            comms.comm_r_old,
            comms.comm_r_new,
            comms.comm_d_new,
        )
        .map_err(|e| {
            FilecoinError::filecoin("filecoin-proofs' verify_empty_sector_update_proof", e)
        })
    };
    Ok(built.with_verifier("SnapDeals", verify))
}

fn build<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
    vanilla: &[Vec<u8>],
    comms: Commitments,
) -> Result<Plan> {
    let partitions = vanilla
        .iter()
        .enumerate()
        .map(|(i, b)| {
            inputs::bincode_decode::<PartitionProof<Tree>>(
                b,
                &format!("partition vanilla proof {i}"),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let c = circuits::<Tree>(proof, partitions, comms)?;
    Ok(Plan::new(c.params, c.circuits))
}

/// The circuits of a request (for comparisons with other provers).
pub fn request_circuits<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    req: &SnapRequest,
) -> Result<SnapCircuits<Tree>> {
    let proof = registered::update_proof(req.registered_proof)?;
    let comms = Commitments {
        comm_r_old: inputs::bytes32(&req.comm_r_old, "comm_r_old")?,
        comm_r_new: inputs::bytes32(&req.comm_r_new, "comm_r_new")?,
        comm_d_new: inputs::bytes32(&req.comm_d_new, "comm_d_new")?,
    };
    let vanilla = req
        .vanilla_proofs
        .iter()
        .map(|b| inputs::bincode_decode(b, "a partition vanilla proof"))
        .collect::<Result<Vec<_>>>()?;
    circuits::<Tree>(proof, vanilla, comms)
}

/// The partitions' circuits, exactly as filecoin-proofs makes them, built only after
/// storage-proofs' vanilla verification of every partition proof passes.
pub fn circuits<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
    partition_proofs: Vec<PartitionProof<Tree>>,
    comms: Commitments,
) -> Result<SnapCircuits<Tree>> {
    let err = |e| FilecoinError::filecoin("SnapDeals", e);
    let porep_config: PoRepConfig = proof.as_v1_config();
    let config = SectorUpdateConfig::from_porep_config(&porep_config);
    let partitions = usize::from(config.update_partitions);
    if partition_proofs.len() != partitions {
        return Err(FilecoinError::input(format!(
            "{proof:?} has {partitions} partitions; {} partition vanilla proofs were given",
            partition_proofs.len()
        )));
    }
    // storage-proofs reads the commitments as field elements and panics on others.
    for (name, bytes) in [
        ("comm_r_old", &comms.comm_r_old),
        ("comm_r_new", &comms.comm_r_new),
        ("comm_d_new", &comms.comm_d_new),
    ] {
        if !vanilla::is_field_element(bytes) {
            return Err(FilecoinError::input(format!(
                "{name} is not a field element (above the BLS12-381 scalar modulus)"
            )));
        }
    }
    let domain = |bytes: &[u8; 32], name: &str| {
        <TreeRHasher as Hasher>::Domain::try_from_bytes(bytes)
            .map_err(|e| FilecoinError::input(format!("{name} is not a field element: {e:#}")))
    };
    let public_inputs = PublicInputs {
        k: partitions,
        comm_r_old: domain(&comms.comm_r_old, "comm_r_old")?,
        comm_d_new: DefaultPieceDomain::try_from_bytes(&comms.comm_d_new).map_err(|e| {
            FilecoinError::input(format!("comm_d_new is not a field element: {e:#}"))
        })?,
        comm_r_new: domain(&comms.comm_r_new, "comm_r_new")?,
        h: config.h,
    };
    let setup = compound_proof::SetupParams {
        vanilla_params: SetupParams {
            sector_bytes: u64::from(config.sector_size),
        },
        partitions: Some(partitions),
        priority: false,
    };
    let compound = EmptySectorUpdateCompound::<Tree>::setup(&setup).map_err(err)?;
    // filecoin-proofs proves without verifying the partition proofs first.
    vanilla::snap(&compound.vanilla_params, &public_inputs, &partition_proofs)?;
    let circuits = vanilla::guarded("vanilla_proofs", || {
        partition_proofs
            .iter()
            .enumerate()
            .map(|(k, p)| {
                EmptySectorUpdateCompound::<Tree>::circuit(
                    &public_inputs,
                    (),
                    p,
                    &compound.vanilla_params,
                    Some(k),
                )
                .map_err(err)
            })
            .collect::<Result<Vec<_>>>()
    })?;
    Ok(SnapCircuits {
        params: params::<Tree>(proof),
        circuits,
    })
}

/// The parameter set filecoin-proofs loads for an update proof (the
/// `empty-sector-update` one, not the PoRep file the api's `cache_params_path`
/// names).
pub fn params<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
) -> CircuitParams {
    let size = u64::from(proof.sector_size());
    let pp = PublicParams::from_sector_size(size);
    let cache_id = <EmptySectorUpdateCompound<Tree> as CacheableParameters<
        EmptySectorUpdateCircuit<Tree>,
        PublicParams,
    >>::cache_identifier(&pp);
    CircuitParams::new("snap", size, cache_id)
}

/// The blank circuit parameters are generated from.
pub fn blank_circuit<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
) -> EmptySectorUpdateCircuit<Tree> {
    let pp = PublicParams::from_sector_size(u64::from(proof.sector_size()));
    <EmptySectorUpdateCompound<Tree> as CompoundProof<
        EmptySectorUpdate<Tree>,
        EmptySectorUpdateCircuit<Tree>,
    >>::blank_circuit(&pp)
}

//! The vanilla proofs of every kind, checked before any circuit is built: their
//! structure (counts, Merkle path shapes, every value a field element) and then
//! storage-proofs' own vanilla verification. rust-fil-proofs indexes, asserts and
//! converts field elements without checking, so a malformed proof that reached it
//! would panic; here each fault is one line naming the request field at fault.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ff::PrimeField;
use filecoin_hashers::{Domain, HashFunction, Hasher, PoseidonArity};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::types::{PoStConfig, PoStType};
use filecoin_proofs::{FallbackPoStSectorProof, TreeRHasher};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{
    base_path_length, MerkleProof, MerkleProofTrait, MerkleTreeTrait,
};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{self, StackedDrg};
use storage_proofs_post::fallback::{self, generate_leaf_challenge, get_challenge_index};
use storage_proofs_update::{Challenges, EmptySectorUpdate, PartitionProof};

use crate::error::{FilecoinError, Result};

/// Runs a check of rust-fil-proofs, a panic inside it becoming an input error that
/// names `what` (the daemon must answer malformed input, not report a bug).
pub(crate) fn guarded<T>(what: &str, check: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(check)).unwrap_or_else(|payload| {
        let first_line = panic_first_line(payload.as_ref()).unwrap_or("rust-fil-proofs refused it");
        Err(FilecoinError::input(format!(
            "{what}: malformed: {first_line}"
        )))
    })
}

/// The first line of a panic's message, if it carried one.
pub fn panic_first_line(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .map(|m| m.lines().next().unwrap_or_default().trim())
}

/// Whether 32 bytes are a canonical BLS12-381 scalar, as every conversion of
/// storage-proofs expects (it panics on any other).
pub(crate) fn is_field_element(bytes: &[u8]) -> bool {
    let Ok(repr) = <[u8; 32]>::try_from(bytes) else {
        return false;
    };
    blstrs::Scalar::from_repr_vartime(repr).is_some()
}

fn field_element<D: Domain>(value: &D, what: impl FnOnce() -> String) -> Result<()> {
    if is_field_element(value.as_ref()) {
        return Ok(());
    }
    Err(FilecoinError::input(format!(
        "{} is not a field element (above the BLS12-381 scalar modulus)",
        what()
    )))
}

/// The arity of a tree level type: storage-proofs' blank one-level proof holds
/// `arity` siblings (typenum itself is no dependency of this crate).
fn arity<H: Hasher, A: 'static + PoseidonArity>() -> usize {
    MerkleProof::<H, A>::new(1)
        .path()
        .first()
        .map_or(0, |(siblings, _)| siblings.len())
}

/// The arity of each level of a path from a leaf to the root of a tree of
/// `leaves` leaves: base levels, then one sub-tree level and one top level where
/// the tree has them.
fn tree_levels<P: MerkleProofTrait>(leaves: usize) -> Vec<usize> {
    let base = base_path_length::<P::Arity, P::SubTreeArity, P::TopTreeArity>(leaves);
    let mut levels = vec![arity::<P::Hasher, P::Arity>(); base];
    for upper in [
        arity::<P::Hasher, P::SubTreeArity>(),
        arity::<P::Hasher, P::TopTreeArity>(),
    ] {
        if upper > 0 {
            levels.push(upper);
        }
    }
    levels
}

/// [`tree_levels`] of the tree type `example` is a proof of.
fn tree_levels_like<P: MerkleProofTrait>(_example: &P, leaves: usize) -> Vec<usize> {
    tree_levels::<P>(leaves)
}

/// A Merkle proof's shape in a tree of `levels` (from [`tree_levels`]): one path
/// element a level, each with arity − 1 siblings and a position below the arity,
/// every value a field element. Hashing a path of another shape panics in
/// storage-proofs.
fn merkle_shape<P: MerkleProofTrait>(
    proof: &P,
    levels: &[usize],
    what: &dyn Fn() -> String,
) -> Result<()> {
    let path = proof.path();
    let fault = |why: String| Err(FilecoinError::input(format!("{}: {why}", what())));
    if path.len() != levels.len() {
        return fault(format!(
            "its Merkle path has {} levels; the tree has {}",
            path.len(),
            levels.len()
        ));
    }
    for (level, ((siblings, position), &arity)) in path.iter().zip(levels).enumerate() {
        if siblings.len() + 1 != arity {
            return fault(format!(
                "level {level} of its Merkle path has {} siblings; arity {arity} has {}",
                siblings.len(),
                arity - 1
            ));
        }
        if *position >= arity {
            return fault(format!(
                "level {level} of its Merkle path places the node at {position}, not below arity {arity}"
            ));
        }
        if let Some(j) = siblings.iter().position(|s| !is_field_element(s.as_ref())) {
            return fault(format!(
                "sibling {j} at level {level} of its Merkle path is not a field element"
            ));
        }
    }
    field_element(&proof.leaf(), || format!("{}: its leaf", what()))?;
    field_element(&proof.root(), || format!("{}: its root", what()))
}

/// An error of rust-fil-proofs about the vanilla proofs, on one line after the
/// request field it concerns.
pub(crate) fn refused(what: &str, e: anyhow::Error) -> FilecoinError {
    FilecoinError::input(format!("{what}: {}", format!("{e:#}").replace('\n', " ")))
}

/// Structure of PoSt vanilla proofs (one per sector, in request order): no sector
/// twice, one sector proof each with one inclusion proof per challenge, paths of
/// the tree's shape, every value a field element, and comm_r = H(comm_c,
/// comm_r_last) with comm_r_last the root of every path.
pub(crate) fn post_structure<Tree: 'static + MerkleTreeTrait>(
    config: &PoStConfig,
    sectors: &[FallbackPoStSectorProof<Tree>],
) -> Result<()> {
    let kind = kind_name(&config.typ);
    let levels = tree_levels::<Tree::Proof>(u64::from(config.sector_size) as usize / 32);
    let mut seen = HashMap::new();
    for (i, sector) in sectors.iter().enumerate() {
        let id = u64::from(sector.sector_id);
        let at = || format!("vanilla_proofs[{i}] (sector {id})");
        if let Some(first) = seen.insert(id, i) {
            return Err(FilecoinError::input(format!(
                "{}: sector {id} is already proved by vanilla_proofs[{first}]",
                at()
            )));
        }
        field_element(&sector.comm_r, || format!("{}: comm_r", at()))?;
        let [proof] = sector.vanilla_proof.sectors.as_slice() else {
            return Err(FilecoinError::input(format!(
                "{}: holds {} sector proofs; a {kind} vanilla proof holds one",
                at(),
                sector.vanilla_proof.sectors.len()
            )));
        };
        field_element(&proof.comm_c, || format!("{}: comm_c", at()))?;
        field_element(&proof.comm_r_last, || format!("{}: comm_r_last", at()))?;
        let inclusion = proof.inclusion_proofs();
        if inclusion.len() != config.challenge_count {
            return Err(FilecoinError::input(format!(
                "{}: holds {} inclusion proofs; {kind} challenges a sector {} times",
                at(),
                inclusion.len(),
                config.challenge_count
            )));
        }
        for (n, p) in inclusion.iter().enumerate() {
            merkle_shape(p, &levels, &|| format!("{}: inclusion proof {n}", at()))?;
            if p.root() != proof.comm_r_last {
                return Err(FilecoinError::input(format!(
                    "{}: inclusion proof {n} has another root than the sector proof's comm_r_last",
                    at()
                )));
            }
        }
        let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&proof.comm_c, &proof.comm_r_last);
        if comm_r != sector.comm_r {
            return Err(FilecoinError::input(format!(
                "{}: comm_r is not H(comm_c, comm_r_last) of its sector proof (corrupted, or another sector's proof)",
                at()
            )));
        }
    }
    Ok(())
}

/// Each inclusion proof of PoSt vanilla proofs opens the leaf its challenge picks,
/// by the circuit's own challenge derivation (the vanilla verification of a
/// WinningPoSt checks only the first of its inclusion proofs).
pub(crate) fn post_challenges<Tree: 'static + MerkleTreeTrait>(
    pub_params: &fallback::PublicParams,
    typ: &PoStType,
    randomness: <Tree::Hasher as Hasher>::Domain,
    partition_index: usize,
    sectors: &[FallbackPoStSectorProof<Tree>],
) -> Result<()> {
    let winning = *typ == PoStType::Winning;
    for (i, sector) in sectors.iter().enumerate() {
        let id = u64::from(sector.sector_id);
        let Some(proof) = sector.vanilla_proof.sectors.first() else {
            continue;
        };
        for (n, p) in proof.inclusion_proofs().iter().enumerate() {
            // WinningPoSt unrolls one sector's challenges into one circuit sector each.
            let (position, challenge, partition) = match winning {
                true => (n, 0, 0),
                false => (i, n, partition_index),
            };
            let sector_index = partition * pub_params.sector_count + position;
            let challenge_index = get_challenge_index(
                pub_params.api_version,
                sector_index,
                pub_params.challenge_count,
                challenge,
            );
            let leaf = generate_leaf_challenge(pub_params, randomness, id, challenge_index);
            let at = format!("vanilla_proofs[{i}] (sector {id}): inclusion proof {n}");
            if !p.verify() {
                return Err(FilecoinError::input(format!(
                    "{at}: its Merkle path does not hash to its root (corrupted)"
                )));
            }
            if p.path_index() as u64 != leaf {
                return Err(FilecoinError::input(format!(
                    "{at} opens leaf {} where this randomness and sector id challenge leaf {leaf}: the vanilla proofs failed to verify (other randomness, or another sector's proof)",
                    p.path_index()
                )));
            }
        }
    }
    Ok(())
}

fn kind_name(typ: &PoStType) -> &'static str {
    match typ {
        PoStType::Winning => "WinningPoSt",
        PoStType::Window => "WindowPoSt",
    }
}

/// SnapDeals partition proofs (one per partition, in request order): counts, path
/// shapes and field elements, the roots against comm_r_old, comm_r_new and
/// comm_d_new, then storage-proofs' vanilla verification of each partition.
pub(crate) fn snap<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    pub_params: &storage_proofs_update::PublicParams,
    public_inputs: &storage_proofs_update::PublicInputs,
    partitions: &[PartitionProof<Tree>],
) -> Result<()> {
    let nodes = pub_params.sector_nodes;
    let r_levels = tree_levels::<Tree::Proof>(nodes);
    let mut d_levels = None;
    for (k, partition) in partitions.iter().enumerate() {
        let at = || format!("vanilla_proofs[{k}] (partition {k})");
        field_element(&partition.comm_c, || format!("{}: comm_c", at()))?;
        if partition.apex_leafs.len() != pub_params.apex_leaf_count {
            return Err(FilecoinError::input(format!(
                "{}: holds {} apex leaves; this sector size has {}",
                at(),
                partition.apex_leafs.len(),
                pub_params.apex_leaf_count
            )));
        }
        for (j, leaf) in partition.apex_leafs.iter().enumerate() {
            field_element(leaf, || format!("{}: apex leaf {j}", at()))?;
        }
        let challenges = &partition.challenge_proofs;
        if challenges.len() != pub_params.challenge_count {
            return Err(FilecoinError::input(format!(
                "{}: holds {} challenge proofs; a partition of this sector size has {}",
                at(),
                challenges.len(),
                pub_params.challenge_count
            )));
        }
        for (j, c) in challenges.iter().enumerate() {
            merkle_shape(&c.proof_r_old, &r_levels, &|| {
                format!("{}: challenge {j}'s TreeROld proof", at())
            })?;
            let d_levels = d_levels.get_or_insert_with(|| tree_levels_like(&c.proof_d_new, nodes));
            merkle_shape(&c.proof_d_new, d_levels, &|| {
                format!("{}: challenge {j}'s TreeDNew proof", at())
            })?;
            merkle_shape(&c.proof_r_new, &r_levels, &|| {
                format!("{}: challenge {j}'s TreeRNew proof", at())
            })?;
        }
        let Some(first) = challenges.first() else {
            continue;
        };
        let hash2 = <TreeRHasher as Hasher>::Function::hash2;
        for (name, root, comm) in [
            (
                "comm_r_old",
                first.proof_r_old.root(),
                public_inputs.comm_r_old,
            ),
            (
                "comm_r_new",
                first.proof_r_new.root(),
                public_inputs.comm_r_new,
            ),
        ] {
            if hash2(&partition.comm_c, &root) != comm {
                return Err(FilecoinError::input(format!(
                    "{}: H(comm_c, tree root) is not the request's {name} (another sector's proof, or a wrong {name})",
                    at()
                )));
            }
        }
        if first.proof_d_new.root() != public_inputs.comm_d_new {
            return Err(FilecoinError::input(format!(
                "{}: its TreeDNew root is not the request's comm_d_new",
                at()
            )));
        }
        let inputs = EmptySectorUpdate::<Tree>::with_partition(public_inputs.clone(), Some(k));
        let verified = guarded(&at(), || {
            EmptySectorUpdate::<Tree>::verify(pub_params, &inputs, partition)
                .map_err(|e| refused(&at(), e))
        })?;
        if verified {
            continue;
        }
        let (r_old, r_new) = (first.proof_r_old.root(), first.proof_r_new.root());
        let d_new = public_inputs.comm_d_new;
        let picked = Challenges::new(nodes, public_inputs.comm_r_new, k);
        for (j, (c, proof)) in picked.zip(challenges).enumerate() {
            if !proof.verify_merkle_proofs(c, &r_old, &d_new, &r_new) {
                return Err(FilecoinError::input(format!(
                    "{}: challenge {j}'s Merkle proofs do not open challenged node {c} (corrupted, or proofs of other commitments)",
                    at()
                )));
            }
        }
        return Err(FilecoinError::input(format!(
            "{}: does not verify against comm_r_old, comm_r_new and comm_d_new: the replica encoding or the apex leaves are wrong",
            at()
        )));
    }
    Ok(())
}

/// A column proof's private parts, read back through its own serde encoding
/// (`ColumnProof`'s fields are private to storage-proofs-porep): the column's
/// index and rows, its phantom marker, and the inclusion proof of its hash.
#[derive(Deserialize)]
struct ColumnParts<D, P> {
    _index: u32,
    rows: Vec<D>,
    _hasher: PhantomData<()>,
    inclusion_proof: P,
}

/// A labeling or encoding proof's private parts, read back likewise.
#[derive(Deserialize)]
struct ParentsParts<D> {
    parents: Vec<D>,
    _layer_index: u32,
    _node: u64,
}

/// Re-reads a value through its serde encoding as `T`, the layout it is written in.
fn parts<T: DeserializeOwned>(value: &impl Serialize, what: &dyn Fn() -> String) -> Result<T> {
    bincode::serialize(value)
        .and_then(|bytes| bincode::deserialize(&bytes))
        .map_err(|e| FilecoinError::input(format!("{}: unreadable: {e}", what())))
}

type PoRepProof<Tree> = stacked::Proof<Tree, DefaultPieceHasher>;
type PoRepInputs<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain,
    <DefaultPieceHasher as Hasher>::Domain,
>;

/// A C1 output's vanilla proofs (partitions of challenge proofs): counts, path
/// shapes, column heights and field elements, then storage-proofs' vanilla
/// verification, which `seal_commit_phase2` leaves to C1.
pub(crate) fn porep<Tree: 'static + MerkleTreeTrait>(
    setup: &stacked::SetupParams,
    pub_params: &stacked::PublicParams<Tree>,
    public_inputs: &PoRepInputs<Tree>,
    partitions: &[Vec<PoRepProof<Tree>>],
) -> Result<()> {
    let nodes = setup.nodes;
    let layers = setup.num_layers;
    let r_levels = tree_levels::<Tree::Proof>(nodes);
    let mut d_levels = None;
    for (k, proofs) in partitions.iter().enumerate() {
        let challenges = public_inputs.challenges(
            &pub_params.challenges,
            Graph::size(&pub_params.graph),
            Some(k),
        );
        if proofs.len() != challenges.len() {
            return Err(FilecoinError::input(format!(
                "the C1 output's partition {k} holds {} challenge proofs; it has {} challenges",
                proofs.len(),
                challenges.len()
            )));
        }
        for (i, proof) in proofs.iter().enumerate() {
            let at = || format!("the C1 output's vanilla_proofs[{k}][{i}]");
            let d_levels =
                d_levels.get_or_insert_with(|| tree_levels_like(&proof.comm_d_proofs, nodes));
            merkle_shape(&proof.comm_d_proofs, d_levels, &|| {
                format!("{}: comm_d_proofs", at())
            })?;
            merkle_shape(&proof.comm_r_last_proof, &r_levels, &|| {
                format!("{}: comm_r_last_proof", at())
            })?;
            let columns = &proof.replica_column_proofs;
            for (name, list, expected) in [
                ("drg_parents", &columns.drg_parents, setup.degree),
                ("exp_parents", &columns.exp_parents, setup.expansion_degree),
            ] {
                if list.len() != expected {
                    return Err(FilecoinError::input(format!(
                        "{}: holds {} {name} columns; the graph has {expected}",
                        at(),
                        list.len()
                    )));
                }
            }
            let named = std::iter::once((String::from("c_x"), &columns.c_x))
                .chain(
                    (columns.drg_parents.iter().enumerate())
                        .map(|(j, c)| (format!("drg_parents[{j}]"), c)),
                )
                .chain(
                    (columns.exp_parents.iter().enumerate())
                        .map(|(j, c)| (format!("exp_parents[{j}]"), c)),
                );
            for (name, column) in named {
                let what = || format!("{}: column {name}", at());
                let column: ColumnParts<_, <Tree as MerkleTreeTrait>::Proof> =
                    parts(column, &what)?;
                if column.rows.len() != layers {
                    return Err(FilecoinError::input(format!(
                        "{}: has {} rows; the sector has {layers} layers",
                        what(),
                        column.rows.len()
                    )));
                }
                for (row, value) in column.rows.iter().enumerate() {
                    field_element::<<Tree::Hasher as Hasher>::Domain>(value, || {
                        format!("{}: row {row}", what())
                    })?;
                }
                merkle_shape(&column.inclusion_proof, &r_levels, &what)?;
            }
            if proof.labeling_proofs.len() != layers {
                return Err(FilecoinError::input(format!(
                    "{}: holds {} labeling proofs; the sector has {layers} layers",
                    at(),
                    proof.labeling_proofs.len()
                )));
            }
            let labels = proof.labeling_proofs.iter().enumerate();
            let labels = labels.map(|(j, p)| (format!("labeling_proofs[{j}]"), parts(p, &at)));
            let encoding = (
                "encoding_proof".to_string(),
                parts(&proof.encoding_proof, &at),
            );
            for (name, parsed) in labels.chain(std::iter::once(encoding)) {
                let parsed: ParentsParts<<Tree::Hasher as Hasher>::Domain> = parsed?;
                for (j, parent) in parsed.parents.iter().enumerate() {
                    field_element(parent, || format!("{}: {name} parent {j}", at()))?;
                }
            }
        }
    }
    let verified = guarded("the C1 output's vanilla proofs", || {
        StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(
            pub_params,
            public_inputs,
            partitions,
        )
        .map_err(|e| refused("the C1 output's vanilla proofs", e))
    })?;
    if verified {
        return Ok(());
    }
    Err(porep_culprit(pub_params, public_inputs, partitions))
}

/// Names the first challenge proof of a C1 output that storage-proofs refuses.
fn porep_culprit<Tree: 'static + MerkleTreeTrait>(
    pub_params: &stacked::PublicParams<Tree>,
    public_inputs: &PoRepInputs<Tree>,
    partitions: &[Vec<PoRepProof<Tree>>],
) -> FilecoinError {
    let Some(comm_r) = public_inputs.tau.as_ref().map(|t| t.comm_r) else {
        return FilecoinError::input("the C1 output has no comm_r");
    };
    for (k, proofs) in partitions.iter().enumerate() {
        let Some(first) = proofs.first() else {
            continue;
        };
        let (comm_c, comm_r_last) = (first.comm_c(), first.comm_r_last());
        if <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last) != comm_r {
            return FilecoinError::input(format!(
                "the C1 output's comm_r is not H(comm_c, comm_r_last) of its partition {k}'s vanilla proofs"
            ));
        }
        let graph = &pub_params.graph;
        let challenges =
            public_inputs.challenges(&pub_params.challenges, Graph::size(graph), Some(k));
        for (i, (proof, &challenge)) in proofs.iter().zip(&challenges).enumerate() {
            let at = format!("the C1 output's vanilla_proofs[{k}][{i}]");
            if proof.comm_c() != comm_c || proof.comm_r_last() != comm_r_last {
                return FilecoinError::input(format!(
                    "{at}: its comm_c or comm_r_last differs from the partition's first proof"
                ));
            }
            let verified = guarded(&at, || {
                Ok(proof.verify(pub_params, public_inputs, challenge, graph))
            });
            match verified {
                Ok(true) => {}
                Ok(false) => {
                    return FilecoinError::input(format!(
                        "{at} (challenge node {challenge}) does not verify: its openings, labels or encoding are not those of this replica_id, comm_d, comm_r and seed"
                    ))
                }
                Err(e) => return e,
            }
        }
    }
    FilecoinError::input(
        "the C1 output's vanilla proofs do not verify against its comm_d, comm_r, replica_id and seed",
    )
}

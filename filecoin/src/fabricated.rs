//! BENCHMARK WORKLOADS: the real PoRep C2 partition circuit of any sector size, fed
//! with FABRICATED vanilla proofs. Proofs of these circuits NEVER verify.
//!
//! Nobody can seal a 32 GiB sector on a test machine, yet proving its C2 partitions
//! (≈130 M constraints each, a 2^27 domain) must be timed. This module builds the
//! circuit `seal_commit_phase2` would build for one partition — through
//! `StackedCompound::circuit`, with the public inputs and vanilla parameters of
//! filecoin-proofs' `setup_params`, exactly as [`crate::porep::circuits`] does — but
//! from `stacked::Proof` values made up from a seed instead of read from a C1 output:
//!
//! - public inputs: `replica_id`, `comm_d`, `comm_c`, `comm_r_last` and the
//!   interactive `seed` are random; `comm_r = H(comm_c ‖ comm_r_last)` as sealing
//!   makes it. They depend on the seed only, so all partitions of one seed belong to
//!   one made-up sector;
//! - challenges: the real ones filecoin-proofs derives for these public inputs and
//!   partition (`PublicInputs::challenges`), so the challenge inputs and every path's
//!   index bits are what a real proof of that sector would carry;
//! - per challenge: a `comm_d` inclusion proof (binary SHA-256 tree over the whole
//!   sector), a `comm_r_last` proof and column proofs in `comm_c` of the sector
//!   shape's real depth and arities (base, then sub and top tree levels), for the
//!   challenged node and its real DRG (6) and expander (8) parents from the graph;
//!   columns of one random label per layer; labeling proofs (one per layer, the
//!   parents' column values repeated to `TOTAL_PARENTS`, as the vanilla prover
//!   takes them) and the encoding proof of the last layer. Every label, leaf and
//!   path sibling is a random field element of its hasher's domain (ChaCha8 from
//!   the seed).
//!
//! Nothing is consistent (no hash matches), so the witness does not satisfy the
//! circuit — but every value flows through the real gadgets: the constraint system,
//! its densities and the mix of scalars (0/1 bits, hash outputs, field elements) are
//! those of a real partition. Deterministic: one seed and partition, one circuit.
//! Prove these only with an engine job that skips the witness check,
//! `crossgroth::engine::Job::new(id, params, circuits).unchecked_benchmark()`
//! (with the parameters of `Registered::params(ProofKind::PoRep)`); a checked job
//! refuses them, as it must.
//!
//! A 32 GiB partition: 18 challenges (176 over 10 partitions), 130,278,541
//! constraints, 328 inputs (ONE included), 130,169,893 aux: 130,278,869 rows, a
//! 2^27 domain; its direct synthesis takes 90 s on one core and 16 GiB.

use filecoin_hashers::{Domain, HashFunction, Hasher, PoseidonArity};
use filecoin_proofs::constants::{
    DefaultPieceHasher, SectorShapeBase, SectorShapeSub8, SectorShapeTop2,
};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::PoRepConfig;
use filecoin_proofs_api::{ApiFeature, RegisteredSealProof};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{
    base_path_length, MerkleProof, MerkleProofTrait, MerkleTreeTrait,
};
use storage_proofs_porep::stacked::{
    self, ColumnProof, EncodingProof, LabelingProof, ReplicaColumnProof, StackedBucketGraph,
    StackedCircuit, StackedCompound, StackedDrg, TOTAL_PARENTS,
};

use crate::error::{FilecoinError, Result};
use crate::shapes::with_tree;

type TreeDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type PieceDomain = <DefaultPieceHasher as Hasher>::Domain;
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

/// One fabricated partition: the made-up public inputs and vanilla proofs, and the
/// circuit `StackedCompound::circuit` builds from them. BENCHMARK ONLY: proofs of
/// `circuit` never verify.
pub struct Fabricated<Tree: 'static + MerkleTreeTrait> {
    pub partition: usize,
    pub public_inputs: stacked::PublicInputs<TreeDomain<Tree>, PieceDomain>,
    /// One per challenge of the partition, in challenge order.
    pub vanilla_proofs: Vec<stacked::Proof<Tree, DefaultPieceHasher>>,
    pub circuit: StackedCircuit<Tree, DefaultPieceHasher>,
}

/// BENCHMARK ONLY: the real PoRep C2 circuit of `partition` of a `proof` sector
/// (tree shape `Tree`, which must be that sector size's shape), fed with vanilla
/// proofs fabricated from `seed` (see the module documentation); proofs of it never
/// verify. `proof` is a current seal proof (`Registered::for_sector_size(s)?.seal`);
/// non-interactive PoRep is refused.
pub fn porep_partition<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    partition: usize,
    seed: u64,
) -> Result<StackedCircuit<Tree, DefaultPieceHasher>> {
    let config = proof.as_v1_config();
    if config.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Err(FilecoinError::input(format!(
            "{proof:?}: non-interactive PoRep is not supported"
        )));
    }
    Ok(fabricate::<Tree>(&config, partition, seed)?.circuit)
}

/// BENCHMARK ONLY: [`porep_partition`] for any `PoRepConfig` filecoin-proofs can
/// set up — also the test sizes no registered proof names (4 KiB = 8-2-0,
/// 16 KiB = 8-8-0, 32 KiB = 8-8-2 trees) — with the fabricated inputs kept.
pub fn fabricate<Tree: 'static + MerkleTreeTrait>(
    config: &PoRepConfig,
    partition: usize,
    seed: u64,
) -> Result<Fabricated<Tree>> {
    let err = |e| FilecoinError::filecoin("the PoRep public parameters", e);
    let partitions = usize::from(config.partitions);
    if partition >= partitions {
        return Err(FilecoinError::input(format!(
            "partition {partition} of a {}-partition PoRep",
            partitions
        )));
    }
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
    let pp = &compound.vanilla_params;
    let graph = &pp.graph;

    // The made-up sector: the same for every partition of one seed.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let replica_id = TreeDomain::<Tree>::random(&mut rng);
    let comm_d = PieceDomain::random(&mut rng);
    let comm_c = TreeDomain::<Tree>::random(&mut rng);
    let comm_r_last = TreeDomain::<Tree>::random(&mut rng);
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);
    let mut interactive_seed = [0u8; 32];
    rng.fill_bytes(&mut interactive_seed);
    let public_inputs = stacked::PublicInputs {
        replica_id,
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(interactive_seed),
    };

    // This partition's openings: a stream of its own.
    let mut key = [0u8; 32];
    rng.fill_bytes(&mut key);
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(partition as u64);
    let challenges = public_inputs.challenges(&pp.challenges, graph.size(), Some(partition));
    let expected = pp.challenges.num_challenges_per_partition();
    if challenges.len() != expected {
        return Err(FilecoinError::input(format!(
            "{} challenges derived for partition {partition}, {expected} expected",
            challenges.len()
        )));
    }
    let roots = Roots {
        comm_d,
        comm_c,
        comm_r_last,
    };
    let vanilla_proofs = challenges
        .into_iter()
        .map(|c| challenge_proof::<Tree>(&mut rng, graph, pp.num_layers, c, &roots))
        .collect::<Result<Vec<_>>>()?;
    let circuit = StackedCompound::<Tree, DefaultPieceHasher>::circuit(
        &public_inputs,
        (),
        &vanilla_proofs,
        pp,
        Some(partition),
    )
    .map_err(|e| FilecoinError::filecoin("the fabricated vanilla proofs", e))?;
    Ok(Fabricated {
        partition,
        public_inputs,
        vanilla_proofs,
        circuit,
    })
}

struct Roots<D: Domain, P: Domain> {
    comm_d: P,
    comm_c: D,
    comm_r_last: D,
}

/// The vanilla proof of one challenge, as `prove_layers_generate` assembles it, with
/// random labels, leaves and siblings.
fn challenge_proof<Tree: 'static + MerkleTreeTrait>(
    rng: &mut ChaCha8Rng,
    graph: &StackedBucketGraph<Tree::Hasher>,
    num_layers: usize,
    challenge: usize,
    roots: &Roots<TreeDomain<Tree>, PieceDomain>,
) -> Result<stacked::Proof<Tree, DefaultPieceHasher>> {
    let nodes = graph.size();
    let comm_d_proofs = inclusion_proof(rng, nodes, challenge, roots.comm_d)?;
    let mut column = |node: u32| -> Result<ColumnProof<TreeProof<Tree>>> {
        let rows = (0..num_layers)
            .map(|_| TreeDomain::<Tree>::random(rng))
            .collect();
        let proof = inclusion_proof(rng, nodes, node as usize, roots.comm_c)?;
        Ok(ColumnProof::new(node, rows, proof))
    };
    let c_x = column(challenge as u32)?;
    let mut parents = vec![0u32; graph.degree()];
    graph
        .parents(challenge, &mut parents)
        .map_err(|e| FilecoinError::filecoin("the PoRep graph", e))?;
    let (drg, exp) = parents.split_at(graph.base_graph().degree());
    let drg_parents = drg.iter().map(|&p| column(p)).collect::<Result<Vec<_>>>()?;
    let exp_parents = exp.iter().map(|&p| column(p)).collect::<Result<Vec<_>>>()?;
    let comm_r_last_proof = inclusion_proof(rng, nodes, challenge, roots.comm_r_last)?;

    // Layer 1 hashes the DRG parents' labels of layer 1; layer l > 1 those of layer l
    // and the expander parents' of layer l − 1; repeated to TOTAL_PARENTS.
    let label = |c: &ColumnProof<TreeProof<Tree>>, layer: usize| -> Result<TreeDomain<Tree>> {
        c.get_node_at_layer(layer)
            .copied()
            .map_err(|e| FilecoinError::filecoin("a fabricated column", e))
    };
    let mut labeling_proofs = Vec::with_capacity(num_layers);
    let mut encoding_parents = Vec::new();
    for layer in 1..=num_layers {
        let mut data = drg_parents
            .iter()
            .map(|c| label(c, layer))
            .collect::<Result<Vec<_>>>()?;
        if layer > 1 {
            for c in &exp_parents {
                data.push(label(c, layer - 1)?);
            }
        }
        let full: Vec<_> = data.iter().copied().cycle().take(TOTAL_PARENTS).collect();
        if layer == num_layers {
            encoding_parents = full.clone();
        }
        labeling_proofs.push(LabelingProof::new(layer as u32, challenge as u64, full));
    }
    // The encoding key is the last layer's label.
    let encoding_proof = EncodingProof::new(num_layers as u32, challenge as u64, encoding_parents);

    Ok(stacked::Proof {
        comm_d_proofs,
        comm_r_last_proof,
        replica_column_proofs: ReplicaColumnProof {
            c_x,
            drg_parents,
            exp_parents,
        },
        labeling_proofs,
        encoding_proof,
    })
}

/// A Merkle inclusion proof of `node` among `leaves` in a tree of base arity `A`
/// with sub-tree arity `B` and top-tree arity `C` (0: none) — the real depth and
/// the real index at each level, a random leaf and random siblings — to `root`.
fn inclusion_proof<H, A, B, C>(
    rng: &mut ChaCha8Rng,
    leaves: usize,
    node: usize,
    root: H::Domain,
) -> Result<MerkleProof<H, A, B, C>>
where
    H: 'static + Hasher,
    A: 'static + PoseidonArity,
    B: 'static + PoseidonArity,
    C: 'static + PoseidonArity,
{
    let mut arities = vec![A::to_usize(); base_path_length::<A, B, C>(leaves)];
    arities.extend(
        [B::to_usize(), C::to_usize()]
            .into_iter()
            .filter(|&a| a > 0),
    );
    if arities.iter().product::<usize>() != leaves || node >= leaves {
        return Err(FilecoinError::input(format!(
            "a {}-{}-{} tree does not hold node {node} of {leaves}",
            A::to_usize(),
            B::to_usize(),
            C::to_usize()
        )));
    }
    let mut rest = node;
    let path = arities
        .iter()
        .map(|&arity| {
            let index = rest % arity;
            rest /= arity;
            let siblings = (1..arity).map(|_| H::Domain::random(rng)).collect();
            (siblings, index)
        })
        .collect();
    let proof = MerkleProof::<H, A, B, C>::from_parts(H::Domain::random(rng), root, path);
    debug_assert_eq!(proof.path_index(), node);
    Ok(proof)
}

/// A fabricated partition circuit of any registered sector size, for callers that
/// do not name the tree shape: it synthesizes as the circuit it holds.
#[derive(Clone)]
pub enum PoRepPartition {
    /// 2 KiB, 8 MiB, 512 MiB: 8-0-0 trees.
    Base(StackedCircuit<SectorShapeBase, DefaultPieceHasher>),
    /// 32 GiB: 8-8-0 trees.
    Sub8(StackedCircuit<SectorShapeSub8, DefaultPieceHasher>),
    /// 64 GiB: 8-8-2 trees.
    Top2(StackedCircuit<SectorShapeTop2, DefaultPieceHasher>),
}

impl From<StackedCircuit<SectorShapeBase, DefaultPieceHasher>> for PoRepPartition {
    fn from(c: StackedCircuit<SectorShapeBase, DefaultPieceHasher>) -> Self {
        PoRepPartition::Base(c)
    }
}

impl From<StackedCircuit<SectorShapeSub8, DefaultPieceHasher>> for PoRepPartition {
    fn from(c: StackedCircuit<SectorShapeSub8, DefaultPieceHasher>) -> Self {
        PoRepPartition::Sub8(c)
    }
}

impl From<StackedCircuit<SectorShapeTop2, DefaultPieceHasher>> for PoRepPartition {
    fn from(c: StackedCircuit<SectorShapeTop2, DefaultPieceHasher>) -> Self {
        PoRepPartition::Top2(c)
    }
}

impl crossgroth::Circuit<crossgroth::Scalar> for PoRepPartition {
    fn synthesize<CS: crossgroth::ConstraintSystem<crossgroth::Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), crossgroth::SynthesisError> {
        use crossgroth::Circuit;
        match self {
            PoRepPartition::Base(c) => Circuit::synthesize(c, cs),
            PoRepPartition::Sub8(c) => Circuit::synthesize(c, cs),
            PoRepPartition::Top2(c) => Circuit::synthesize(c, cs),
        }
    }
}

/// BENCHMARK ONLY: [`porep_partition`] of the current seal proof of a registered
/// sector size (in bytes), with its tree shape; an unknown size is an error.
pub fn porep_partition_for_size(
    sector_size: u64,
    partition: usize,
    seed: u64,
) -> Result<PoRepPartition> {
    let proof = crate::Registered::for_sector_size(sector_size)?.seal;
    with_tree!(sector_size, wrapped, proof, partition, seed)
}

/// How many partitions the current seal proof of a registered sector size has.
pub fn porep_partitions(sector_size: u64) -> Result<usize> {
    let proof = crate::Registered::for_sector_size(sector_size)?.seal;
    Ok(usize::from(proof.as_v1_config().partitions))
}

fn wrapped<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    partition: usize,
    seed: u64,
) -> Result<PoRepPartition>
where
    StackedCircuit<Tree, DefaultPieceHasher>: Into<PoRepPartition>,
{
    Ok(porep_partition::<Tree>(proof, partition, seed)?.into())
}

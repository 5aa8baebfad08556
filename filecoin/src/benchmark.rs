//! BENCHMARK workloads at Filecoin scale: the real PoRep partition circuit of a
//! sector size, fed with fabricated vanilla proofs ([`crate::fabricated`]), as
//! engine work. The witnesses are not satisfied: jobs of these synthesizers must
//! be submitted with `Job::unchecked_benchmark`, and their proofs are never
//! valid. What is real: the constraint system, its densities and the mix of
//! scalars the prover sees.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossgroth::engine::Synthesizer;
use crossgroth::synthesis::{self, RecordedShape};
use storage_proofs_core::merkle::MerkleTreeTrait;

use crate::error::{FilecoinError, Result};
use crate::shapes::with_tree;
use crate::Registered;

/// A sector size's PoRep partition as a benchmark workload.
pub struct PoRepBenchmark {
    sector_size: u64,
    /// The blank circuit's shape (parameters and recorded synthesis use it).
    pub shape: Arc<RecordedShape>,
    /// How long recording the shape took (one core).
    pub recorded_in: Duration,
}

impl PoRepBenchmark {
    /// Records the shape of `sector_size`'s PoRep partition circuit (minutes on
    /// one core at 32 GiB: ~130 M constraints).
    pub fn record(sector_size: u64) -> Result<Self> {
        let proof = Registered::for_sector_size(sector_size)?.seal;
        let started = Instant::now();
        let blank = with_tree!(sector_size, blank, proof)?;
        let shape = blank.map_err(FilecoinError::Proving)?;
        Ok(PoRepBenchmark {
            sector_size,
            shape: Arc::new(shape),
            recorded_in: started.elapsed(),
        })
    }

    /// Partitions of one seal proof of this sector size.
    pub fn partitions(&self) -> Result<usize> {
        let proof = Registered::for_sector_size(self.sector_size)?.seal;
        Ok(usize::from(proof.as_v1_config().partitions))
    }

    /// One synthesizer per partition index in `partitions` (fabricated from
    /// `seed` and the index), synthesizing from the recorded shape or directly.
    /// The circuit is built inside the synthesizer, so queued work holds no
    /// fabricated proofs.
    pub fn synthesizers(
        &self,
        partitions: std::ops::Range<usize>,
        seed: u64,
        recorded: bool,
    ) -> Result<Vec<Synthesizer>> {
        let shape = recorded.then(|| self.shape.clone());
        let proof = Registered::for_sector_size(self.sector_size)?.seal;
        with_tree!(
            self.sector_size,
            synthesizers,
            proof,
            partitions,
            seed,
            shape
        )
    }
}

fn blank<Tree: 'static + MerkleTreeTrait>(
    proof: crate::RegisteredSealProof,
) -> Result<crossgroth::error::Result<RecordedShape>> {
    let circuit = crate::porep::blank_circuit::<Tree>(proof)?;
    Ok(RecordedShape::record(circuit).map(|(shape, _)| shape))
}

fn synthesizers<Tree: 'static + MerkleTreeTrait>(
    proof: crate::RegisteredSealProof,
    partitions: std::ops::Range<usize>,
    seed: u64,
    shape: Option<Arc<RecordedShape>>,
) -> Result<Vec<Synthesizer>> {
    Ok(partitions
        .map(|k| {
            let shape = shape.clone();
            Box::new(move || {
                let circuit =
                    crate::fabricated::porep_partition::<Tree>(proof, k, seed).map_err(|e| {
                        crossgroth::Error::Invalid(format!("fabricating partition {k}: {e}"))
                    })?;
                match &shape {
                    Some(s) => s.witness(circuit),
                    None => synthesis::synthesize(circuit),
                }
            }) as Synthesizer
        })
        .collect())
}

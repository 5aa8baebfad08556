//! Every Filecoin kind at 2 KiB, same run, cpu: crossgroth's prover (from the
//! recorded shape, as every proof after a circuit's first; and synthesizing
//! directly) against filecoin-proofs' own function on bellperson. The prover's
//! default takes the faster of the two per kind (recorded for PoRep C2 and
//! SnapDeals, direct for PoSt). Target:
//! crossgroth ≥ 1.5× on 2 cores, ≥ 1.2× on 16. crossgroth's time includes
//! filecoin-proofs' verification of its output (filecoin-proofs' PoSt and update
//! functions do not verify; its C2 does).
//!
//! `CROSSGROTH_TEST_FILECOIN_PARAMS=<dir>` keeps the parameters between runs
//! (PoRep's take minutes to generate).

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use crossgroth::backend::{open_backend, BackendKind};
use crossgroth::engine::{Engine, EngineConfig, Priority};
use crossgroth_filecoin::test_sector::{self, TestKind, TestSector};
use crossgroth_filecoin::{
    inputs, write_insecure_params, FilecoinOptions, FilecoinProver, ParamsCache, ProofKind, Request,
};
use filecoin_proofs_api::{post, seal, update, PartitionProofBytes, SectorId};

const SIZE: u64 = 2048;

fn setup() -> (tempfile::TempDir, PathBuf, TestSector) {
    let dir = tempfile::tempdir().unwrap();
    let params = std::env::var_os("CROSSGROTH_TEST_FILECOIN_PARAMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.path().join("params"));
    std::fs::create_dir_all(&params).unwrap();
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.path().join("parents"));
    let kinds = [TestKind::PoRep, TestKind::PoSt, TestKind::Snap];
    let sector = test_sector::make(SIZE, &kinds, &dir.path().join("sector"), 9).unwrap();
    for kind in ProofKind::ALL {
        write_insecure_params(kind, SIZE, &params, 11, None).unwrap();
    }
    (dir, params, sector)
}

fn prover(params: &std::path::Path, recorded_shapes: bool) -> FilecoinProver {
    let engine = Engine::start(
        EngineConfig::default(),
        vec![open_backend(BackendKind::Cpu).unwrap()],
    )
    .unwrap();
    FilecoinProver::new(
        Arc::new(engine),
        ParamsCache::open(params).unwrap(),
        FilecoinOptions {
            recorded_shapes,
            record_every_kind: recorded_shapes,
            shapes_dir: None,
        },
    )
}

/// filecoin-proofs' own function for the request (bellperson on the cpu).
fn filecoin_proofs(request: &Request, sector: &TestSector) -> Vec<u8> {
    match request {
        Request::PoRep(q) => {
            let c1 = inputs::decode_c1(&q.c1).unwrap().output;
            let prover_id = inputs::prover_id(q.miner_id);
            let sector_id = SectorId::from(sector.sector_number);
            seal::seal_commit_phase2(c1, prover_id, sector_id)
                .unwrap()
                .proof
        }
        Request::WinningPoSt(q) => {
            let randomness: [u8; 32] = q.randomness.clone().try_into().unwrap();
            let proof = sector.registered.winning;
            let out = post::generate_winning_post_with_vanilla(
                proof,
                &randomness,
                inputs::prover_id(q.miner_id),
                &q.vanilla_proofs,
            )
            .unwrap();
            out[0].1.clone()
        }
        Request::WindowPoSt(q) => {
            let randomness: [u8; 32] = q.randomness.clone().try_into().unwrap();
            post::generate_single_window_post_with_vanilla(
                sector.registered.window,
                &randomness,
                inputs::prover_id(q.miner_id),
                &q.vanilla_proofs,
                q.partition_index as usize,
            )
            .unwrap()
            .0
        }
        Request::SnapDeals(q) => {
            update::generate_empty_sector_update_proof_with_vanilla(
                sector.registered.update,
                q.vanilla_proofs
                    .iter()
                    .cloned()
                    .map(PartitionProofBytes)
                    .collect(),
                q.comm_r_old.clone().try_into().unwrap(),
                q.comm_r_new.clone().try_into().unwrap(),
                q.comm_d_new.clone().try_into().unwrap(),
            )
            .unwrap()
            .0
        }
    }
}

fn bench(c: &mut Criterion) {
    let (_dir, params, sector) = setup();
    let recorded = prover(&params, true);
    let direct = prover(&params, false);
    let requests = [
        ("porep-c2", Request::PoRep(sector.porep.clone().unwrap())),
        (
            "winning-post",
            Request::WinningPoSt(sector.winning.clone().unwrap()),
        ),
        (
            "window-post",
            Request::WindowPoSt(sector.window.clone().unwrap()),
        ),
        (
            "snap-deals",
            Request::SnapDeals(sector.snap.clone().unwrap()),
        ),
    ];
    let mut group = c.benchmark_group("filecoin_2KiB");
    group.sample_size(10);
    for (name, request) in &requests {
        // The circuit's first proof records its shape and reads the parameters.
        recorded.prove("warm", request, Priority::Normal).unwrap();
        group.bench_function(BenchmarkId::new("crossgroth-cpu", name), |b| {
            b.iter(|| recorded.prove("bench", request, Priority::Normal).unwrap())
        });
        group.bench_function(BenchmarkId::new("crossgroth-cpu-direct", name), |b| {
            b.iter(|| direct.prove("bench", request, Priority::Normal).unwrap())
        });
        filecoin_proofs(request, &sector);
        group.bench_function(BenchmarkId::new("filecoin-proofs", name), |b| {
            b.iter(|| filecoin_proofs(request, &sector))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! PoRep C2 and SnapDeals end to end through the daemon over a real socket, as
//! Curio sends them (the PoSt kinds are in serve.rs), each proof checked by
//! filecoin-proofs-api's own verifier in the test. Their parameters take minutes
//! on two cores: `CROSSGROTH_TEST_FILECOIN_PARAMS=<dir>` shares them with the
//! crossgroth-filecoin tests (CI sets it).

use std::path::PathBuf;
use std::time::Duration;

use crossgroth::backend::{open_backend, BackendKind};
use crossgroth_daemon::pb;
use crossgroth_daemon::{Budget, Config, Listen, Server};
use crossgroth_filecoin::test_sector::{self, TestKind};
use crossgroth_filecoin::{inputs, write_insecure_params, ProofKind};
use filecoin_proofs_api::{seal, update, SectorId};

type Status = pb::await_proof_response::Status;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn porep_c2_and_snap_deals_through_the_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let params_dir = std::env::var_os("CROSSGROTH_TEST_FILECOIN_PARAMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.path().join("params"));
    std::fs::create_dir_all(&params_dir).unwrap();
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.path().join("parents"));
    let kinds = [TestKind::PoRep, TestKind::Snap];
    let sector = test_sector::make(2048, &kinds, &dir.path().join("sector"), 13).unwrap();
    for kind in [ProofKind::PoRep, ProofKind::SnapDeals] {
        write_insecure_params(kind, 2048, &params_dir, 11, None).unwrap();
    }
    let config = Config {
        listen: Listen::Tcp("127.0.0.1:0".into()),
        param_cache: params_dir.clone(),
        budget: Budget::Bytes(8 << 30),
        grace_period: Duration::from_secs(60),
        ..Config::default()
    };
    let server = Server::start(config, vec![open_backend(BackendKind::Cpu).unwrap()])
        .await
        .unwrap();
    let mut client = crossgroth_daemon::client::connect(&server.bound().to_string())
        .await
        .unwrap();

    // PoRep C2: the C1 wrapper in vanilla_proof, as Curio sends it.
    let q = sector.porep.clone().unwrap();
    let submit = pb::SubmitProofRequest {
        request_id: "porep-13".into(),
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        sector_size: 2048,
        registered_proof: q.registered_proof.unwrap_or_default(),
        vanilla_proof: q.c1.clone(),
        sector_number: sector.sector_number,
        miner_id: q.miner_id,
        ..Default::default()
    };
    let r = prove(&mut client, submit).await;
    assert_eq!(r.status, Status::Completed as i32, "{}", r.error_message);
    let c1 = inputs::decode_c1(&q.c1).unwrap().output;
    assert_eq!(r.proof.len(), 192, "one partition at 2 KiB");
    assert!(seal::verify_seal(
        c1.registered_proof,
        c1.comm_r,
        c1.comm_d,
        inputs::prover_id(q.miner_id),
        SectorId::from(sector.sector_number),
        c1.ticket,
        c1.seed,
        &r.proof,
    )
    .unwrap());
    assert!(r.total_ms >= r.synthesis_ms, "times are filled in");

    // SnapDeals: the partition proofs and raw 32-byte commitments.
    let q = sector.snap.clone().unwrap();
    let submit = pb::SubmitProofRequest {
        request_id: "snap-13".into(),
        proof_kind: pb::ProofKind::SnapDealsUpdate as i32,
        sector_size: 2048,
        registered_proof: q.registered_proof,
        vanilla_proofs: q.vanilla_proofs.clone(),
        comm_r_old: q.comm_r_old.clone(),
        comm_r_new: q.comm_r_new.clone(),
        comm_d_new: q.comm_d_new.clone(),
        ..Default::default()
    };
    let r = prove(&mut client, submit).await;
    assert_eq!(r.status, Status::Completed as i32, "{}", r.error_message);
    let comm = |v: &[u8]| -> [u8; 32] { v.try_into().unwrap() };
    assert!(update::verify_empty_sector_update_proof(
        sector.registered.update,
        &r.proof,
        comm(&q.comm_r_old),
        comm(&q.comm_r_new),
        comm(&q.comm_d_new),
    )
    .unwrap());
    server.shutdown().await.unwrap();
}

async fn prove(
    client: &mut crossgroth_daemon::pb::proving_engine_client::ProvingEngineClient<
        tonic::transport::Channel,
    >,
    submit: pb::SubmitProofRequest,
) -> pb::AwaitProofResponse {
    client
        .prove(pb::ProveRequest {
            submit: Some(submit),
        })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap()
}

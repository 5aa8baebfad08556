//! The daemon over real sockets (loopback TCP and a unix socket), driven by a tonic
//! client of the repository's proto: every RPC; WinningPoSt and WindowPoSt on a
//! 2 KiB test sector, accepted by filecoin-proofs-api's verifiers; idempotent
//! resubmission; cancellation; bad requests failing alone; malformed and oversized
//! messages; shutdown with a proof in flight. PoSt only: their parameters take
//! seconds to generate (PoRep's and SnapDeals' take minutes on two cores).

use std::time::{Duration, Instant};

use crate::common::*;
use crossgroth_daemon::{client, pb, Listen};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rpc_over_loopback() {
    let _turn = crate::shared_turn().await;
    let mut cfg = config();
    cfg.status_listen = Some("127.0.0.1:0".into());
    let (server, addr) = start(cfg).await;
    let mut c = client::connect(&addr).await.unwrap();

    let s = c
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(s.gpus.len(), 1);
    assert_eq!(s.queues.len(), 4);
    assert!(s.queues.iter().any(|q| q.proof_kind == "winning-post"));
    assert!(s.pinned_memory_limit_bytes == 4 << 30);

    let pre = c
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!pre.already_loaded);
    let again = c
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(again.already_loaded);
    let bad = c
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "porep-3g".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument, "{bad}");

    let t = Instant::now();
    let r = prove(&mut c, winning("winning-1")).await;
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    assert_eq!(r.proof.len(), 192);
    assert!(
        r.total_ms > 0 && r.synthesis_ms > 0 && r.gpu_compute_ms > 0,
        "{:?}",
        (r.synthesis_ms, r.gpu_compute_ms, r.total_ms)
    );
    verify_post(fixture().sector.winning.as_ref().unwrap(), &r.proof);
    eprintln!("WinningPoSt through the daemon: {:?}", t.elapsed());

    let sub = c
        .submit_proof(window("wdpost-1000-0-[1 2 3]"))
        .await
        .unwrap()
        .into_inner();
    assert!(!sub.job_id.is_empty());
    let r = c
        .await_proof(pb::AwaitProofRequest {
            job_id: sub.job_id.clone(),
            timeout_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    assert_eq!(r.job_id, sub.job_id);
    verify_post(fixture().sector.window.as_ref().unwrap(), &r.proof);

    let s = c
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(s.total_proofs_completed, 2);
    let ids: Vec<_> = s.loaded_srs.iter().map(|l| l.circuit_id.as_str()).collect();
    assert!(
        ids.contains(&"winning-2k") && ids.contains(&"wpost-2k"),
        "{ids:?}"
    );

    let m = metrics(&mut c).await;
    assert!(
        m.contains(r#"crossgroth_proofs_total{proof_kind="winning_post",status="completed"} 1"#),
        "{m}"
    );
    assert!(m.contains("crossgroth_proof_stage_seconds_bucket"), "{m}");
    // cuzk's names beside crossgroth's, for dashboards built on cuzk.
    for line in [
        "cuzk_proofs_completed_total 2",
        "cuzk_proofs_failed_total 0",
        r#"cuzk_proofs_completed{proof_kind="winning_post"} 1"#,
        r#"cuzk_proof_duration_seconds_count{proof_kind="winning_post"} 1"#,
        "cuzk_queue_depth 0",
        "cuzk_running_jobs 0",
        "cuzk_gpu_workers 1",
    ] {
        assert!(m.lines().any(|l| l == line), "{line}: {m}");
    }
    assert!(m.contains("\ncuzk_uptime_seconds "), "{m}");
    for what in ["budget", "charged", "committed", "resident"] {
        assert!(
            m.contains(&format!(r#"crossgroth_memory_bytes{{what="{what}"}}"#)),
            "{what}: {m}"
        );
    }

    let ev = c
        .evict_srs(pb::EvictSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(ev.was_loaded && ev.freed_bytes > 0, "{ev:?}");
    let ev = c
        .evict_srs(pb::EvictSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!ev.was_loaded);

    let e = c
        .cancel_proof(pb::CancelProofRequest {
            job_id: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
    let done = c
        .cancel_proof(pb::CancelProofRequest {
            job_id: sub.job_id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!done.was_running);

    // The HTTP status page.
    let status_addr = server.status_addr().unwrap();
    let body = http_get(status_addr, "/status").await;
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    let json: serde_json::Value =
        serde_json::from_str(body.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(json["counters"]["total_proofs_completed"], 2);

    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_resubmission_and_cancel_while_queued() {
    let _turn = crate::shared_turn().await;
    let mut cfg = config();
    cfg.jobs_in_flight = 1;
    let (server, addr) = start(cfg).await;
    let mut c = client::connect(&addr).await.unwrap();

    let a = c.submit_proof(window("same")).await.unwrap().into_inner();
    let b = c.submit_proof(window("same")).await.unwrap().into_inner();
    assert_eq!(a.job_id, b.job_id, "a repeated request_id is the same job");
    // Behind the running job, a LOW one waits in the queue: cancel it there.
    let mut low = window("low");
    low.priority = pb::Priority::Low as i32;
    let q = c.submit_proof(low).await.unwrap().into_inner();
    assert_ne!(q.job_id, a.job_id);
    assert_eq!(q.queue_position, 0);
    let timeout = c
        .await_proof(pb::AwaitProofRequest {
            job_id: q.job_id.clone(),
            timeout_ms: 1,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(timeout.status, JobStatus::Timeout as i32);
    let s = c
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    let wq = s
        .queues
        .iter()
        .find(|q| q.proof_kind == "window-post")
        .unwrap();
    assert_eq!((wq.pending, wq.in_progress), (1, 1), "{s:?}");
    let cancel = c
        .cancel_proof(pb::CancelProofRequest {
            job_id: q.job_id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!cancel.was_running);
    let r = c
        .await_proof(pb::AwaitProofRequest {
            job_id: q.job_id.clone(),
            timeout_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.status, JobStatus::Cancelled as i32);

    let r = c
        .await_proof(pb::AwaitProofRequest {
            job_id: a.job_id.clone(),
            timeout_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    // After completion too, the same request id finds the same job and proof.
    let again = prove(&mut c, window("same")).await;
    assert_eq!(again.job_id, a.job_id);
    assert_eq!(again.proof, r.proof);
    let s = c
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(s.total_proofs_completed, 1, "one proof for one request id");
    let engine = server.daemon().engine().status();
    assert_eq!(engine.memory.charged, 0, "every charge returned");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_fail_alone() {
    let _turn = crate::shared_turn().await;
    let mut cfg = config();
    cfg.max_message_bytes = 1 << 20;
    let (server, addr) = start(cfg).await;
    let mut c = client::connect(&addr).await.unwrap();

    let mut r = winning("x");
    r.proof_kind = 9;
    let e = c.submit_proof(r).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("unknown proof_kind 9"), "{e}");

    let mut r = winning("y");
    r.registered_proof = 99;
    let e = c
        .prove(pb::ProveRequest { submit: Some(r) })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("99"), "{e}");

    let e = c
        .prove(pb::ProveRequest { submit: None })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);

    // Inputs that do not decode fail their job, with the reason.
    let mut r = winning("z");
    r.vanilla_proofs = vec![vec![7; 100]];
    let bad = prove(&mut c, r).await;
    assert_eq!(bad.status, JobStatus::Failed as i32);
    assert!(
        bad.error_message.contains("vanilla proof"),
        "{}",
        bad.error_message
    );

    // A message over the limit is refused before it is decoded.
    let mut big = winning("big");
    big.vanilla_proofs = vec![vec![0; 2 << 20]];
    let e = c.submit_proof(big).await.unwrap_err();
    assert!(
        matches!(
            e.code(),
            tonic::Code::OutOfRange | tonic::Code::ResourceExhausted
        ),
        "{e}"
    );

    // Bytes that are not a SubmitProofRequest (field 2 as a string, not a varint).
    #[derive(Clone, PartialEq, prost::Message)]
    struct Bogus {
        #[prost(bytes = "vec", tag = "2")]
        kind: Vec<u8>,
    }
    let channel = client::channel(&addr).await.unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path =
        tonic::codegen::http::uri::PathAndQuery::from_static("/cuzk.v1.ProvingEngine/SubmitProof");
    let codec = tonic_prost::ProstCodec::<Bogus, pb::SubmitProofResponse>::default();
    let e = grpc
        .unary(
            tonic::Request::new(Bogus {
                kind: b"garbage".to_vec(),
            }),
            path,
            codec,
        )
        .await
        .unwrap_err();
    assert_ne!(e.code(), tonic::Code::Ok);

    // And the daemon still proves.
    let ok = prove(&mut c, winning("after")).await;
    assert_eq!(
        ok.status,
        JobStatus::Completed as i32,
        "{}",
        ok.error_message
    );
    verify_post(fixture().sector.winning.as_ref().unwrap(), &ok.proof);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unix_socket_owner_only_and_shutdown_finishes_running_proofs() {
    let _turn = crate::shared_turn().await;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cuzk.sock");
    let mut cfg = config();
    cfg.listen = Listen::Unix(path.clone());
    let (server, addr) = start(cfg).await;
    assert_eq!(addr, format!("unix://{}", path.display()));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let mut c = client::connect(&addr).await.unwrap();
    let s = c
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(s.queues.len(), 4);

    // A proof in flight when the daemon is told to stop still completes.
    let sub = c.submit_proof(winning("w")).await.unwrap().into_inner();
    let job_id = sub.job_id.clone();
    let waiter = tokio::spawn(async move {
        c.await_proof(pb::AwaitProofRequest {
            job_id,
            timeout_ms: 0,
        })
        .await
        .map(|r| r.into_inner())
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    server.shutdown().await.unwrap();
    let r = waiter.await.unwrap().unwrap();
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    assert!(!path.exists(), "the socket is removed on shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preloaded_sets_are_resident_before_the_first_request() {
    let _turn = crate::shared_turn().await;
    let mut cfg = config();
    cfg.status_listen = Some("127.0.0.1:0".into());
    cfg.preload = vec!["winning-2k".into(), "wpost-2k".into()];
    let (server, addr) = start(cfg).await;
    let http = server.status_addr().unwrap();
    let mut c = client::connect(&addr).await.unwrap();
    let began = std::time::Instant::now();
    loop {
        let page = http_get(http, "/status").await;
        let json: serde_json::Value =
            serde_json::from_str(page.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        if json["preload"]["done"] == 2 {
            assert_eq!(json["preload"]["total"], 2);
            break;
        }
        assert!(
            began.elapsed().as_secs() < 120,
            "preloading: {}",
            json["preload"]
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let s = c
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<_> = s.loaded_srs.iter().map(|l| l.circuit_id.as_str()).collect();
    assert!(
        ids.contains(&"winning-2k") && ids.contains(&"wpost-2k"),
        "{ids:?}"
    );
    assert_eq!(s.total_proofs_completed, 0);
    server.shutdown().await.unwrap();
}

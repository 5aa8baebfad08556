//! Faults, each failing only its own job while the daemon keeps serving, over a
//! real loopback socket (one test over a unix socket) with the tonic client of the
//! repository's proto:
//!
//! - a job cancelled while it is in the engine: CANCELLED, its memory charge back
//!   to where it was, the next job proved;
//! - a client that disconnects mid-`Prove`: the job runs on to completion, and a
//!   retry with the same request_id gets that job's proof (one proof, not two);
//! - a parameter file removed while serving: FAILED naming the file, other kinds
//!   unaffected, the kind proves again once the file is back;
//! - a device error (a simulated device that fails on demand): the job FAILED with
//!   the device's message, the next one proves; a lost device is retired and new
//!   work is refused with UNAVAILABLE saying so;
//! - one of two devices lost: its proof is made on the other, every job
//!   completes, and health, status and metrics say one device is out of service;
//! - a device error after the host copies of a set were released: the next job
//!   reads the set again and proves;
//! - a restart with the same request_ids: a new job and a valid proof;
//! - an unknown registered proof for each kind: INVALID_ARGUMENT naming it;
//! - status polls while a proof holds the device: answered from what the device
//!   reports without waiting for it (Curio asks before every task).
//!
//! Each test runs alone in the process ([`crate::sole_turn`]): one moves aside a
//! parameter file the others read, and timings on two cores mean more one at a
//! time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use crossgroth::backend::simulated::SimulatedDevice;
use crossgroth::backend::Backend;
use crossgroth_daemon::decode::Circuit;
use crossgroth_daemon::{pb, Listen};

/// A simulated device: the device steps of a proof hold it for `g1` (results are
/// computed on the CPU, so proofs verify).
fn device(d: SimulatedDevice) -> Vec<Arc<dyn Backend>> {
    vec![d.shared()]
}

/// Proves a WindowPoSt, which must complete with a proof filecoin-proofs accepts.
async fn window_proves(c: &mut Client, id: &str) {
    let r = prove(c, window(id)).await;
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    verify_post(window_request(), &r.proof);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_running_returns_the_memory_and_the_next_job_proves() {
    let _turn = crate::sole_turn().await;
    let g1 = Duration::from_secs(3);
    let (server, addr) = start_with(config(), device(SimulatedDevice::new(g1))).await;
    let engine = server.daemon().engine().clone();
    let mut c = connect(&addr).await;
    let before = engine.status().memory;

    let sub = c
        .submit_proof(window("to-cancel"))
        .await
        .unwrap()
        .into_inner();
    // Synthesized and handed to the device, which holds it for 3 s: in the engine.
    wait_until(
        Duration::from_secs(60),
        "the job reaches the device",
        || {
            let s = engine.status();
            s.stage_counts["synthesis"] >= 1 && s.memory.units_in_flight > before.units_in_flight
        },
    )
    .await;
    let charged = engine.status().memory.charged;
    assert!(charged > before.charged, "the running job holds a charge");
    let t = Instant::now();
    let cancel = c
        .cancel_proof(pb::CancelProofRequest {
            job_id: sub.job_id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(cancel.was_running);
    let r = await_job(&mut c, &sub.job_id).await;
    let to_cancelled = t.elapsed();
    assert_eq!(r.status, JobStatus::Cancelled as i32, "{}", r.error_message);
    assert!(r.proof.is_empty());
    assert!(
        to_cancelled < Duration::from_secs(2),
        "CANCELLED after {to_cancelled:?}: the caller waited for the device"
    );
    // The unit on the device finishes its step, then its buffers are freed.
    wait_until(Duration::from_secs(20), "the charge returns", || {
        let m = engine.status().memory;
        m.charged == before.charged && m.units_in_flight == before.units_in_flight
    })
    .await;
    let returned = t.elapsed();
    let again = c
        .cancel_proof(pb::CancelProofRequest {
            job_id: sub.job_id.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!again.was_running, "a finished job is not running");

    let r = prove(&mut c, window("after-cancel")).await;
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    verify_post(window_request(), &r.proof);
    let s = status(&mut c).await;
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (1, 0));
    let m = metrics(&mut c).await;
    assert!(
        m.contains(r#"crossgroth_proofs_total{proof_kind="window_post",status="cancelled"} 1"#),
        "{m}"
    );
    eprintln!(
        "cancel while running: charge {charged} bytes while on the device (before: {}); CANCELLED {to_cancelled:?} after CancelProof, charge back after {returned:?}",
        before.charged
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_polls_while_a_proof_holds_the_device_do_not_wait_for_it() {
    let _turn = crate::sole_turn().await;
    let g1 = Duration::from_secs(3);
    let total = 64usize << 30;
    let sim = Arc::new(SimulatedDevice::new(g1).with_memory(total));
    let backends: Vec<Arc<dyn Backend>> = vec![sim.clone()];
    let (server, addr) = start_with(config(), backends).await;
    let engine = server.daemon().engine().clone();
    let mut c = connect(&addr).await;

    let sub = c.submit_proof(window("held")).await.unwrap().into_inner();
    let on_device = || {
        engine
            .status()
            .on_device
            .first()
            .cloned()
            .flatten()
            .is_some()
    };
    wait_until(
        Duration::from_secs(60),
        "the job reaches the device",
        on_device,
    )
    .await;
    // Polls for as long as the proof is on the device, its 3 s hold included.
    let waits = sim.memory_waits();
    let mut polls = 0;
    while on_device() {
        let s = status(&mut c).await;
        assert_eq!(s.gpus[0].vram_total_bytes, total as u64);
        assert!(s.gpus[0].vram_free_bytes <= total as u64);
        polls += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        polls >= 10,
        "only {polls} polls while the proof was on the device"
    );
    assert_eq!(
        sim.memory_waits(),
        waits,
        "a status poll asked the device for the memory figure that waits for its work"
    );
    let r = await_job(&mut c, &sub.job_id).await;
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_mid_prove_leaves_its_job_running_and_a_retry_gets_its_proof() {
    let _turn = crate::sole_turn().await;
    let g1 = Duration::from_secs(2);
    let (server, addr) = start_with(config(), device(SimulatedDevice::new(g1))).await;
    let engine = server.daemon().engine().clone();
    let mut c = connect(&addr).await;

    // Prove on a connection of its own, dropped (future and channel) once the job runs.
    let a = addr.clone();
    let call = tokio::spawn(async move {
        let mut own = connect(&a).await;
        prove(&mut own, window("gone")).await
    });
    let t = Instant::now();
    loop {
        assert!(t.elapsed() < Duration::from_secs(60), "the job never ran");
        if queue(&status(&mut c).await, "window-post").1 == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    call.abort();
    let dropped = call.await;
    assert!(
        dropped.as_ref().is_err_and(|e| e.is_cancelled()),
        "the client went away before its reply"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        queue(&status(&mut c).await, "window-post"),
        (0, 1),
        "the job goes on without its client"
    );

    let retry = prove(&mut c, window("gone")).await;
    assert_eq!(
        retry.status,
        JobStatus::Completed as i32,
        "{}",
        retry.error_message
    );
    verify_post(window_request(), &retry.proof);
    let s = status(&mut c).await;
    assert_eq!(s.total_proofs_completed, 1, "one proof for one request_id");
    assert_eq!(engine.status().proofs_done, 1, "the engine proved once");
    // And the finished job stays findable by its request_id.
    let again = prove(&mut c, window("gone")).await;
    assert_eq!((again.job_id, again.proof), (retry.job_id, retry.proof));
    eprintln!(
        "client gone mid-Prove: the retry returned the first job's proof, total_ms={} (from the first submission)",
        retry.total_ms
    );
    server.shutdown().await.unwrap();
}

/// Puts a moved parameter file back, even when the test fails.
struct Restore(std::path::PathBuf, std::path::PathBuf);
impl Drop for Restore {
    fn drop(&mut self) {
        if self.1.exists() {
            std::fs::rename(&self.1, &self.0).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parameter_file_removed_while_serving_fails_its_kind_alone() {
    let _turn = crate::sole_turn().await;
    let (server, addr) = start(config()).await;
    let mut c = connect(&addr).await;
    let r = prove(&mut c, winning("before")).await;
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);

    let ev = c
        .evict_srs(pb::EvictSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(ev.was_loaded);
    let name = Circuit::parse("winning-2k")
        .unwrap()
        .params()
        .unwrap()
        .params_file();
    let file = fixture().params_dir.join(&name);
    let aside = fixture().params_dir.with_file_name(&name);
    std::fs::rename(&file, &aside).unwrap();
    let restore = Restore(file.clone(), aside);

    let bad = prove(&mut c, winning("while-gone")).await;
    assert_eq!(bad.status, JobStatus::Failed as i32);
    assert!(
        bad.error_message.contains(&name) && bad.error_message.contains("missing"),
        "{}",
        bad.error_message
    );
    let pre = c
        .preload_srs(pb::PreloadSrsRequest {
            circuit_id: "winning-2k".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(pre.code(), tonic::Code::FailedPrecondition);
    assert!(pre.message().contains(&name), "{pre}");
    // Another kind is not affected.
    let other = prove(&mut c, window("other-kind")).await;
    assert_eq!(
        other.status,
        JobStatus::Completed as i32,
        "{}",
        other.error_message
    );
    verify_post(window_request(), &other.proof);

    drop(restore);
    assert!(file.exists());
    // The failed request, retried, is a new job: it proves now.
    let back = prove(&mut c, winning("while-gone")).await;
    assert_eq!(
        back.status,
        JobStatus::Completed as i32,
        "{}",
        back.error_message
    );
    assert_ne!(back.job_id, bad.job_id);
    verify_post(winning_request(), &back.proof);
    let s = status(&mut c).await;
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (3, 1));
    eprintln!(
        "parameter file removed: the job failed with {:?}",
        bad.error_message
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_device_s_proof_is_made_on_the_other_and_every_job_completes() {
    let _turn = crate::sole_turn().await;
    // Device 0 holds each proof long enough that device 1 takes the next one,
    // and is lost at it (a kernel fault before the proof's steps ran).
    let devices: Vec<Arc<dyn Backend>> = vec![
        SimulatedDevice::new(Duration::from_millis(400))
            .with_id(0)
            .shared(),
        SimulatedDevice::lost_at(Duration::from_millis(50), 1)
            .with_id(1)
            .shared(),
    ];
    let mut cfg = config();
    cfg.status_listen = Some("127.0.0.1:0".into());
    let (server, addr) = start_with(cfg, devices).await;
    let http = server.status_addr().unwrap();
    let mut c = connect(&addr).await;
    let ids: Vec<_> = (0..4).map(|i| format!("two-{i}")).collect();
    let mut jobs = Vec::new();
    for id in &ids {
        jobs.push(
            c.submit_proof(winning(id))
                .await
                .unwrap()
                .into_inner()
                .job_id,
        );
    }
    for job in &jobs {
        let r = await_job(&mut c, job).await;
        assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
        verify_post(winning_request(), &r.proof);
    }
    let s = status(&mut c).await;
    assert!(!s.gpus[0].name.contains("out of service"), "{:?}", s.gpus);
    assert!(s.gpus[1].name.ends_with("(out of service)"), "{:?}", s.gpus);
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (4, 0));
    const SERVING: i32 = tonic_health::pb::health_check_response::ServingStatus::Serving as i32;
    assert_eq!(health(&addr, "").await, SERVING);
    let metrics = http_get(http, "/metrics").await;
    assert!(
        metrics.contains("\ncrossgroth_devices_in_service 1\n"),
        "{metrics}"
    );
    // New work goes on, on the device left.
    window_proves(&mut c, "two-next").await;
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_error_fails_its_job_alone_and_a_lost_device_is_refused_clearly() {
    let _turn = crate::sole_turn().await;
    let g1 = Duration::from_millis(50);

    // The device's first critical path fails: that job fails, the other proves.
    let (server, addr) = start_with(config(), device(SimulatedDevice::failing_at(g1, 1))).await;
    let mut c = connect(&addr).await;
    let a = c.submit_proof(window("dev-a")).await.unwrap().into_inner();
    let b = c.submit_proof(winning("dev-b")).await.unwrap().into_inner();
    let ra = await_job(&mut c, &a.job_id).await;
    let rb = await_job(&mut c, &b.job_id).await;
    let (failed, ok, ok_request) = if ra.status == JobStatus::Failed as i32 {
        (ra, rb, winning_request())
    } else {
        (rb, ra, window_request())
    };
    assert_eq!(failed.status, JobStatus::Failed as i32);
    assert!(
        failed.error_message.contains("injected failure")
            && failed.error_message.contains("simulated"),
        "{}",
        failed.error_message
    );
    assert_eq!(
        ok.status,
        JobStatus::Completed as i32,
        "{}",
        ok.error_message
    );
    verify_post(ok_request, &ok.proof);
    window_proves(&mut c, "dev-c").await;
    let s = status(&mut c).await;
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (2, 1));
    assert!(!s.gpus[0].name.contains("out of service"), "{:?}", s.gpus);
    eprintln!("device error: {:?}", failed.error_message);
    server.shutdown().await.unwrap();

    // A lost device (a CUDA kernel fault): its job fails, the device is retired,
    // and the daemon says so to new work, to its health probes and to the
    // binary (which exits so that systemd restarts it) while it goes on answering.
    let mut cfg = config();
    cfg.status_listen = Some("127.0.0.1:0".into());
    let (server, addr) = start_with(cfg, device(SimulatedDevice::lost_at(g1, 1))).await;
    let engine = server.daemon().engine().clone();
    let http = server.status_addr().unwrap();
    let mut c = connect(&addr).await;
    const SERVING: i32 = tonic_health::pb::health_check_response::ServingStatus::Serving as i32;
    const NOT_SERVING: i32 =
        tonic_health::pb::health_check_response::ServingStatus::NotServing as i32;
    assert_eq!(health(&addr, "").await, SERVING);
    assert_eq!(health(&addr, "cuzk.v1.ProvingEngine").await, SERVING);
    let healthz = http_get(http, "/healthz").await;
    assert!(
        healthz.starts_with("HTTP/1.1 200") && healthz.ends_with("SERVING\n"),
        "{healthz}"
    );
    let lost = prove(&mut c, winning("lost-a")).await;
    assert_eq!(lost.status, JobStatus::Failed as i32);
    assert!(
        lost.error_message.contains("device lost"),
        "{}",
        lost.error_message
    );
    wait_until(Duration::from_secs(10), "the device is retired", || {
        engine.status().out_of_service == [true]
    })
    .await;
    let e = c
        .prove(pb::ProveRequest {
            submit: Some(winning("lost-b")),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e}");
    assert!(e.message().contains("out of service"), "{e}");
    let s = status(&mut c).await;
    assert!(s.gpus[0].name.ends_with("(out of service)"), "{:?}", s.gpus);
    assert_eq!(s.total_proofs_failed, 1);
    c.get_metrics(pb::GetMetricsRequest {}).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), server.lost_all_devices())
        .await
        .expect("the daemon signals that every device is lost");
    assert_eq!(health(&addr, "").await, NOT_SERVING);
    assert_eq!(health(&addr, "cuzk.v1.ProvingEngine").await, NOT_SERVING);
    let healthz = http_get(http, "/healthz").await;
    assert!(healthz.starts_with("HTTP/1.1 503"), "{healthz}");
    let metrics = http_get(http, "/metrics").await;
    assert!(
        metrics.contains("\ncrossgroth_devices_in_service 0\n"),
        "{metrics}"
    );
    eprintln!(
        "lost device: the job failed with {:?}; new work: {:?} {:?}",
        lost.error_message,
        e.code(),
        e.message()
    );
    // The binary serves until a signal or, by default, until no device is
    // left: then it stops and fails, so that the process exits non-zero.
    let ended = tokio::time::timeout(
        Duration::from_secs(30),
        server.serve_until(std::future::pending()),
    )
    .await
    .expect("a daemon without devices stops by itself")
    .unwrap_err()
    .to_string();
    assert!(ended.contains("every device is out of service"), "{ended}");
    assert!(ended.contains("exit_when_no_device"), "{ended}");

    // With exit_when_no_device = false it keeps answering, NOT_SERVING, until stopped.
    let mut cfg = config();
    cfg.exit_when_no_device = false;
    let (server, addr) = start_with(cfg, device(SimulatedDevice::lost_at(g1, 1))).await;
    let mut c = connect(&addr).await;
    let lost = prove(&mut c, winning("kept-a")).await;
    assert_eq!(lost.status, JobStatus::Failed as i32);
    let engine = server.daemon().engine().clone();
    wait_until(Duration::from_secs(10), "the device is retired", || {
        engine.status().out_of_service == [true]
    })
    .await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_until(async {
        let _ = stopped.await;
    }));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!serving.is_finished(), "it keeps running without devices");
    assert_eq!(health(&addr, "").await, NOT_SERVING);
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_proves_an_old_request_id_again_as_a_new_job() {
    let _turn = crate::sole_turn().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cuzk.sock");
    let mut cfg = config();
    cfg.listen = Listen::Unix(path.clone());
    let id = "wdpost-1000-0-[1 2 3]";

    let (first, addr) = start(cfg.clone()).await;
    let mut c = connect(&addr).await;
    let r1 = prove(&mut c, window(id)).await;
    assert_eq!(
        r1.status,
        JobStatus::Completed as i32,
        "{}",
        r1.error_message
    );
    first.shutdown().await.unwrap();

    // The same socket and parameter directory, a new process's job table.
    let (second, addr2) = start(cfg).await;
    assert_eq!(addr2, addr);
    let mut c = connect(&addr).await;
    let e = c
        .await_proof(pb::AwaitProofRequest {
            job_id: r1.job_id.clone(),
            timeout_ms: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e}");
    let r2 = prove(&mut c, window(id)).await;
    assert_eq!(
        r2.status,
        JobStatus::Completed as i32,
        "{}",
        r2.error_message
    );
    assert_ne!(r2.job_id, r1.job_id);
    let epoch = |j: &str| j.rsplit_once('-').unwrap().0.to_string();
    assert_ne!(
        epoch(&r2.job_id),
        epoch(&r1.job_id),
        "job ids carry the run's epoch"
    );
    verify_post(window_request(), &r2.proof);
    let r3 = prove(&mut c, window(id)).await;
    assert_eq!((&r3.job_id, &r3.proof), (&r2.job_id, &r2.proof));
    assert_eq!(status(&mut c).await.total_proofs_completed, 1);
    eprintln!("restart: job {} then job {}", r1.job_id, r2.job_id);
    second.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_registered_proof_of_each_kind_is_refused_by_name() {
    let _turn = crate::sole_turn().await;
    let (server, addr) = start(config()).await;
    let mut c = connect(&addr).await;
    let porep = pb::SubmitProofRequest {
        request_id: "porep".into(),
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        vanilla_proof: b"{}".to_vec(),
        ..Default::default()
    };
    let snap = pb::SubmitProofRequest {
        request_id: "snap".into(),
        proof_kind: pb::ProofKind::SnapDealsUpdate as i32,
        vanilla_proofs: vec![vec![1]],
        comm_r_old: vec![0; 32],
        comm_r_new: vec![0; 32],
        comm_d_new: vec![0; 32],
        ..Default::default()
    };
    let cases = [
        (porep, "unknown registered seal proof 99"),
        (snap, "unknown registered update proof 99"),
        (window("wd"), "unknown registered PoSt proof 99"),
        (winning("wn"), "unknown registered PoSt proof 99"),
    ];
    for (mut r, expect) in cases {
        r.registered_proof = 99;
        let e = c.submit_proof(r.clone()).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
        assert!(e.message().contains(expect), "{e}");
        let e = c
            .prove(pb::ProveRequest { submit: Some(r) })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e}");
    }
    // A registered proof of the other PoSt kind.
    let mut r = winning("wrong");
    r.registered_proof = window_request().registered_proof;
    let e = c.submit_proof(r).await.unwrap_err();
    assert!(e.message().contains("is not a winning-post proof"), "{e}");
    let mut r = window("wrong2");
    r.registered_proof = winning_request().registered_proof;
    let e = c.submit_proof(r).await.unwrap_err();
    assert!(e.message().contains("is not a window-post proof"), "{e}");

    let s = status(&mut c).await;
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (0, 0));
    let ok = prove(&mut c, winning("after")).await;
    assert_eq!(
        ok.status,
        JobStatus::Completed as i32,
        "{}",
        ok.error_message
    );
    verify_post(winning_request(), &ok.proof);
    server.shutdown().await.unwrap();
}

/// With `memory.release_host_copies`, a loaded set keeps on the host only what
/// the device does not hold (B_G2). A device error rebuilds the device without
/// the set, and the host copy is gone: the next job of that circuit reads the
/// file again and proves, instead of failing for want of the released queries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn released_host_copies_are_read_again_after_a_device_error() {
    let _turn = crate::sole_turn().await;
    let g1 = Duration::from_millis(20);
    let full = {
        let cache = crossgroth_filecoin::ParamsCache::open(&fixture().params_dir).unwrap();
        let p = crossgroth_filecoin::Registered::for_sector_size(2048)
            .unwrap()
            .params(crossgroth_filecoin::ProofKind::WinningPoSt)
            .unwrap();
        cache.read(&p).unwrap()
    };
    let b_g2_bytes = full.b_g2.len() * std::mem::size_of::<crossgroth::G2Affine>();
    assert!(full.heap_bytes() > 2 * b_g2_bytes);
    let config = crossgroth_daemon::Config {
        release_host_copies: true,
        ..config()
    };
    // Its second critical path fails, as a device fault would.
    let (server, addr) = start_with(
        config,
        device(SimulatedDevice::failing_at(g1, 2).with_memory(8 << 30)),
    )
    .await;
    let mut c = connect(&addr).await;
    let held = |s: &pb::GetStatusResponse| {
        s.loaded_srs
            .iter()
            .find(|l| l.circuit_id == "winning-2k")
            .map(|l| l.size_bytes as usize)
    };

    let first = prove(&mut c, winning("released-1")).await;
    assert_eq!(
        first.status,
        JobStatus::Completed as i32,
        "{}",
        first.error_message
    );
    verify_post(winning_request(), &first.proof);
    assert_eq!(
        held(&status(&mut c).await),
        Some(b_g2_bytes),
        "only B_G2 stays"
    );

    let faulted = prove(&mut c, winning("released-2")).await;
    assert_eq!(faulted.status, JobStatus::Failed as i32);
    assert!(
        faulted.error_message.contains("injected failure"),
        "{}",
        faulted.error_message
    );

    let again = prove(&mut c, winning("released-3")).await;
    assert_eq!(
        again.status,
        JobStatus::Completed as i32,
        "{}",
        again.error_message
    );
    verify_post(winning_request(), &again.proof);
    assert_eq!(
        held(&status(&mut c).await),
        Some(b_g2_bytes),
        "released again"
    );
    let m = metrics(&mut c).await;
    assert!(
        m.contains("\ncrossgroth_srs_reread_after_release_total 1\n"),
        "{m}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parameter_file_unlike_filecoins_digest_is_refused_by_name() {
    let _turn = crate::sole_turn().await;
    // The fixture's parameters are random (insecure) sets under Filecoin's
    // file names: their digests are not the ones Filecoin publishes.
    let mut cfg = config();
    cfg.verify_production_params = true;
    let (server, addr) = start(cfg).await;
    let mut c = connect(&addr).await;
    let r = prove(&mut c, winning("digest-a")).await;
    assert_eq!(r.status, JobStatus::Failed as i32, "{}", r.error_message);
    let m = &r.error_message;
    assert_eq!(m.lines().count(), 1, "{m}");
    assert!(
        m.contains(".params") && m.contains("parameters.json expects") && m.contains("corrupt"),
        "{m}"
    );
    // The daemon goes on serving; the other kinds are not affected.
    assert_eq!(status(&mut c).await.total_proofs_failed, 1);
    eprintln!("digest check: {m}");
    server.shutdown().await.unwrap();
}

//! What the daemon's integration tests share: one sealed 2 KiB sector and PoSt
//! parameters a test binary, a daemon started in-process on a real socket,
//! requests built from the sector's vanilla proofs, and filecoin-proofs-api's
//! verifiers. PoSt only: their insecure parameters generate in seconds (PoRep's
//! and SnapDeals' take minutes on two cores).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crossgroth::backend::{open_backend, Backend, BackendKind};
use crossgroth_daemon::pb::{self, proving_engine_client::ProvingEngineClient};
use crossgroth_daemon::{Config, Listen, Server};
use crossgroth_filecoin::test_sector::{self, TestKind, TestSector};
use crossgroth_filecoin::{write_insecure_params, PoStRequest, ProofKind};
use filecoin_proofs::constants::SectorShape2KiB;
use filecoin_proofs_api::{PublicReplicaInfo, RegisteredPoStProof};
use tonic::transport::Channel;

pub use crossgroth_daemon::pb::await_proof_response::Status as JobStatus;

pub type Client = ProvingEngineClient<Channel>;

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub params_dir: PathBuf,
    pub sector: TestSector,
}

/// One sealed sector and PoSt parameters a test binary; filecoin-proofs reads its
/// settings once per process, so they are set first. With
/// `CROSSGROTH_TEST_FILECOIN_PARAMS=<dir>` the parameters are kept there and
/// shared with the other test binaries (CI sets it: each binary would
/// otherwise spend about 20 s on the same two sets); all of them write with
/// seed 11, so the shared sets are the same whichever binary wrote them.
pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let params_dir = std::env::var_os("CROSSGROTH_TEST_FILECOIN_PARAMS")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("params"));
        std::fs::create_dir_all(&params_dir).unwrap();
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.path().join("parents"));
        let sector =
            test_sector::make(2048, &[TestKind::PoSt], &dir.path().join("sector"), 3).unwrap();
        for kind in [ProofKind::WinningPoSt, ProofKind::WindowPoSt] {
            write_insecure_params(kind, 2048, &params_dir, 11, None).unwrap();
        }
        Fixture {
            _dir: dir,
            params_dir,
            sector,
        }
    })
}

/// A loopback daemon's configuration on the fixture's parameters: 4 GiB budget,
/// two synthesis threads.
pub fn config() -> Config {
    Config {
        listen: Listen::Tcp("127.0.0.1:0".into()),
        param_cache: fixture().params_dir.clone(),
        budget: crossgroth_daemon::Budget::Bytes(4 << 30),
        grace_period: Duration::from_secs(60),
        synthesis_threads: 2,
        ..Config::default()
    }
}

pub fn cpu() -> Vec<Arc<dyn Backend>> {
    vec![open_backend(BackendKind::Cpu).unwrap()]
}

/// Starts a daemon on `backends`; returns it and its address.
pub async fn start_with(c: Config, backends: Vec<Arc<dyn Backend>>) -> (Server, String) {
    fixture();
    let server = Server::start(c, backends).await.unwrap();
    let addr = server.bound().to_string();
    (server, addr)
}

/// Starts a daemon on the cpu backend.
pub async fn start(c: Config) -> (Server, String) {
    start_with(c, cpu()).await
}

pub async fn connect(addr: &str) -> Client {
    crossgroth_daemon::client::connect(addr).await.unwrap()
}

pub fn post_submit(kind: ProofKind, p: &PoStRequest, request_id: &str) -> pb::SubmitProofRequest {
    pb::SubmitProofRequest {
        request_id: request_id.into(),
        proof_kind: match kind {
            ProofKind::WinningPoSt => pb::ProofKind::WinningPost,
            _ => pb::ProofKind::WindowPostPartition,
        } as i32,
        registered_proof: p.registered_proof,
        miner_id: p.miner_id,
        randomness: p.randomness.clone(),
        vanilla_proofs: p.vanilla_proofs.clone(),
        partition_index: p.partition_index,
        ..Default::default()
    }
}

pub fn winning_request() -> &'static PoStRequest {
    fixture().sector.winning.as_ref().unwrap()
}

pub fn window_request() -> &'static PoStRequest {
    fixture().sector.window.as_ref().unwrap()
}

/// The sector's WinningPoSt (CRITICAL by default).
pub fn winning(id: &str) -> pb::SubmitProofRequest {
    post_submit(ProofKind::WinningPoSt, winning_request(), id)
}

/// The sector's WindowPoSt partition (HIGH by default).
pub fn window(id: &str) -> pb::SubmitProofRequest {
    post_submit(ProofKind::WindowPoSt, window_request(), id)
}

/// filecoin-proofs-api's own verifier on a PoSt proof the daemon returned.
pub fn post_verifies(p: &PoStRequest, proof: &[u8]) -> bool {
    type Tree = SectorShape2KiB;
    let registered = crossgroth_filecoin::registered::post_proof(p.registered_proof).unwrap();
    let replicas: BTreeMap<_, _> = p
        .vanilla_proofs
        .iter()
        .map(|b| {
            let s: filecoin_proofs::FallbackPoStSectorProof<Tree> =
                crossgroth_filecoin::inputs::bincode_decode(b, "vanilla").unwrap();
            let comm_r = filecoin_proofs::commitment_from_fr(s.comm_r.into());
            (s.sector_id, PublicReplicaInfo::new(registered, comm_r))
        })
        .collect();
    let randomness: [u8; 32] = p.randomness.clone().try_into().unwrap();
    let prover_id = crossgroth_filecoin::inputs::prover_id(p.miner_id);
    let ok = match registered {
        RegisteredPoStProof::StackedDrgWinning2KiBV1 => {
            filecoin_proofs_api::post::verify_winning_post(&randomness, proof, &replicas, prover_id)
        }
        _ => filecoin_proofs_api::post::verify_window_post(
            &randomness,
            &[(registered, proof)],
            &replicas,
            prover_id,
        ),
    };
    ok.unwrap()
}

pub fn verify_post(p: &PoStRequest, proof: &[u8]) {
    assert!(
        post_verifies(p, proof),
        "filecoin-proofs rejects the daemon's proof"
    );
}

pub async fn prove(c: &mut Client, r: pb::SubmitProofRequest) -> pb::AwaitProofResponse {
    c.prove(pb::ProveRequest { submit: Some(r) })
        .await
        .unwrap()
        .into_inner()
        .result
        .unwrap()
}

pub async fn await_job(c: &mut Client, job_id: &str) -> pb::AwaitProofResponse {
    c.await_proof(pb::AwaitProofRequest {
        job_id: job_id.into(),
        timeout_ms: 0,
    })
    .await
    .unwrap()
    .into_inner()
}

pub async fn status(c: &mut Client) -> pb::GetStatusResponse {
    c.get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

/// The daemon's Prometheus text, through GetMetrics.
pub async fn metrics(c: &mut Client) -> String {
    c.get_metrics(pb::GetMetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .prometheus_text
}

/// A queue's (pending, in progress) by cuzk's name ("window-post").
pub fn queue(s: &pb::GetStatusResponse, name: &str) -> (u32, u32) {
    let q = s.queues.iter().find(|q| q.proof_kind == name).unwrap();
    (q.pending, q.in_progress)
}

/// Polls `cond` every 10 ms until it holds, for at most `limit`.
pub async fn wait_until(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !cond() {
        assert!(t.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// This process's anonymous resident memory, from the kernel.
pub fn rss_anon() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("RssAnon:"))
        .expect("RssAnon in /proc/self/status");
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// `GET path` on the status listener: the whole reply, head and body.
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    })
    .await
    .unwrap()
}

/// The grpc.health.v1 status of `service` ("" for the whole server).
pub async fn health(addr: &str, service: &str) -> i32 {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    tonic_health::pb::health_client::HealthClient::new(channel)
        .check(tonic_health::pb::HealthCheckRequest {
            service: service.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .status
}

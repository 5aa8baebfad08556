//! Bad input, each a one-line error naming what is wrong, and the prover still
//! serving afterwards. PoSt circuits only (their parameters take seconds), with the
//! WindowPoSt parameter file replaced by the WinningPoSt one.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crossgroth::backend::{open_backend, BackendKind};
use crossgroth::engine::{Engine, EngineConfig, Priority};
use crossgroth_filecoin::test_sector::{self, TestKind, TestSector};
use crossgroth_filecoin::{
    write_insecure_params, FilecoinOptions, FilecoinProver, ParamsCache, PoRepRequest, ProofKind,
    Registered, Request, SnapRequest,
};

const SIZE: u64 = 2048;

struct Fixture {
    _dir: tempfile::TempDir,
    sector: TestSector,
    prover: FilecoinProver,
    params_dir: PathBuf,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let params_dir = dir.path().join("params");
        std::fs::create_dir_all(&params_dir).unwrap();
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.path().join("parents"));
        let sector = test_sector::make(SIZE, &[TestKind::PoSt], &dir.path().join("s"), 3).unwrap();
        let winning =
            write_insecure_params(ProofKind::WinningPoSt, SIZE, &params_dir, 5, None).unwrap();
        let reg = Registered::for_sector_size(SIZE).unwrap();
        let window = params_dir.join(reg.params(ProofKind::WindowPoSt).unwrap().params_file());
        std::fs::copy(&winning, &window).unwrap();
        let engine = Engine::start(
            EngineConfig::default(),
            vec![open_backend(BackendKind::Cpu).unwrap()],
        )
        .unwrap();
        let prover = FilecoinProver::new(
            Arc::new(engine),
            ParamsCache::open(&params_dir).unwrap(),
            FilecoinOptions::default(),
        );
        Fixture {
            _dir: dir,
            sector,
            prover,
            params_dir,
        }
    })
}

/// A job id no other test uses (tests run concurrently on one engine).
fn unique(prefix: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{prefix}-{n}")
}

/// The one-line error `request` fails with.
fn error(request: Request) -> String {
    let f = fixture();
    let e = f
        .prover
        .prove(&unique("bad"), &request, Priority::Normal)
        .expect_err("bad input must fail")
        .to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

fn winning() -> Request {
    Request::WinningPoSt(fixture().sector.winning.clone().unwrap())
}

/// The prover still proves after every refusal.
fn still_serves() {
    let out = fixture()
        .prover
        .prove(&unique("good"), &winning(), Priority::High)
        .unwrap();
    assert_eq!(out.proof.len(), 192);
}

fn porep(c1: &[u8]) -> Request {
    Request::PoRep(PoRepRequest {
        c1: c1.to_vec(),
        miner_id: 1000,
        sector_number: Some(1),
        registered_proof: None,
        sector_size: None,
    })
}

#[test]
fn c1_that_is_not_json_or_truncated() {
    let e = error(porep(b"{\"SectorNum\": 1, \"Phase1Out\": \"ey"));
    assert!(e.contains("the C1 output is not JSON"), "{e}");
    let e = error(porep(b"\x00\x01binary"));
    assert!(e.contains("not JSON"), "{e}");
    still_serves();
}

#[test]
fn phase1out_that_is_not_base64() {
    let e = error(porep(
        br#"{"SectorNum": 1, "Phase1Out": "not*base64!", "SectorSize": 2048}"#,
    ));
    assert!(e.contains("Phase1Out is not base64"), "{e}");
}

#[test]
fn unknown_registered_proof() {
    let mut r = fixture().sector.winning.clone().unwrap();
    r.registered_proof = 99;
    let e = error(Request::WinningPoSt(r));
    assert_eq!(e, "unknown registered PoSt proof 99 (known: 0–14)");
    let snap = SnapRequest {
        registered_proof: 7,
        vanilla_proofs: vec![vec![1]],
        comm_r_old: vec![0; 32],
        comm_r_new: vec![0; 32],
        comm_d_new: vec![0; 32],
    };
    let e = error(Request::SnapDeals(snap));
    assert!(e.contains("unknown registered update proof 7"), "{e}");
}

#[test]
fn a_winning_proof_number_for_window_post() {
    let r = fixture().sector.winning.clone().unwrap();
    let e = error(Request::WindowPoSt(r));
    assert!(e.contains("is not a WindowPoSt proof"), "{e}");
}

#[test]
fn randomness_of_the_wrong_length() {
    let mut r = fixture().sector.winning.clone().unwrap();
    r.randomness = vec![7; 31];
    assert_eq!(
        error(Request::WinningPoSt(r)),
        "randomness must be 32 bytes, got 31"
    );
    let snap = SnapRequest {
        registered_proof: 0,
        vanilla_proofs: vec![vec![1]],
        comm_r_old: vec![0; 32],
        comm_r_new: vec![0; 33],
        comm_d_new: vec![0; 32],
    };
    assert_eq!(
        error(Request::SnapDeals(snap)),
        "comm_r_new must be 32 bytes, got 33"
    );
    still_serves();
}

#[test]
fn an_empty_vanilla_proof_list() {
    let mut r = fixture().sector.winning.clone().unwrap();
    r.vanilla_proofs.clear();
    assert_eq!(
        error(Request::WinningPoSt(r)),
        "no vanilla proofs were given"
    );
}

#[test]
fn vanilla_proofs_that_do_not_decode_or_verify() {
    let good = fixture().sector.winning.clone().unwrap();
    let mut r = good.clone();
    r.vanilla_proofs[0].truncate(100);
    let e = error(Request::WinningPoSt(r));
    assert!(
        e.contains("vanilla proof 0 is not a valid bincode encoding"),
        "{e}"
    );
    // Another sector's randomness: the vanilla proof answers other challenges.
    let mut r = good.clone();
    r.randomness[0] ^= 1;
    let e = error(Request::WinningPoSt(r));
    assert!(e.contains("vanilla proofs failed to verify"), "{e}");
    still_serves();
}

#[test]
fn a_missing_parameter_file() {
    let f = fixture();
    let reg = Registered::for_sector_size(8 << 20).unwrap();
    let p = reg.params(ProofKind::PoRep).unwrap();
    let e = f.prover.params().require(&p).unwrap_err().to_string();
    let path = f.params_dir.canonicalize().unwrap().join(p.params_file());
    assert!(
        e.starts_with(&format!("parameter file {}: missing", path.display())),
        "{e}"
    );
    assert!(e.contains("porep-8MiB"), "{e}");
}

#[test]
fn a_parameter_file_of_another_circuit() {
    let window = Request::WindowPoSt(fixture().sector.window.clone().unwrap());
    let e = error(window);
    assert!(
        e.contains("does not fit the window-post-2KiB circuit"),
        "{e}"
    );
    assert!(e.contains("belongs to another circuit"), "{e}");
    assert!(e.contains(".params"), "{e}");
    still_serves();
}

#[test]
fn a_directory_with_other_parameters_is_not_written_into() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("v28-stacked-proof-of-replication-x.params"),
        b"real",
    )
    .unwrap();
    let e = write_insecure_params(ProofKind::WindowPoSt, SIZE, dir.path(), 1, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("refusing to write insecure test parameters"),
        "{e}"
    );
    assert!(e.contains("which crossgroth did not write"), "{e}");
    let e = write_insecure_params(
        ProofKind::WindowPoSt,
        SIZE,
        std::path::Path::new("/var/tmp/filecoin-proof-parameters"),
        1,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("default parameter cache"), "{e}");
}

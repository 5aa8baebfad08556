//! Every Filecoin proof kind on a 2 KiB test sector: crossgroth's partition proofs
//! equal bellperson's `create_proof_batch` on the same circuits, parameters and
//! (r, s), and filecoin-proofs' verifiers accept crossgroth's whole output; on the
//! cpu backend and on wgpu. One sector and one parameter directory serve all tests
//! of this binary (random parameters take minutes to generate).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use blstrs::{Bls12, Scalar};
use crossgroth::backend::{open_backend, Backend, BackendKind};
use crossgroth::engine::{Engine, EngineConfig};
use crossgroth::Circuit;
use crossgroth_filecoin::test_sector::{self, TestKind, TestSector};
use crossgroth_filecoin::{
    porep, post, snap, write_insecure_params, CircuitParams, FilecoinOptions, FilecoinProver,
    ParamsCache, ProofKind, Registered, Request,
};
use ff::Field;
use filecoin_proofs::constants::SectorShape2KiB;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

const SIZE: u64 = 2048;

struct Fixture {
    _dir: tempfile::TempDir,
    params_dir: PathBuf,
    sector: TestSector,
}

/// The test sector and its parameters, made once per test binary. filecoin-proofs
/// reads its settings once per process, so they are set here before anything else.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        // A developer may keep the parameters between runs (they take minutes).
        let params_dir = std::env::var_os("CROSSGROTH_TEST_FILECOIN_PARAMS")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("params"));
        std::fs::create_dir_all(&params_dir).unwrap();
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.path().join("parents"));
        let kinds = [TestKind::PoRep, TestKind::PoSt, TestKind::Snap];
        let sector = test_sector::make(SIZE, &kinds, &dir.path().join("sector"), 7).unwrap();
        for kind in ProofKind::ALL {
            let t = std::time::Instant::now();
            write_insecure_params(kind, SIZE, &params_dir, 11, None).unwrap();
            eprintln!(
                "{} parameters: {:.1} s",
                kind.name(),
                t.elapsed().as_secs_f64()
            );
        }
        Fixture {
            _dir: dir,
            params_dir,
            sector,
        }
    })
}

fn request(kind: ProofKind) -> Request {
    let s = &fixture().sector;
    match kind {
        ProofKind::PoRep => Request::PoRep(s.porep.clone().unwrap()),
        ProofKind::WinningPoSt => Request::WinningPoSt(s.winning.clone().unwrap()),
        ProofKind::WindowPoSt => Request::WindowPoSt(s.window.clone().unwrap()),
        ProofKind::SnapDeals => Request::SnapDeals(s.snap.clone().unwrap()),
    }
}

fn prover(backend: Arc<dyn Backend>) -> FilecoinProver {
    prover_keeping_shapes(backend, None)
}

fn prover_keeping_shapes(
    backend: Arc<dyn Backend>,
    shapes_dir: Option<std::path::PathBuf>,
) -> FilecoinProver {
    let f = fixture();
    let engine = Engine::start(EngineConfig::default(), vec![backend]).unwrap();
    FilecoinProver::new(
        Arc::new(engine),
        ParamsCache::open(&f.params_dir).unwrap(),
        FilecoinOptions {
            record_every_kind: true,
            shapes_dir,
            ..FilecoinOptions::default()
        },
    )
}

fn rs(n: usize, seed: u64) -> (Vec<Scalar>, Vec<Scalar>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let r = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let s = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    (r, s)
}

/// bellperson's proofs of `circuits` with the same parameter file and (r, s).
fn bellperson_bytes<C: Circuit<Scalar> + Send>(
    params: &CircuitParams,
    circuits: Vec<C>,
    r: &[Scalar],
    s: &[Scalar],
) -> Vec<u8> {
    let path = fixture().params_dir.join(params.params_file());
    let file = std::fs::File::open(&path).unwrap();
    let bp = bellperson::groth16::Parameters::<Bls12>::read(std::io::BufReader::new(file), false)
        .unwrap();
    let proofs =
        bellperson::groth16::create_proof_batch(circuits, &bp, r.to_vec(), s.to_vec()).unwrap();
    let mut out = Vec::new();
    for p in proofs {
        p.write(&mut out).unwrap();
    }
    out
}

/// The kind's circuits, proved by bellperson.
fn expected(kind: ProofKind, r: &[Scalar], s: &[Scalar]) -> Vec<u8> {
    type T = SectorShape2KiB;
    match request(kind) {
        Request::PoRep(q) => {
            let c = porep::request_circuits::<T>(&q).unwrap();
            bellperson_bytes(&c.params, c.circuits, r, s)
        }
        Request::WinningPoSt(q) | Request::WindowPoSt(q) => {
            let c = post::request_circuits::<T>(&q).unwrap();
            bellperson_bytes(&c.params, c.circuits, r, s)
        }
        Request::SnapDeals(q) => {
            let c = snap::request_circuits::<T>(&q).unwrap();
            bellperson_bytes(&c.params, c.circuits, r, s)
        }
    }
}

/// bellperson's proofs of this fixture's PoRep, SnapDeals and WinningPoSt
/// circuits, kept here because bellperson's own prover takes most of a minute
/// on the first two on two cores, and the third is proved by three tests. A line per kind: its name, a digest of everything that decides the
/// proof (the verifying key, whose points depend on every value of the
/// parameters' toxic waste; the request; r and s) and the proof, both in hex.
/// `recorded_bellperson_proofs_are_current` checks them against bellperson
/// and, with CROSSGROTH_RECORD_BELLPERSON=1, writes them.
const RECORDED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/bellperson-2KiB.txt"
);

fn params_of(kind: ProofKind) -> CircuitParams {
    Registered::for_sector_size(SIZE)
        .unwrap()
        .params(kind)
        .unwrap()
}

fn inputs_digest(kind: ProofKind, r: &[Scalar], s: &[Scalar]) -> String {
    use ff::PrimeField;
    let vk_path = fixture().params_dir.join(params_of(kind).vk_file());
    let vk = std::fs::read(&vk_path).unwrap();
    let mut h = blake2b_simd::Params::new().hash_length(32).to_state();
    h.update(&vk);
    h.update(format!("{:?}", request(kind)).as_bytes());
    for x in r.iter().chain(s) {
        h.update(x.to_repr().as_ref());
    }
    hex::encode(h.finalize().as_bytes())
}

/// The recorded bellperson proof of `kind` with (r, s); a fixture that changed
/// since it was recorded is a failure that says how to record it again.
fn recorded(kind: ProofKind, r: &[Scalar], s: &[Scalar]) -> Vec<u8> {
    let text = std::fs::read_to_string(RECORDED).unwrap();
    let line = text
        .lines()
        .find(|l| l.split(' ').next() == Some(format!("{kind:?}").as_str()))
        .unwrap_or_else(|| panic!("{RECORDED} has no line for {kind:?}"));
    let fields: Vec<&str> = line.split(' ').collect();
    assert_eq!(
        fields[1],
        inputs_digest(kind, r, s),
        "{kind:?}'s fixture (parameters, sector or randomness) changed since bellperson's proof \
         was recorded: record it again with CROSSGROTH_RECORD_BELLPERSON=1 cargo test \
         --release -p crossgroth-filecoin --test kinds -- --ignored \
         recorded_bellperson_proofs_are_current"
    );
    hex::decode(fields[2]).unwrap()
}

/// The kinds whose bellperson proofs are recorded (WindowPoSt's is made live,
/// so that one kind's comparison runs bellperson in every test run).
const RECORDED_KINDS: [ProofKind; 3] = [
    ProofKind::PoRep,
    ProofKind::SnapDeals,
    ProofKind::WinningPoSt,
];

/// The reference bytes of `kind`: bellperson's proofs, recorded or made here.
fn reference(kind: ProofKind, r: &[Scalar], s: &[Scalar]) -> Vec<u8> {
    if RECORDED_KINDS.contains(&kind) {
        recorded(kind, r, s)
    } else {
        expected(kind, r, s)
    }
}

/// The recorded proofs equal bellperson's on this fixture (CROSSGROTH_RECORD_
/// BELLPERSON=1: writes them instead).
#[test]
#[ignore = "bellperson's PoRep and SnapDeals proofs take minutes on two cores"]
fn recorded_bellperson_proofs_are_current() {
    let write = std::env::var("CROSSGROTH_RECORD_BELLPERSON").as_deref() == Ok("1");
    let mut lines = Vec::new();
    for kind in RECORDED_KINDS {
        let (r, s) = rs(partitions(kind), 1);
        let live = expected(kind, &r, &s);
        if write {
            lines.push(format!(
                "{kind:?} {} {}",
                inputs_digest(kind, &r, &s),
                hex::encode(&live)
            ));
        } else {
            assert_eq!(recorded(kind, &r, &s), live, "{kind:?}");
        }
    }
    if write {
        std::fs::create_dir_all(std::path::Path::new(RECORDED).parent().unwrap()).unwrap();
        std::fs::write(RECORDED, lines.join("\n") + "\n").unwrap();
    }
}

fn partitions(kind: ProofKind) -> usize {
    match kind {
        ProofKind::PoRep => 1,
        ProofKind::WinningPoSt | ProofKind::WindowPoSt => 1,
        ProofKind::SnapDeals => 1,
    }
}

/// crossgroth's output equals bellperson's and passes filecoin-proofs' verifier
/// (the prover runs it before returning); twice, so that the second proof runs
/// from the recorded shape.
fn same_as_bellperson(backend: Arc<dyn Backend>, kind: ProofKind) {
    same_as_bellperson_rounds(backend, kind, 2)
}

/// [`same_as_bellperson`] for `rounds` proofs of one prover.
fn same_as_bellperson_rounds(backend: Arc<dyn Backend>, kind: ProofKind, rounds: usize) {
    let prover = prover(backend);
    let (r, s) = rs(partitions(kind), 1);
    let want = reference(kind, &r, &s);
    for round in 0..rounds {
        let id = format!("{kind:?}-{round}");
        let out = prover
            .prove_with_randomness(&id, &request(kind), r.clone(), s.clone())
            .unwrap();
        assert_eq!(out.recorded_shape, round == 0, "{kind:?}");
        assert!(out.insecure_params);
        assert_eq!(out.proof, want, "{kind:?} round {round}");
    }
}

/// One round: the second round's path (a proof from the recorded shape) is
/// the same for every kind, and the PoSt tests and the shapes test take it;
/// PoRep's circuit makes each round most of a minute on two cores.
#[test]
fn cpu_porep_c2() {
    same_as_bellperson_rounds(open_backend(BackendKind::Cpu).unwrap(), ProofKind::PoRep, 1);
}

#[test]
fn cpu_winning_post() {
    same_as_bellperson(
        open_backend(BackendKind::Cpu).unwrap(),
        ProofKind::WinningPoSt,
    );
}

#[test]
fn cpu_window_post() {
    same_as_bellperson(
        open_backend(BackendKind::Cpu).unwrap(),
        ProofKind::WindowPoSt,
    );
}

/// One round, as [`cpu_porep_c2`].
#[test]
fn cpu_snap_deals() {
    same_as_bellperson_rounds(
        open_backend(BackendKind::Cpu).unwrap(),
        ProofKind::SnapDeals,
        1,
    );
}

fn wgpu() -> Option<Arc<dyn Backend>> {
    match open_backend(BackendKind::Wgpu) {
        Ok(b) => Some(b),
        Err(e) => {
            if std::env::var("CROSSGROTH_REQUIRE_WGPU").as_deref() == Ok("1") {
                panic!("CROSSGROTH_REQUIRE_WGPU=1 but {e}");
            }
            eprintln!(
                "SKIPPED: no wgpu adapter ({e}); set CROSSGROTH_REQUIRE_WGPU=1 to fail instead"
            );
            None
        }
    }
}

fn cuda() -> Option<Arc<dyn Backend>> {
    match open_backend(BackendKind::Cuda) {
        Ok(b) => Some(b),
        Err(e) => {
            if std::env::var("CROSSGROTH_REQUIRE_CUDA").as_deref() == Ok("1") {
                panic!("CROSSGROTH_REQUIRE_CUDA=1 but {e}");
            }
            eprintln!(
                "SKIPPED: no CUDA device ({e}); set CROSSGROTH_REQUIRE_CUDA=1 to fail instead"
            );
            None
        }
    }
}

#[test]
fn cuda_every_kind() {
    if let Some(b) = cuda() {
        for kind in ProofKind::ALL {
            same_as_bellperson(b.clone(), kind);
        }
    }
}

/// PoRep and SnapDeals on lavapipe take too long for CI: checked on the GPU
/// machine (`scripts/device/run.sh` and `portable.sh` run the ignored tests).
#[test]
#[ignore = "minutes on lavapipe: run on a GPU machine with --include-ignored"]
fn wgpu_porep_c2_and_snap_deals() {
    if let Some(b) = wgpu() {
        same_as_bellperson(b.clone(), ProofKind::PoRep);
        same_as_bellperson(b, ProofKind::SnapDeals);
    }
}

/// WinningPoSt is WindowPoSt's circuit with more challenges, and over a
/// minute on lavapipe: [`wgpu_window_post`] proves the PoSt circuit there, and
/// the GPU machine runs this one.
#[test]
#[ignore = "a minute on lavapipe: run on a GPU machine with --include-ignored"]
fn wgpu_winning_post() {
    if let Some(b) = wgpu() {
        same_as_bellperson_rounds(b, ProofKind::WinningPoSt, 1);
    }
}

/// One round on lavapipe: the second round's path (a reused prover) is the
/// cpu tests' and the GPU machine's.
#[test]
fn wgpu_window_post() {
    if let Some(b) = wgpu() {
        same_as_bellperson_rounds(b, ProofKind::WindowPoSt, 1);
    }
}

/// The C1 output with one byte of comm_d changed: its replica id no longer
/// derives from it, and the request is refused naming that, before any circuit
/// is built (witness_names.rs covers the named row of an unsatisfied witness).
#[test]
fn a_tampered_c1_output_is_refused_before_proving() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let q = fixture().sector.porep.clone().unwrap();
    let mut wrapper: serde_json::Value = serde_json::from_slice(&q.c1).unwrap();
    let inner = b64.decode(wrapper["Phase1Out"].as_str().unwrap()).unwrap();
    let mut c1: serde_json::Value = serde_json::from_slice(&inner).unwrap();
    let byte = c1["comm_d"][5].as_u64().unwrap();
    c1["comm_d"][5] = (byte ^ 1).into();
    wrapper["Phase1Out"] = b64.encode(serde_json::to_vec(&c1).unwrap()).into();
    let mut bad = q.clone();
    bad.c1 = serde_json::to_vec(&wrapper).unwrap();
    let prover = prover(open_backend(BackendKind::Cpu).unwrap());
    let e = prover
        .prove(
            "tampered",
            &Request::PoRep(bad),
            crossgroth::engine::Priority::Normal,
        )
        .unwrap_err();
    let text = e.to_string();
    // Refused by the vanilla proofs' own checks, before any circuit is built.
    assert!(
        text.starts_with("the C1 output's replica_id is not the one of miner_id 1000"),
        "{text}"
    );
    assert!(!text.contains('\n'), "{text}");
    // The sector-size and registered-proof claims are checked against the C1 output.
    let mut other = q.clone();
    other.sector_size = Some(32 << 30);
    let text = prover
        .prove(
            "size",
            &Request::PoRep(other),
            crossgroth::engine::Priority::Normal,
        )
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("the request's sector size 34359738368 contradicts"),
        "{text}"
    );
    let mut other = q;
    other.registered_proof = Some(8);
    let text = prover
        .prove(
            "proof",
            &Request::PoRep(other),
            crossgroth::engine::Priority::Normal,
        )
        .unwrap_err()
        .to_string();
    assert!(text.contains("the request's registered proof 8"), "{text}");
}

/// A restarted prover reads the shape its predecessor kept on disk instead of
/// recording it; a corrupt file is refused and recorded again; every proof is
/// bellperson's bytes. WindowPoSt: the smallest circuit, and what is kept is
/// the same for every kind.
#[test]
fn shapes_kept_on_disk_are_read_after_a_restart_and_never_trusted_corrupt() {
    let kind = ProofKind::WindowPoSt;
    let dir = tempfile::tempdir().unwrap();
    let (r, s) = rs(partitions(kind), 3);
    let want = expected(kind, &r, &s);
    let p = params_of(kind);
    let run = |id: &str| {
        let prover = prover_keeping_shapes(
            open_backend(BackendKind::Cpu).unwrap(),
            Some(dir.path().into()),
        );
        let out = prover
            .prove_with_randomness(id, &request(kind), r.clone(), s.clone())
            .unwrap();
        assert_eq!(out.proof, want, "{id}");
        out.recorded_shape
    };
    assert!(run("first"), "the first run records the shape");
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].extension().is_some_and(|e| e == "shape"));
    assert!(!run("restarted"), "a restart reads the kept shape");
    // Preloading reads the kept shape beside the parameters: the set is
    // resident with its shape before the first request.
    let preloaded = |id: &str| {
        let prover = prover_keeping_shapes(
            open_backend(BackendKind::Cpu).unwrap(),
            Some(dir.path().into()),
        );
        let (_, with_shape) = prover.preload(&p).unwrap();
        let sets = prover.engine().resident_sets();
        assert_eq!(sets.len(), 1, "{id}: {sets:?}");
        assert_eq!(sets[0].has_shape, with_shape, "{id}");
        let out = prover
            .prove_with_randomness(id, &request(kind), r.clone(), s.clone())
            .unwrap();
        assert_eq!(out.proof, want, "{id}");
        assert!(!out.recorded_shape, "{id}: the preloaded shape is used");
        with_shape
    };
    assert!(preloaded("preloaded"), "preload holds the kept shape");

    let mut bytes = std::fs::read(&files[0]).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x08;
    std::fs::write(&files[0], &bytes).unwrap();
    let prover = prover_keeping_shapes(
        open_backend(BackendKind::Cpu).unwrap(),
        Some(dir.path().into()),
    );
    assert!(!prover.preload(&p).unwrap().1, "a corrupt file is not held");
    drop(prover);
    assert!(run("corrupt"), "a corrupt file is recorded again");
    assert!(!run("rewritten"), "and the new file is read");
}

//! Hostile input through the daemon over a real loopback socket: mutated requests of
//! every kind (vanilla proofs bit-flipped, truncated, with forged bincode lengths;
//! the PoRep C1 JSON edited by structure; fields out of range), each refused with a
//! one-line error that names the field, or proved only where filecoin-proofs-api's
//! own verifier accepts the proof; no panic anywhere (a panic hook counts them);
//! afterwards one valid request of each kind, as Curio sends it (PoRep's C1
//! wrapper in vanilla_proof, SnapDeals' raw 32-byte commitments), still proves and
//! passes filecoin-proofs-api's verifier.
//!
//! PoRep C2 and SnapDeals parameters take minutes on two cores:
//! `CROSSGROTH_TEST_FILECOIN_PARAMS=<dir>` shares them with the other test
//! binaries (CI sets it); they are written with the same seed (11) as theirs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{post_submit, post_verifies, Client, JobStatus};
use crossgroth::backend::{open_backend, BackendKind};
use crossgroth_daemon::{pb, Budget, Config, Listen, Server};
use crossgroth_filecoin::test_sector::{self, TestKind, TestSector};
use crossgroth_filecoin::{inputs, write_insecure_params, PoStRequest, ProofKind};
use filecoin_proofs_api::{seal, update, SectorId};
use serde_json::Value;

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts every panic of the process (caught or not) before the default hook
/// prints it, so that "no panic in the log" is one number.
fn count_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        default(info)
    }));
}

/// splitmix64: a deterministic generator for mutation positions (no rand crate
/// among the daemon's dev-dependencies).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One mutated request and the words one of which its refusal must contain.
struct Case {
    label: String,
    kind: ProofKind,
    submit: pb::SubmitProofRequest,
    names: &'static [&'static str],
}

const VANILLA: &[&str] = &["vanilla"];
const C1: &[&str] = &["c1", "phase1out"];

fn flip(bytes: &[u8], byte: usize, bit: u8) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[byte] ^= 1 << bit;
    b
}

fn put_u64(bytes: &[u8], at: usize, value: u64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 8].copy_from_slice(&value.to_le_bytes());
    b
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// Standard base64 with padding (Go's encoding of `[]byte`).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// PoSt mutations: the bincode layout of a 2 KiB `FallbackPoStSectorProof` is
/// sector_id u64 | comm_r 32 | sectors len u64 | inclusion_proofs len u64 |
/// ProofData variant u32 | root 32 | leaf 32 | path len u64 | hashes len u64 |
/// 7 hashes | index u64 | … | comm_c 32 | comm_r_last 32.
fn post_cases(kind: ProofKind, good: &PoStRequest, rng: &mut Rng, cases: &mut Vec<Case>) {
    let name = match kind {
        ProofKind::WinningPoSt => "winning",
        _ => "window",
    };
    let v = &good.vanilla_proofs[0];
    let challenges = if kind == ProofKind::WinningPoSt {
        66
    } else {
        10
    };
    // The layout this function assumes, checked on the real proof.
    assert_eq!(u64_at(v, 40), 1, "one sector proof");
    assert_eq!(u64_at(v, 48), challenges, "inclusion proofs");
    assert_eq!(&v[56..60], &[0, 0, 0, 0], "ProofData::Single");
    assert_eq!(u64_at(v, 124), 2, "a 2 KiB tree has 2 levels of arity 8");
    assert_eq!(u64_at(v, 132), 7, "7 siblings a level");
    assert!(u64_at(v, 364) < 8, "the first level's index");
    let len = v.len();
    let mut add = |label: String, vanilla: Vec<Vec<u8>>, names: &'static [&'static str]| {
        let mut r = good.clone();
        r.vanilla_proofs = vanilla;
        cases.push(Case {
            label: format!("{name}: {label}"),
            kind,
            submit: post_submit(kind, &r, ""),
            names,
        });
    };
    for _ in 0..3 {
        let (byte, bit) = (rng.below(len), rng.below(8) as u8);
        add(
            format!("bit {bit} of byte {byte} flipped"),
            vec![flip(v, byte, bit)],
            VANILLA,
        );
    }
    let targeted = [
        ("comm_r above the field modulus", 39, 7),
        ("comm_c changed", len - 64, 0),
        ("comm_r_last above the field modulus", len - 1, 7),
        ("a path sibling above the field modulus", 140 + 31, 7),
        ("ProofData variant 4", 56, 2),
    ];
    for (what, byte, bit) in targeted {
        add(what.into(), vec![flip(v, byte, bit)], VANILLA);
    }
    for cut in [10, len - 1] {
        add(
            format!("truncated to {cut} bytes"),
            vec![v[..cut].to_vec()],
            VANILLA,
        );
    }
    let forged = [
        ("sector proofs' bincode length 2^62", 40, 1 << 62),
        ("inclusion proofs' bincode length 2^62", 48, 1 << 62),
        ("path siblings' bincode length 2^62", 132, 1 << 62),
        ("a Merkle index of 9 at arity 8", 364, 9),
        ("a Merkle index of 2^59", 364, 1 << 59),
        ("sector id 2^63 (other challenges)", 0, 1 << 63),
    ];
    for (what, at, value) in forged {
        add(what.into(), vec![put_u64(v, at, value)], VANILLA);
    }
    match kind {
        ProofKind::WinningPoSt => add("two sectors".into(), vec![v.clone(), v.clone()], VANILLA),
        _ => {
            add(
                "the same sector twice".into(),
                vec![v.clone(), v.clone()],
                VANILLA,
            );
            add(
                "three sectors, one more than a 2 KiB partition holds".into(),
                vec![v.clone(), put_u64(v, 0, 1), put_u64(v, 0, 2)],
                VANILLA,
            );
        }
    }
    let mut field = |label: &str, change: &dyn Fn(&mut PoStRequest), names| {
        let mut r = good.clone();
        change(&mut r);
        cases.push(Case {
            label: format!("{name}: {label}"),
            kind,
            submit: post_submit(kind, &r, ""),
            names,
        });
    };
    field(
        "randomness of 31 bytes",
        &|r| r.randomness.truncate(31),
        &["randomness"],
    );
    field(
        "randomness above the field modulus",
        &|r| r.randomness = vec![0xff; 32],
        &["randomness"],
    );
    field(
        "other randomness",
        &|r| r.randomness[0] ^= 1,
        &["vanilla", "randomness"],
    );
    field("miner 0", &|r| r.miner_id = 0, &["miner", "prover"]);
    field(
        "miner u64::MAX",
        &|r| r.miner_id = u64::MAX,
        &["miner", "prover"],
    );
    if kind == ProofKind::WindowPoSt {
        field(
            "partition 4294967295",
            &|r| r.partition_index = u32::MAX,
            &["partition"],
        );
    }
}

/// SnapDeals mutations: a 2 KiB `PartitionProof` is comm_c 32 | apex_leafs len
/// u64 (8) | 8 apex leaves | challenge_proofs len u64 (10) | ….
fn snap_cases(good: &pb::SubmitProofRequest, rng: &mut Rng, cases: &mut Vec<Case>) {
    let v = &good.vanilla_proofs[0];
    assert_eq!(u64_at(v, 32), 8, "apex leaves");
    assert_eq!(u64_at(v, 296), 10, "challenge proofs");
    let len = v.len();
    let mut add = |label: String, change: &dyn Fn(&mut pb::SubmitProofRequest), names| {
        let mut r = good.clone();
        change(&mut r);
        cases.push(Case {
            label: format!("snap: {label}"),
            kind: ProofKind::SnapDeals,
            submit: r,
            names,
        });
    };
    for _ in 0..3 {
        let (byte, bit) = (rng.below(len), rng.below(8) as u8);
        add(
            format!("bit {bit} of byte {byte} flipped"),
            &|r| r.vanilla_proofs[0] = flip(v, byte, bit),
            VANILLA,
        );
    }
    let targeted = [
        ("comm_c above the field modulus", 31, 7),
        ("comm_c changed", 0, 0),
        ("an apex leaf above the field modulus", 40 + 31, 7),
        ("an apex leaf changed", 40 + 32, 0),
        ("challenge proof 0 read as ProofData::Sub", 304, 0),
    ];
    for (what, byte, bit) in targeted {
        add(
            what.into(),
            &|r| r.vanilla_proofs[0] = flip(v, byte, bit),
            VANILLA,
        );
    }
    for (what, at) in [
        ("the first 8 bytes (inside comm_c)", 0),
        ("apex leaves", 32),
        ("challenge proofs", 296),
    ] {
        add(
            format!("{what}: bincode length 2^62"),
            &|r| r.vanilla_proofs[0] = put_u64(v, at, 1 << 62),
            VANILLA,
        );
    }
    add(
        format!("truncated to {} bytes", len / 2),
        &|r| r.vanilla_proofs[0].truncate(len / 2),
        VANILLA,
    );
    add(
        "two partitions".into(),
        &|r| r.vanilla_proofs.push(v.clone()),
        &["partition"],
    );
    add(
        "comm_r_new above the field modulus".into(),
        &|r| r.comm_r_new = vec![0xff; 32],
        &["comm_r_new"],
    );
    add(
        "comm_d_new above the field modulus".into(),
        &|r| r.comm_d_new = vec![0xff; 32],
        &["comm_d_new"],
    );
    add(
        "comm_r_old and comm_r_new swapped".into(),
        &|r| std::mem::swap(&mut r.comm_r_old, &mut r.comm_r_new),
        &["comm_r"],
    );
    add(
        "comm_d_new of 31 bytes".into(),
        &|r| r.comm_d_new.truncate(31),
        &["comm_d_new"],
    );
}

/// PoRep mutations: the C1 output's JSON edited by structure (inside Curio's
/// wrapper, re-encoded), the wrapper itself, and the request's fields.
fn porep_cases(good: &pb::SubmitProofRequest, cases: &mut Vec<Case>) {
    let wrapper: Value = serde_json::from_slice(&good.vanilla_proof).unwrap();
    let inner = inputs::decode_c1(&good.vanilla_proof).unwrap().output;
    let inner = serde_json::to_value(&inner).unwrap();
    let shape = inner["vanilla_proofs"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let proof = format!("/vanilla_proofs/{shape}/0/0");
    let mut add = |label: &str, body: Vec<u8>, names| {
        let mut r = good.clone();
        r.vanilla_proof = body;
        cases.push(Case {
            label: format!("porep: {label}"),
            kind: ProofKind::PoRep,
            submit: r,
            names,
        });
    };
    let wrap = |v: &Value| {
        let mut w = wrapper.clone();
        w["Phase1Out"] = Value::String(base64(&serde_json::to_vec(v).unwrap()));
        serde_json::to_vec(&w).unwrap()
    };
    type Edit = Box<dyn Fn(&mut Value)>;
    let at = |pointer: String, f: Box<dyn Fn(&mut Value)>| -> Edit {
        Box::new(move |v: &mut Value| {
            let target = v
                .pointer_mut(&pointer)
                .unwrap_or_else(|| panic!("{pointer} is in the C1 output"));
            f(target)
        })
    };
    let pop = || -> Box<dyn Fn(&mut Value)> {
        Box::new(|v: &mut Value| {
            v.as_array_mut().unwrap().pop();
        })
    };
    let set =
        |x: Value| -> Box<dyn Fn(&mut Value)> { Box::new(move |v: &mut Value| *v = x.clone()) };
    let single = |proof_field: &str| format!("{proof}/{proof_field}/data/Single");
    let edits: Vec<(&str, Edit, &'static [&'static str])> = vec![
        (
            "comm_d removed",
            Box::new(|v: &mut Value| {
                v.as_object_mut().unwrap().remove("comm_d");
            }),
            C1,
        ),
        ("seed a string", at("/seed".into(), set("seed".into())), C1),
        (
            "a challenge proof removed",
            at(format!("/vanilla_proofs/{shape}/0"), pop()),
            C1,
        ),
        (
            "no partitions",
            at(format!("/vanilla_proofs/{shape}"), set(Value::Array(vec![]))),
            C1,
        ),
        (
            "a DRG parent's column removed",
            at(format!("{proof}/replica_column_proofs/drg_parents"), pop()),
            C1,
        ),
        (
            "a column row removed",
            at(
                format!("{proof}/replica_column_proofs/c_x/column/rows"),
                pop(),
            ),
            C1,
        ),
        (
            "a Merkle sibling removed",
            at(
                format!("{}/path/path/0/hashes", single("comm_r_last_proof")),
                pop(),
            ),
            C1,
        ),
        (
            "a Merkle index of 9 at arity 8",
            at(
                format!("{}/path/path/0/index", single("comm_r_last_proof")),
                set(9.into()),
            ),
            C1,
        ),
        (
            "a column proof's Merkle index of 10^15",
            at(
                format!(
                    "{proof}/replica_column_proofs/c_x/inclusion_proof/data/Single/path/path/0/index"
                ),
                set(1_000_000_000_000_000u64.into()),
            ),
            C1,
        ),
        (
            "a comm_d path sibling above the field modulus",
            at(
                format!("{}/path/path/0/hashes/0/31", single("comm_d_proofs")),
                set(255.into()),
            ),
            C1,
        ),
        (
            "a comm_r_last leaf above the field modulus",
            at(format!("{}/leaf/31", single("comm_r_last_proof")), set(255.into())),
            C1,
        ),
        (
            "a labeling proof removed",
            at(format!("{proof}/labeling_proofs"), pop()),
            C1,
        ),
        (
            "a labeling proof repeated",
            at(
                format!("{proof}/labeling_proofs"),
                Box::new(|v: &mut Value| {
                    let a = v.as_array_mut().unwrap();
                    a.push(a[0].clone());
                }),
            ),
            C1,
        ),
        (
            "an encoding parent removed",
            at(format!("{proof}/encoding_proof/parents"), pop()),
            C1,
        ),
        (
            "registered proof 8 MiB",
            at("/registered_proof".into(), set("StackedDrg8MiBV1_1".into())),
            &["c1", "registered proof"],
        ),
        (
            "comm_d above the field modulus",
            at("/comm_d/31".into(), set(255.into())),
            &["comm_d"],
        ),
        (
            "replica_id changed",
            at("/replica_id/0".into(), set(1.into())),
            &["replica_id"],
        ),
        (
            "seed changed",
            at("/seed/0".into(), set(7.into())),
            &["c1", "seed"],
        ),
    ];
    for (label, edit, names) in edits {
        let mut v = inner.clone();
        edit(&mut v);
        add(label, wrap(&v), names);
    }
    let phase1 = wrapper["Phase1Out"].as_str().unwrap().to_string();
    let mut wrapped = |label: &str, f: &dyn Fn(&mut Value), names| {
        let mut w = wrapper.clone();
        f(&mut w);
        add(label, serde_json::to_vec(&w).unwrap(), names);
    };
    wrapped(
        "Phase1Out base64 garbage",
        &|w| w["Phase1Out"] = "@@not base64!!".into(),
        &["phase1out"],
    );
    let half = phase1.len() / 8 * 4;
    wrapped(
        "Phase1Out truncated",
        &|w| w["Phase1Out"] = phase1[..half].into(),
        &["phase1out", "c1"],
    );
    wrapped(
        "SectorNum a string",
        &|w| w["SectorNum"] = "1".into(),
        &["c1", "sectornum"],
    );
    wrapped(
        "SectorSize 8 MiB",
        &|w| w["SectorSize"] = (8u64 << 20).into(),
        &["c1", "sector size"],
    );
    add(
        "C1 bytes that are not JSON",
        b"\x00\x01{binary".to_vec(),
        C1,
    );
    let mut field = |label: &str, change: &dyn Fn(&mut pb::SubmitProofRequest), names| {
        let mut r = good.clone();
        change(&mut r);
        cases.push(Case {
            label: format!("porep: {label}"),
            kind: ProofKind::PoRep,
            submit: r,
            names,
        });
    };
    field("miner 0", &|r| r.miner_id = 0, &["miner"]);
    field("miner u64::MAX", &|r| r.miner_id = u64::MAX, &["miner"]);
    field(
        "another sector number",
        &|r| r.sector_number += 1,
        &["sector number"],
    );
    field(
        "registered proof 8 MiB",
        &|r| r.registered_proof = 6,
        &["registered_proof", "registered proof", "sector_size"],
    );
}

/// What the daemon answered: a finished job, or a gRPC error.
type Reply = Result<pb::AwaitProofResponse, tonic::Status>;

async fn send(c: &mut Client, id: String, mut submit: pb::SubmitProofRequest) -> Reply {
    submit.request_id = id;
    c.prove(pb::ProveRequest {
        submit: Some(submit),
    })
    .await
    .map(|r| {
        r.into_inner()
            .result
            .expect("a Prove reply carries a result")
    })
}

/// filecoin-proofs-api's own verifier on a proof of `submit` (as mutated).
fn verifies(
    sector: &TestSector,
    kind: ProofKind,
    submit: &pb::SubmitProofRequest,
    proof: &[u8],
) -> bool {
    match kind {
        ProofKind::WinningPoSt | ProofKind::WindowPoSt => {
            let r = PoStRequest {
                registered_proof: submit.registered_proof,
                miner_id: submit.miner_id,
                randomness: submit.randomness.clone(),
                vanilla_proofs: submit.vanilla_proofs.clone(),
                partition_index: submit.partition_index,
            };
            post_verifies(&r, proof)
        }
        ProofKind::PoRep => {
            let c1 = inputs::decode_c1(&submit.vanilla_proof).unwrap().output;
            seal::verify_seal(
                c1.registered_proof,
                c1.comm_r,
                c1.comm_d,
                inputs::prover_id(submit.miner_id),
                SectorId::from(submit.sector_number),
                c1.ticket,
                c1.seed,
                proof,
            )
            .unwrap_or(false)
        }
        ProofKind::SnapDeals => {
            let comm = |v: &[u8]| -> [u8; 32] { v.try_into().unwrap() };
            update::verify_empty_sector_update_proof(
                sector.registered.update,
                proof,
                comm(&submit.comm_r_old),
                comm(&submit.comm_r_new),
                comm(&submit.comm_d_new),
            )
            .unwrap_or(false)
        }
    }
}

/// A refusal's message: one line, no internal error, and it names the input.
fn check_refusal(message: &str, names: &[&str]) -> Result<(), String> {
    if message.contains('\n') {
        return Err("not one line".into());
    }
    let lower = message.to_lowercase();
    for bad in ["internal error", "please report", "panicked", "assertion"] {
        if lower.contains(bad) {
            return Err(format!("says {bad:?}"));
        }
    }
    if !names.iter().any(|n| lower.contains(&n.to_lowercase())) {
        return Err(format!("does not name {names:?}"));
    }
    Ok(())
}

fn valid_submits(sector: &TestSector) -> Vec<(ProofKind, pb::SubmitProofRequest)> {
    let porep = sector.porep.as_ref().unwrap();
    let snap = sector.snap.as_ref().unwrap();
    vec![
        (
            ProofKind::PoRep,
            pb::SubmitProofRequest {
                proof_kind: pb::ProofKind::PorepSealCommit as i32,
                sector_size: 2048,
                registered_proof: porep.registered_proof.unwrap_or_default(),
                vanilla_proof: porep.c1.clone(),
                sector_number: sector.sector_number,
                miner_id: porep.miner_id,
                ..Default::default()
            },
        ),
        (
            ProofKind::WinningPoSt,
            post_submit(ProofKind::WinningPoSt, sector.winning.as_ref().unwrap(), ""),
        ),
        (
            ProofKind::WindowPoSt,
            post_submit(ProofKind::WindowPoSt, sector.window.as_ref().unwrap(), ""),
        ),
        (
            ProofKind::SnapDeals,
            pb::SubmitProofRequest {
                proof_kind: pb::ProofKind::SnapDealsUpdate as i32,
                sector_size: 2048,
                registered_proof: snap.registered_proof,
                vanilla_proofs: snap.vanilla_proofs.clone(),
                comm_r_old: snap.comm_r_old.clone(),
                comm_r_new: snap.comm_r_new.clone(),
                comm_d_new: snap.comm_d_new.clone(),
                ..Default::default()
            },
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutated_requests_of_every_kind_are_refused_by_name_without_a_panic() {
    let _turn = crate::shared_turn().await;
    count_panics();
    let dir = tempfile::tempdir().unwrap();
    // filecoin-proofs' verifiers read their keys from the parameter cache of
    // the process's settings, which the binary's fixture set: the PoRep and
    // SnapDeals parameters go beside its PoSt ones.
    let params_dir = crate::common::fixture().params_dir.clone();
    let kinds = [TestKind::PoRep, TestKind::PoSt, TestKind::Snap];
    let sector = test_sector::make(2048, &kinds, &dir.path().join("sector"), 17).unwrap();
    for kind in ProofKind::ALL {
        write_insecure_params(kind, 2048, &params_dir, 11, None).unwrap();
    }
    let config = Config {
        listen: Listen::Tcp("127.0.0.1:0".into()),
        param_cache: params_dir.clone(),
        budget: Budget::Bytes(8 << 30),
        grace_period: Duration::from_secs(60),
        synthesis_threads: 2,
        ..Config::default()
    };
    let server = Server::start(config, vec![open_backend(BackendKind::Cpu).unwrap()])
        .await
        .unwrap();
    let mut c = crossgroth_daemon::client::connect(&server.bound().to_string())
        .await
        .unwrap();

    let valid = valid_submits(&sector);
    let mut rng = Rng(0x486f_7374_696c_6521);
    let mut cases = Vec::new();
    porep_cases(&valid[0].1, &mut cases);
    post_cases(
        ProofKind::WinningPoSt,
        sector.winning.as_ref().unwrap(),
        &mut rng,
        &mut cases,
    );
    post_cases(
        ProofKind::WindowPoSt,
        sector.window.as_ref().unwrap(),
        &mut rng,
        &mut cases,
    );
    snap_cases(&valid[3].1, &mut rng, &mut cases);

    let t = Instant::now();
    let (mut refused, mut proved) = (0, 0);
    let mut faults = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let started = Instant::now();
        let reply = send(&mut c, format!("hostile-{i}"), case.submit.clone()).await;
        let took = started.elapsed();
        let label = &case.label;
        let verdict = match reply {
            Err(status) => {
                eprintln!(
                    "{label} ({took:.1?}): {:?}: {}",
                    status.code(),
                    status.message()
                );
                refused += 1;
                match status.code() {
                    tonic::Code::InvalidArgument | tonic::Code::FailedPrecondition => {
                        check_refusal(status.message(), case.names)
                    }
                    code => Err(format!("gRPC status {code:?}")),
                }
            }
            Ok(r) if r.status == JobStatus::Failed as i32 => {
                eprintln!("{label} ({took:.1?}): FAILED: {}", r.error_message);
                refused += 1;
                check_refusal(&r.error_message, case.names)
            }
            Ok(r) if r.status == JobStatus::Completed as i32 => {
                eprintln!("{label} ({took:.1?}): COMPLETED");
                proved += 1;
                match verifies(&sector, case.kind, &case.submit, &r.proof) {
                    true => Ok(()),
                    false => {
                        Err("proved, and filecoin-proofs-api's verifier rejects the proof".into())
                    }
                }
            }
            Ok(r) => Err(format!("status {}: {}", r.status, r.error_message)),
        };
        if let Err(why) = verdict {
            faults.push(format!("{label}: {why}"));
        }
    }
    eprintln!(
        "{} mutated requests in {:.1?}: {refused} refused, {proved} proved and verified",
        cases.len(),
        t.elapsed()
    );
    let panics = PANICS.load(Ordering::SeqCst);
    if panics > 0 {
        faults.push(format!(
            "{panics} panics (caught or not) while answering them"
        ));
    }
    assert!(
        faults.is_empty(),
        "{} faults:\n{}",
        faults.len(),
        faults.join("\n")
    );

    for (i, (kind, submit)) in valid.iter().enumerate() {
        let r = send(&mut c, format!("valid-{i}"), submit.clone())
            .await
            .unwrap();
        assert_eq!(
            r.status,
            JobStatus::Completed as i32,
            "{kind:?}: {}",
            r.error_message
        );
        assert!(
            verifies(&sector, *kind, submit, &r.proof),
            "{kind:?}: filecoin-proofs-api's verifier rejects the proof"
        );
        assert!(
            r.total_ms >= r.synthesis_ms,
            "{kind:?}: times are filled in"
        );
        if *kind == ProofKind::PoRep {
            assert_eq!(r.proof.len(), 192, "one partition at 2 KiB");
        }
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "no panic, caught or not");
    server.shutdown().await.unwrap();
}

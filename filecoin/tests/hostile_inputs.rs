//! The vanilla-proof checks where circuits are built, without parameters or
//! proving: mutated inputs of every kind are refused with one line naming the
//! field, before any circuit exists and without a panic (a hook counts them, caught
//! or not); the unmutated inputs still build their circuits.

use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use crossgroth_filecoin::test_sector::{self, TestKind};
use crossgroth_filecoin::{porep, post, snap, FilecoinError};
use filecoin_proofs::constants::SectorShape2KiB;
use serde_json::Value;

type Tree = SectorShape2KiB;

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// The input error a mutation gets: one line, naming one of `names`.
fn refusal<T>(result: crossgroth_filecoin::Result<T>, names: &[&str]) -> String {
    let e = match result {
        Ok(_) => panic!("a mutated input built its circuits (expected one naming {names:?})"),
        Err(e) => e,
    };
    assert!(
        matches!(e, FilecoinError::Input(_)),
        "an input error: {e:?}"
    );
    let text = e.to_string();
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(
        names.iter().any(|n| text.contains(n)),
        "names {names:?}: {text}"
    );
    text
}

/// The C1 output's first challenge proof (partition 0), whatever its shape's name.
fn first_proof(c1: &mut Value) -> &mut Value {
    let shapes = c1["vanilla_proofs"].as_object_mut().unwrap();
    let proofs = shapes.values_mut().next().unwrap();
    &mut proofs[0][0]
}

fn flip(bytes: &mut [u8], byte: usize, bit: u8) {
    bytes[byte] ^= 1 << bit;
}

#[test]
fn mutated_vanilla_proofs_are_refused_before_any_circuit_is_built() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        default(info)
    }));
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", dir.path().join("params"));
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.path().join("parents"));
    let kinds = [TestKind::PoRep, TestKind::PoSt, TestKind::Snap];
    let sector = test_sector::make(2048, &kinds, &dir.path().join("sector"), 23).unwrap();
    let winning = sector.winning.clone().unwrap();
    let window = sector.window.clone().unwrap();
    let update = sector.snap.clone().unwrap();
    let seal = sector.porep.clone().unwrap();
    assert!(post::request_circuits::<Tree>(&winning).is_ok());
    assert!(post::request_circuits::<Tree>(&window).is_ok());
    assert!(snap::request_circuits::<Tree>(&update).is_ok());
    assert!(porep::request_circuits::<Tree>(&seal).is_ok());

    // A 2 KiB WinningPoSt vanilla proof: 56 bytes of header, then 66 inclusion
    // proofs of 556 bytes, the first sibling 84 bytes into each. storage-proofs'
    // vanilla verification of a WinningPoSt opens only the first of them.
    let mut r = winning.clone();
    flip(&mut r.vanilla_proofs[0], 56 + 40 * 556 + 84, 0);
    let e = refusal(post::request_circuits::<Tree>(&r), &["vanilla_proofs[0]"]);
    assert!(e.contains("inclusion proof 40"), "{e}");
    let mut r = winning.clone();
    let last = r.vanilla_proofs[0].len() - 1;
    flip(&mut r.vanilla_proofs[0], last, 7);
    refusal(
        post::request_circuits::<Tree>(&r),
        &["comm_r_last is not a field element"],
    );
    let mut r = winning.clone();
    r.randomness[0] ^= 1;
    refusal(
        post::request_circuits::<Tree>(&r),
        &["vanilla proofs failed to verify"],
    );

    let mut r = window.clone();
    r.vanilla_proofs[0][364..372].copy_from_slice(&9u64.to_le_bytes());
    refusal(
        post::request_circuits::<Tree>(&r),
        &["places the node at 9, not below arity 8"],
    );
    let mut r = window.clone();
    r.vanilla_proofs.push(r.vanilla_proofs[0].clone());
    refusal(
        post::request_circuits::<Tree>(&r),
        &["is already proved by vanilla_proofs[0]"],
    );

    let mut r = update.clone();
    r.comm_r_new = vec![0xff; 32];
    refusal(
        snap::request_circuits::<Tree>(&r),
        &["comm_r_new is not a field element"],
    );
    let mut r = update.clone();
    std::mem::swap(&mut r.comm_r_old, &mut r.comm_r_new);
    refusal(snap::request_circuits::<Tree>(&r), &["comm_r_old"]);
    let mut r = update.clone();
    // comm_c 32 | 8 apex leaves | challenge proofs: the first apex leaf's top byte.
    flip(&mut r.vanilla_proofs[0], 40 + 31, 7);
    refusal(
        snap::request_circuits::<Tree>(&r),
        &["vanilla_proofs[0] (partition 0): apex leaf 0"],
    );

    let b64 = base64::engine::general_purpose::STANDARD;
    let edit = |change: &dyn Fn(&mut Value)| {
        let mut wrapper: Value = serde_json::from_slice(&seal.c1).unwrap();
        let inner = b64.decode(wrapper["Phase1Out"].as_str().unwrap()).unwrap();
        let mut c1: Value = serde_json::from_slice(&inner).unwrap();
        change(&mut c1);
        wrapper["Phase1Out"] = b64.encode(serde_json::to_vec(&c1).unwrap()).into();
        let mut r = seal.clone();
        r.c1 = serde_json::to_vec(&wrapper).unwrap();
        porep::request_circuits::<Tree>(&r)
    };
    let pop = |field: &'static str| {
        move |c1: &mut Value| {
            let array = first_proof(c1).pointer_mut(field).unwrap();
            array.as_array_mut().unwrap().pop();
        }
    };
    refusal(
        edit(&pop("/replica_column_proofs/drg_parents")),
        &["holds 5 drg_parents columns; the graph has 6"],
    );
    refusal(
        edit(&pop("/replica_column_proofs/c_x/column/rows")),
        &["column c_x: has 1 rows"],
    );
    refusal(edit(&pop("/labeling_proofs")), &["holds 1 labeling proofs"]);
    refusal(
        edit(&|c1: &mut Value| c1["seed"][0] = 7.into()),
        &["does not verify"],
    );
    refusal(
        edit(&|c1: &mut Value| c1["comm_d"][31] = 255.into()),
        &["the C1 output's comm_d is not a field element"],
    );
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "no panic, caught or not");
}

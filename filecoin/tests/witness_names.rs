//! The rows of the real PoSt circuits keep their namespace paths through
//! FallbackPoSt's `extend`: the named synthesis (which the witness check reports
//! from) and the shape recorder (which names rows of recorded proofs) agree on
//! every row, no row is left unnamed, and a wrong value in one sector's witness is
//! reported in that sector's rows.

use crossgroth::synthesis::{check_witness, synthesize_with_names, RecordedShape};
use crossgroth::Scalar;
use crossgroth_filecoin::post;
use crossgroth_filecoin::test_sector::{self, TestKind};
use crossgroth_filecoin::PoStRequest;
use ff::Field;
use filecoin_proofs::constants::SectorShape2KiB;

const SIZE: u64 = 2048;

fn requests() -> (tempfile::TempDir, PoStRequest, PoStRequest) {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.path().join("parents"));
    let sector = test_sector::make(SIZE, &[TestKind::PoSt], &dir.path().join("s"), 11).unwrap();
    let (winning, window) = (sector.winning.unwrap(), sector.window.unwrap());
    (dir, winning, window)
}

/// Each row's sector (by order of appearance) and its path inside the sector.
/// The recorder runs FallbackPoSt's plain synthesis (`outer namespace/sector_{i}`),
/// the named synthesis its extendable one (`extend_{k}/sector_{j}`, sectors
/// numbered within their chunk): the same rows in the same order, named apart.
fn by_sector(names: &[String]) -> Vec<(Option<usize>, String)> {
    let mut sectors: Vec<String> = Vec::new();
    names
        .iter()
        .map(|name| {
            let parts: Vec<&str> = name.split('/').collect();
            match parts.iter().position(|p| p.starts_with("sector_")) {
                Some(at) => {
                    let sector = parts[..=at].join("/");
                    let ordinal = match sectors.iter().position(|s| *s == sector) {
                        Some(k) => k,
                        None => {
                            sectors.push(sector);
                            sectors.len() - 1
                        }
                    };
                    (Some(ordinal), parts[at + 1..].join("/"))
                }
                None => (None, name.clone()),
            }
        })
        .collect()
}

fn check(request: &PoStRequest, kind: &str) {
    let c = post::request_circuits::<SectorShape2KiB>(request).unwrap();
    let circuit = c.circuits.into_iter().next().unwrap();
    let circuit_sectors = circuit.sectors.len();
    let (asg, names) = synthesize_with_names(circuit.clone()).unwrap();
    let rows = asg.a.len();
    assert_eq!(names.len(), rows, "{kind}: one name a row");
    for (row, name) in names.iter().enumerate() {
        assert!(!name.is_empty(), "{kind}: row {row} of {rows} has no name");
        assert!(
            !name.contains("not tracked"),
            "{kind}: row {row} of {rows} is a placeholder: {name}"
        );
    }
    let (shape, _) = RecordedShape::record(circuit.clone()).unwrap();
    assert_eq!(shape.num_rows(), rows, "{kind}: same rows both ways");
    let recorded: Vec<String> = (0..rows)
        .map(|row| shape.row_name(row).unwrap_or_default())
        .collect();
    let (named, recorded) = (by_sector(&names), by_sector(&recorded));
    for row in 0..rows {
        assert_eq!(
            named[row],
            recorded[row],
            "{kind}: row {row} is {:?} in the named synthesis, {:?} in the recording",
            names[row],
            shape.row_name(row)
        );
    }
    let sectors = named
        .iter()
        .filter_map(|(s, _)| *s)
        .max()
        .map_or(0, |m| m + 1);
    assert_eq!(sectors, circuit_sectors, "{kind}: rows of every sector");
    // A wrong leaf in the last sector's last challenge fails a row of exactly that
    // inclusion proof.
    let mut wrong = circuit;
    let last = wrong.sectors.last_mut().unwrap();
    let challenge = last.leafs.len() - 1;
    last.leafs[challenge] = last.leafs[challenge].map(|leaf| leaf + Scalar::ONE);
    let (asg, wrong_names) = synthesize_with_names(wrong).unwrap();
    let row = check_witness(&asg).expect("a wrong leaf fails a row");
    let (sector, path) = &by_sector(&wrong_names)[row];
    assert_eq!(
        *sector,
        Some(sectors - 1),
        "{kind}: the failing row {row} ({}) is not in the last sector",
        wrong_names[row]
    );
    assert!(
        path.starts_with(&format!("challenge_inclusion_{challenge}/")),
        "{kind}: the failing row {row} is {}",
        wrong_names[row]
    );
    eprintln!(
        "{kind}: a wrong leaf fails row {row} of {rows}: {}",
        wrong_names[row]
    );
}

#[test]
fn post_rows_are_named_through_extend() {
    let (_dir, winning, window) = requests();
    check(&winning, "WinningPoSt");
    check(&window, "WindowPoSt");
}

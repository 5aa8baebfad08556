//! An unsatisfied row is named right in circuits that synthesize sub-systems with
//! `CS::new()` on rayon threads and `extend` them, as Filecoin's FallbackPoSt does.

use std::collections::HashSet;
use std::sync::Mutex;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use crossgroth::synthesis::{check_witness, synthesize, synthesize_with_names, ProvingSystem};
use crossgroth::Scalar;
use ff::Field;
use rayon::prelude::*;

/// Whether `CS::new()` tracks names depends on named syntheses running anywhere in the
/// process, so these tests run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const SECTORS: usize = 12;
const CHUNK: usize = 3;
/// Global index of the sector with a wrong witness: chunk 2 (the third), sector 1 in it.
const WRONG: usize = 7;

/// One sector: a public input p and a·b = c, c·1 = p (two rows).
#[derive(Clone)]
struct Sector {
    a: u64,
    b: u64,
    wrong: bool,
}

impl Sector {
    fn synthesize<CS: ConstraintSystem<Scalar>>(&self, cs: &mut CS) -> Result<(), SynthesisError> {
        let (a, b) = (Scalar::from(self.a), Scalar::from(self.b));
        let p = cs.alloc_input(|| "comm_r", || Ok(a * b))?;
        let va = cs.alloc(|| "a", || Ok(a))?;
        let vb = cs.alloc(|| "b", || Ok(b))?;
        let vc = cs.alloc(|| "c", || Ok(a * b + Scalar::from(u64::from(self.wrong))))?;
        cs.enforce(|| "product", |lc| lc + va, |lc| lc + vb, |lc| lc + vc);
        cs.enforce(|| "public", |lc| lc + vc, |lc| lc + CS::one(), |lc| lc + p);
        Ok(())
    }
}

fn sectors(wrong: Option<usize>) -> Vec<Sector> {
    (0..SECTORS)
        .map(|g| Sector {
            a: g as u64 + 2,
            b: 3 * g as u64 + 1,
            wrong: Some(g) == wrong,
        })
        .collect()
}

/// FallbackPoSt's `synthesize_extendable`, with one row before the extends and one after.
struct PostLike {
    sectors: Vec<Sector>,
}

impl Circuit<Scalar> for PostLike {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        assert!(CS::is_extensible());
        let x = cs.alloc(|| "prover_id", || Ok(Scalar::from(5)))?;
        let sq = cs.alloc(|| "prover_id squared", || Ok(Scalar::from(25)))?;
        cs.namespace(|| "prover")
            .enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + sq);

        let css = self
            .sectors
            .par_chunks(CHUNK)
            .map(|sector_group| {
                let mut cs = CS::new();
                cs.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
                for (i, sector) in sector_group.iter().enumerate() {
                    let mut cs = cs.namespace(|| format!("sector_{i}"));
                    sector.synthesize(&mut cs)?;
                }
                Ok(cs)
            })
            .collect::<Result<Vec<_>, SynthesisError>>()?;
        for sector_cs in css.into_iter() {
            cs.extend(&sector_cs);
        }

        cs.namespace(|| "after")
            .enforce(|| "square again", |lc| lc + x, |lc| lc + x, |lc| lc + sq);
        Ok(())
    }
}

#[test]
fn extended_rows_keep_their_names() {
    let _serial = serial();
    let (asg, names) = synthesize_with_names(PostLike {
        sectors: sectors(Some(WRONG)),
    })
    .unwrap();
    // Tracking names changes nothing in the assignment.
    let plain = synthesize(PostLike {
        sectors: sectors(Some(WRONG)),
    })
    .unwrap();
    assert_eq!(asg, plain);

    let rows = asg.num_rows();
    let inputs = asg.input.len();
    assert_eq!(inputs, 1 + SECTORS);
    assert_eq!(rows, 1 + 2 * SECTORS + 1 + inputs);
    assert_eq!(names.len(), rows);
    let distinct: HashSet<_> = names.iter().collect();
    assert_eq!(distinct.len(), rows, "names repeat: {names:?}");

    // The failing row, named as the command line names it.
    let row = check_witness(&asg).expect("the wrong witness is caught");
    assert_eq!(row, 1 + 2 * WRONG);
    assert_eq!(names[row], "extend_2/sector_1/product");

    assert_eq!(names[0], "prover/square");
    assert_eq!(names[1], "extend_0/sector_0/product");
    assert_eq!(names[2], "extend_0/sector_0/public");
    assert_eq!(names[2 * SECTORS], "extend_3/sector_2/public");
    assert_eq!(names[rows - inputs - 1], "after/square again");
    for i in 0..inputs {
        assert_eq!(names[rows - inputs + i], format!("input {i} · 0 = 0"));
    }

    // A satisfied witness of the same circuit has the same names.
    let (good, good_names) = synthesize_with_names(PostLike {
        sectors: sectors(None),
    })
    .unwrap();
    assert_eq!(check_witness(&good), None);
    assert_eq!(good_names, names);
}

#[test]
fn untracked_sub_systems_get_placeholders() {
    let _serial = serial();
    // Made outside any named synthesis: these cannot know their rows' names.
    let untracked: Vec<ProvingSystem> = (0..2)
        .into_par_iter()
        .map(|_| {
            let mut cs = ProvingSystem::new();
            cs.alloc_input(|| "temp ONE", || Ok(Scalar::ONE)).unwrap();
            Sector {
                a: 2,
                b: 3,
                wrong: false,
            }
            .synthesize(&mut cs.namespace(|| "sector_0"))
            .unwrap();
            cs
        })
        .collect();
    assert!(untracked.iter().all(|cs| cs.row_names().is_empty()));
    let mut tracked = ProvingSystem::with_names();
    tracked
        .alloc_input(|| "temp ONE", || Ok(Scalar::ONE))
        .unwrap();
    Sector {
        a: 4,
        b: 5,
        wrong: false,
    }
    .synthesize(&mut tracked.namespace(|| "sector_0"))
    .unwrap();

    let mut root = ProvingSystem::with_names();
    root.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
    root.enforce(|| "before", |lc| lc, |lc| lc, |lc| lc);
    // bellpepper's `Namespace` has no `extend`: a namespace open on the root itself.
    root.push_namespace(|| "post");
    root.extend(&untracked[0]);
    root.extend(&tracked);
    root.extend(&untracked[1]);
    root.pop_namespace();
    root.enforce(|| "after", |lc| lc, |lc| lc, |lc| lc);

    let names = root.row_names().to_vec();
    assert_eq!(
        names,
        [
            "before",
            "post/extend_0/row 0 (name not tracked)",
            "post/extend_0/row 1 (name not tracked)",
            "post/extend_1/sector_0/product",
            "post/extend_1/sector_0/public",
            "post/extend_2/row 0 (name not tracked)",
            "post/extend_2/row 1 (name not tracked)",
            "after",
        ]
    );
    assert_eq!(names.len(), root.into_assignment().num_rows());
}

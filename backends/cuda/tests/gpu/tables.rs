//! MSMs on tables of precomputed copies of the bases
//! (CudaDevice::upload_with_shape and upload) against blst.

use std::time::Instant;

use blst::*;
use crossgroth_cuda::{G1, G2};
use crossgroth_gpu_host::reference::*;

/// Tables of precomputed copies (CudaDevice::upload_with_shape and upload):
/// one bucket set for all windows, several, and plain windows
/// over copy 0 of a table whose copies do not pay, on random and edge-case
/// inputs, with and without a density.
#[test]
fn msm_g1_precomputed_tables_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_precomputed_tables_match_blst");
    let check =
        |bases: &[blst_p1_affine], scalars: &[blst_fr], density: Option<&[u64]>, what: &str| {
            let want = msm::<G1>(bases, scalars, density);
            // (copies, c): one set (8-bit windows: 32 of them), 11 sets, and a
            // table whose 16-bit copies the model declines (plain, stride 2)
            for (copies, c) in [(32u32, 8u32), (3, 8), (2, 16), (1, 8)] {
                let d = gpu
                    .upload_with_shape::<G1>(bases, copies, c)
                    .expect("upload table");
                assert_eq!(
                    d.copies(),
                    if copies > 1 && !bases.is_empty() {
                        (copies, c)
                    } else {
                        (1, 0)
                    }
                );
                let got = gpu.msm(&d, 0, scalars, density).expect("G1 MSM on a table");
                assert!(
                    point_eq::<G1>(&got, &want),
                    "G1 MSM on a table of {copies} copies for {c}-bit windows: {what} (n = {})",
                    scalars.len()
                );
            }
            eprintln!("ok G1 tables {what}: n = {}", scalars.len());
        };
    for &n in &[1usize, 2, 7, 100, 2049, 5000] {
        let bases = random_bases::<G1>(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        check(&bases, &scalars, None, "random");
    }
    let n = 600;
    let mut bases = random_bases::<G1>(&mut rng, n);
    check(&bases, &vec![fr_zero(); n], None, "all zero");
    check(&bases, &vec![fr_one(); n], None, "all one");
    check(&bases, &vec![fr_minus_one(); n], None, "all p-1");
    let mixed = mixed_scalars(&mut rng, n);
    check(&vec![bases[0]; n], &mixed, None, "repeated base");
    let pm = plus_minus::<G1>(&bases[..n / 2]);
    check(
        &pm,
        &vec![fr_from_u64(77); n],
        None,
        "P and -P, equal scalars",
    );
    identities_every(&mut bases, 3);
    check(&bases, &mixed, None, "identity bases, mixed scalars");
    // density: variables 0..nvars, the included ones use bases in order
    let nvars: usize = 1500;
    let (words, _) = random_density(&mut rng, nvars, 0.4);
    let bases = random_bases::<G1>(&mut rng, nvars);
    let scalars = random_scalars(&mut rng, nvars);
    check(&bases, &scalars, Some(&words), "density");
    // empty bases
    check(&[], &[], None, "empty");
}

#[test]
fn msm_g1_large_model_table_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_large_model_table_matches_blst");
    // The shape the cost model picks for 2^20 + 3 bases (13 copies for 20-bit
    // windows on a large device), against blst.
    let n = (1 << 20) + 3;
    let bases = random_bases::<G1>(&mut rng, n);
    let scalars = random_scalars(&mut rng, n);
    let t = Instant::now();
    let d = gpu.upload::<G1>(&bases, 64).expect("upload");
    eprintln!(
        "2^20 + 3 bases: table {:?} in {:.2?}",
        d.copies(),
        t.elapsed()
    );
    assert!(
        d.copies().0 > 1,
        "no copies made for 2^20 bases: {:?}",
        d.copies()
    );
    let t = Instant::now();
    let got = gpu.msm(&d, 0, &scalars, None).expect("msm");
    let gpu_t = t.elapsed();
    assert!(
        point_eq::<G1>(&got, &msm::<G1>(&bases, &scalars, None)),
        "2^20 + 3 on the model's table"
    );
    eprintln!("ok G1 model table: n = {n} ({gpu_t:.2?})");
}

#[test]
fn msm_g2_precomputed_tables_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g2_precomputed_tables_match_blst");
    let n = 300;
    let mut bases = random_bases::<G2>(&mut rng, n);
    identities_every(&mut bases, 4);
    let scalars = edge_scalars(&mut rng, n, 4);
    let want = msm::<G2>(&bases, &scalars, None);
    for (copies, c) in [(32u32, 8u32), (5, 8), (2, 16)] {
        let d = gpu
            .upload_with_shape::<G2>(&bases, copies, c)
            .expect("upload table");
        let got = gpu.msm(&d, 0, &scalars, None).expect("G2 MSM on a table");
        assert!(
            point_eq::<G2>(&got, &want),
            "G2 MSM on a table of {copies} copies for {c}-bit windows"
        );
    }
    // density
    let nvars = 500;
    let (words, inc) = random_density(&mut rng, nvars, 0.4);
    let bases = random_bases::<G2>(&mut rng, inc.len());
    let scalars = random_scalars(&mut rng, nvars);
    let d = gpu.upload_with_shape::<G2>(&bases, 32, 8).unwrap();
    let got = gpu.msm(&d, 0, &scalars, Some(&words)).unwrap();
    let sel: Vec<blst_fr> = inc.iter().map(|&i| scalars[i]).collect();
    assert!(
        point_eq::<G2>(&got, &msm::<G2>(&bases, &sel, None)),
        "G2 density mismatch on a table"
    );
    // a bad shape is an error, not a panic
    assert!(gpu.upload_with_shape::<G2>(&bases, 3, 30).is_err());
    assert!(gpu.upload_with_shape::<G2>(&bases, 0, 8).is_err());
    eprintln!("ok G2 tables");
}

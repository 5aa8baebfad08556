//! G1 and G2 MSMs on resident and streamed bases against blst: random sizes,
//! edge-case scalars and bases, densities, later first bases, passes.

use std::sync::Arc;

use blst::*;
use crossgroth_cuda::{G1, G2};
use crossgroth_gpu_host::reference::*;

use crate::common::{check_msm, with_msm_options};

#[test]
fn msm_g1_random_sizes_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_random_sizes_match_blst");
    for &n in &[1usize, 2, 3, 7, 64, 100, 1000, 2049, 5000, 65_536 + 123] {
        let bases = random_bases::<G1>(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        check_msm::<G1>(gpu, &bases, &scalars, "random");
    }
}

#[test]
fn msm_g1_edge_cases_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_edge_cases_match_blst");
    let n = 700;
    let bases = random_bases::<G1>(&mut rng, n);
    let m1 = fr_minus_one();
    // empty
    let d = gpu.upload::<G1>(&bases, 1).unwrap();
    let got = gpu.msm(&d, 0, &[], None).unwrap();
    assert!(is_identity::<G1>(&got), "empty MSM is not the identity");
    check_msm::<G1>(gpu, &bases, &vec![fr_zero(); n], "all zero scalars");
    check_msm::<G1>(gpu, &bases, &vec![fr_one(); n], "all one scalars");
    check_msm::<G1>(gpu, &bases, &vec![m1; n], "all p-1 scalars");
    check_msm::<G1>(
        gpu,
        &bases,
        &vec![fr_from_u64(5); n],
        "all equal scalars (one hot bucket)",
    );
    check_msm::<G1>(gpu, &bases, &[fr_from_u64(2)], "scalar 2");
    // mixture of 0, 1, p-1, small, p-1-small, random
    let mixed = mixed_scalars(&mut rng, n);
    check_msm::<G1>(gpu, &bases, &mixed, "mixed 0/1/p-1/small/random");
    // identity bases among random ones
    let mut with_inf = bases.clone();
    identities_every(&mut with_inf, 3);
    let scalars = random_scalars(&mut rng, n);
    check_msm::<G1>(gpu, &with_inf, &scalars, "identity bases");
    check_msm::<G1>(gpu, &with_inf, &mixed, "identity bases, mixed scalars");
    // repeated bases: the same point everywhere, equal scalars (doubling path)
    let same = vec![bases[0]; n];
    check_msm::<G1>(
        gpu,
        &same,
        &vec![fr_from_u64(3); n],
        "repeated base, equal scalars",
    );
    check_msm::<G1>(gpu, &same, &scalars, "repeated base, random scalars");
    // P and -P with equal scalars (cancellation to identity inside buckets)
    let pm = plus_minus::<G1>(&bases[..n / 2]);
    check_msm::<G1>(
        gpu,
        &pm,
        &vec![fr_from_u64(77); pm.len()],
        "P and -P, equal scalars",
    );
    let nine = fr_from_u64(9);
    let s2: Vec<blst_fr> = (0..pm.len())
        .map(|i| {
            if i % 2 == 0 {
                nine
            } else {
                fr_sub(&fr_zero(), &nine)
            }
        })
        .collect();
    check_msm::<G1>(gpu, &pm, &s2, "P and -P, opposite scalars");
    // fewer scalars than bases
    check_msm::<G1>(gpu, &bases, &scalars[..n / 3], "fewer scalars than bases");
}

#[test]
fn msm_g1_density_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_density_matches_blst");
    for &(nvars, p_in) in &[
        (1usize, 1.0f64),
        (63, 0.5),
        (64, 0.3),
        (65, 0.9),
        (1000, 0.5),
        (4321, 0.1),
        (20_000, 0.7),
    ] {
        let (mut words, included) = random_density(&mut rng, nvars, p_in);
        // garbage bits beyond nvars must be ignored
        words.push(0xdead_beef_0000_0000);
        let bases = random_bases::<G1>(&mut rng, included.len());
        let scalars = edge_scalars(&mut rng, nvars, 5);
        let d = gpu.upload::<G1>(&bases, 1).unwrap();
        let got = gpu
            .msm(&d, 0, &scalars, Some(&words))
            .expect("G1 MSM with density");
        let sel: Vec<blst_fr> = included.iter().map(|&i| scalars[i]).collect();
        assert!(
            point_eq::<G1>(&got, &msm::<G1>(&bases, &sel, None)),
            "density MSM mismatch: nvars = {nvars}, included = {}",
            included.len()
        );
        eprintln!("ok G1 density: {} of {nvars} variables", included.len());
    }
    // empty density: nothing included
    let bases = random_bases::<G1>(&mut rng, 4);
    let d = gpu.upload::<G1>(&bases, 1).unwrap();
    let scalars = random_scalars(&mut rng, 100);
    let got = gpu.msm(&d, 0, &scalars, Some(&[0u64, 0])).unwrap();
    assert!(is_identity::<G1>(&got), "empty density is not the identity");
    let got = gpu.msm(&d, 0, &[], Some(&[])).unwrap();
    assert!(is_identity::<G1>(&got));
}

/// MSMs in several passes over parts of the scalars (the next part uploaded
/// while the kernels work on the current one), plain and on tables, with and
/// without a density, including a last pass shorter than the others and more
/// passes than 64-scalar blocks.
#[test]
fn msm_g1_in_passes_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_in_passes_matches_blst");
    let n = 5000;
    let bases = random_bases::<G1>(&mut rng, n);
    let scalars = edge_scalars(&mut rng, n, 7);
    let want = msm::<G1>(&bases, &scalars, None);
    let (words, _) = random_density(&mut rng, n, 0.6);
    let want_dense = msm::<G1>(&bases, &scalars, Some(&words));
    let plain = gpu.upload::<G1>(&bases, 1).unwrap();
    let table = gpu.upload_with_shape::<G1>(&bases, 32, 8).unwrap();
    let mut result = Ok(());
    for passes in [2usize, 3, 7, 16] {
        with_msm_options(
            gpu,
            |o| o.passes = Some(passes),
            || {
                for (d, what) in [(&plain, "plain"), (&table, "table")] {
                    let got = gpu.msm(d, 0, &scalars, None).expect("msm");
                    let got_dense = gpu.msm(d, 0, &scalars, Some(&words)).expect("msm");
                    if !point_eq::<G1>(&got, &want) || !point_eq::<G1>(&got_dense, &want_dense) {
                        result = Err(format!("{passes} passes, {what} bases"));
                    }
                }
            },
        );
    }
    let small = with_msm_options(
        gpu,
        |o| o.passes = Some(3),
        || gpu.msm(&plain, 0, &scalars[..10], None).expect("msm"),
    );
    let want_small = msm_naive::<G1>(&bases[..10], &scalars[..10]);
    assert_eq!(result, Ok(()), "MSM in passes mismatch");
    assert!(
        point_eq::<G1>(&small, &want_small),
        "10 scalars in 3 passes"
    );
    eprintln!("ok G1 in passes");
}

/// MSMs that start at a later base (`first` > 0: the auxiliary part of A and
/// B, whose bases follow the inputs'): resident plain and table, streamed,
/// G2; starting at the end is the identity, past it an error.
#[test]
fn msm_from_a_later_base_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_from_a_later_base_matches_blst");
    for &(first, nvars, p_in) in &[(1usize, 100usize, 1.0f64), (3, 5000, 0.6), (70, 3000, 0.3)] {
        let (words, included) = random_density(&mut rng, nvars, p_in);
        let bases: Arc<Vec<blst_p1_affine>> =
            Arc::new(random_bases::<G1>(&mut rng, first + included.len()));
        let scalars = edge_scalars(&mut rng, nvars, 4);
        let sel: Vec<blst_fr> = included.iter().map(|&i| scalars[i]).collect();
        let want = msm::<G1>(&bases[first..], &sel, None);
        let plain = gpu.upload::<G1>(&bases, 1).unwrap();
        let table = gpu.upload_with_shape::<G1>(&bases, 4, 8).unwrap();
        let streamed = gpu.host_bases::<G1>(bases.clone());
        with_msm_options(
            gpu,
            |o| o.stream_chunk = Some(640),
            || {
                for (what, d) in [
                    ("plain", &plain),
                    ("table", &table),
                    ("streamed", &streamed),
                ] {
                    let got = gpu.msm(d, first, &scalars, Some(&words)).unwrap();
                    assert!(
                        point_eq::<G1>(&got, &want),
                        "{what} G1 MSM from base {first} of {} mismatch",
                        bases.len()
                    );
                }
            },
        );
        // dense, over the bases from `first` on
        let dense = &scalars[..bases.len() - first];
        let got = gpu.msm(&plain, first, dense, None).unwrap();
        assert!(point_eq::<G1>(
            &got,
            &msm::<G1>(&bases[first..], dense, None)
        ));
        // at the end: nothing left, the identity; past it: an error
        let got = gpu.msm(&plain, bases.len(), &[], None).unwrap();
        assert!(is_identity::<G1>(&got));
        assert!(gpu.msm(&plain, bases.len() + 1, &[], None).is_err());
        assert!(gpu.msm(&streamed, bases.len() + 1, &[], None).is_err());
        // too many scalars for what is left
        assert!(gpu.msm(&plain, first + 1, dense, None).is_err());
    }
    let bases2 = random_bases::<G2>(&mut rng, 700);
    let scalars2 = edge_scalars(&mut rng, 650, 4);
    let d2 = gpu.upload::<G2>(&bases2, 1).unwrap();
    let got = gpu.msm(&d2, 50, &scalars2, None).unwrap();
    assert!(
        point_eq::<G2>(&got, &msm::<G2>(&bases2[50..], &scalars2, None)),
        "G2 MSM from base 50 mismatch"
    );
    eprintln!("ok MSMs from a later base: G1 plain, table, streamed; G2");
}

/// Bases left in host memory: the MSM streams them in chunks (set small here so
/// that several chunks, and both device buffers, are used).
#[test]
fn msm_streamed_bases_match_blst_and_resident() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_streamed_bases_match_blst_and_resident");
    // 960 bases per chunk
    with_msm_options(
        gpu,
        |o| o.stream_chunk = Some(1000),
        || {
            // dense: 5000 random scalars with some 0, 1 and p - 1
            let bases: Arc<Vec<blst_p1_affine>> = Arc::new(random_bases::<G1>(&mut rng, 5000));
            let scalars = edge_scalars(&mut rng, 5000, 7);
            let streamed = gpu.host_bases::<G1>(bases.clone());
            assert!(streamed.is_streamed() && streamed.len() == 5000);
            let got = gpu
                .msm(&streamed, 0, &scalars, None)
                .expect("streamed G1 MSM");
            assert!(
                point_eq::<G1>(&got, &msm::<G1>(&bases, &scalars, None)),
                "streamed G1 MSM mismatch"
            );
            // fewer scalars than bases: the last chunk is partial
            let got = gpu.msm(&streamed, 0, &scalars[..2100], None).unwrap();
            assert!(point_eq::<G1>(
                &got,
                &msm::<G1>(&bases[..2100], &scalars[..2100], None)
            ));
            // too many scalars is an error, not a panic
            let more = vec![fr_from_u64(3); 5001];
            assert!(gpu.msm(&streamed, 0, &more, None).is_err());

            // density with long excluded runs, so some chunks skip whole words
            let nvars: usize = 9000;
            let (words, included) = random_density_by(&mut rng, nvars, |i| {
                if (2000..4000).contains(&i) {
                    0.0
                } else {
                    0.6
                }
            });
            let bases: Arc<Vec<blst_p1_affine>> =
                Arc::new(random_bases::<G1>(&mut rng, included.len()));
            let scalars = random_scalars(&mut rng, nvars);
            let streamed = gpu.host_bases::<G1>(bases.clone());
            let got = gpu.msm(&streamed, 0, &scalars, Some(&words)).unwrap();
            let sel: Vec<blst_fr> = included.iter().map(|&i| scalars[i]).collect();
            assert!(
                point_eq::<G1>(&got, &msm::<G1>(&bases, &sel, None)),
                "streamed density MSM mismatch"
            );
            let resident = gpu.upload::<G1>(&bases, 1).unwrap();
            assert!(point_eq::<G1>(
                &got,
                &gpu.msm(&resident, 0, &scalars, Some(&words)).unwrap()
            ));
            // nothing included: the identity, no chunk at all
            let none = vec![0u64; words.len()];
            let got = gpu.msm(&streamed, 0, &scalars, Some(&none)).unwrap();
            assert!(is_identity::<G1>(&got));
        },
    );

    // G2
    let bases2: Arc<Vec<blst_p2_affine>> = Arc::new(random_bases::<G2>(&mut rng, 1500));
    let scalars2 = random_scalars(&mut rng, 1500);
    let got = with_msm_options(
        gpu,
        |o| o.stream_chunk = Some(512),
        || {
            gpu.msm(&gpu.host_bases::<G2>(bases2.clone()), 0, &scalars2, None)
                .unwrap()
        },
    );
    assert!(
        point_eq::<G2>(&got, &msm::<G2>(&bases2, &scalars2, None)),
        "streamed G2 MSM mismatch"
    );
    eprintln!("ok streamed bases: G1 dense, partial, density; G2");
}

#[test]
fn msm_g1_large_and_skewed_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_large_and_skewed_match_blst");
    // 2^21 + 5: the scalar upload goes through the pinned staging pipeline
    // with a partial last chunk.
    let n = (1 << 21) + 5;
    let bases = random_bases::<G1>(&mut rng, n);
    let scalars = random_scalars(&mut rng, n);
    check_msm::<G1>(gpu, &bases, &scalars, "2^21 + 5 random");
    let n = 1 << 20;
    let bases = &bases[..n];
    // Groth16-like: 90% of scalars 0 or 1, the rest small or random
    let skewed = groth16_scalars(&mut rng, n);
    check_msm::<G1>(gpu, bases, &skewed, "2^20 skewed (90% 0/1)");
}

/// Plain windows of every size the options take up to 22 bits (the sort's
/// buckets from 2^7 to 2^21 a window), on random and Groth16-like scalars (hot
/// buckets), in one pass and in three.
#[test]
fn msm_g1_plain_windows_of_every_size_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g1_plain_windows_of_every_size_match_blst");
    let n = 70_000;
    let bases = random_bases::<G1>(&mut rng, n);
    let random = random_scalars(&mut rng, n);
    let skewed = groth16_scalars(&mut rng, n);
    let d = gpu.upload::<G1>(&bases, 1).expect("upload");
    let want_random = msm::<G1>(&bases, &random, None);
    let want_skewed = msm::<G1>(&bases, &skewed, None);
    for c in [8u32, 11, 12, 16, 21, 22] {
        for passes in [1usize, 3] {
            for (scalars, want, what) in [
                (&random, &want_random, "random"),
                (&skewed, &want_skewed, "skewed"),
            ] {
                let got = with_msm_options(
                    gpu,
                    |o| {
                        o.window_bits = Some(c);
                        o.passes = Some(passes);
                    },
                    || gpu.msm(&d, 0, scalars, None).expect("msm"),
                );
                assert!(
                    point_eq::<G1>(&got, want),
                    "c = {c}, {passes} passes, {what}: MSM mismatch"
                );
            }
        }
    }
}

#[test]
fn msm_g2_random_and_edge_cases_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g2_random_and_edge_cases_match_blst");
    for &n in &[1usize, 5, 100, 777] {
        let bases = random_bases::<G2>(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        check_msm::<G2>(gpu, &bases, &scalars, "random");
    }
    let n = 300;
    let mut bases = random_bases::<G2>(&mut rng, n);
    check_msm::<G2>(gpu, &bases, &vec![fr_zero(); n], "all zero");
    check_msm::<G2>(gpu, &bases, &vec![fr_one(); n], "all one");
    check_msm::<G2>(gpu, &bases, &vec![fr_minus_one(); n], "all p-1");
    identities_every(&mut bases, 4);
    let mixed = edge_scalars(&mut rng, n, 4);
    check_msm::<G2>(gpu, &bases, &mixed, "identity bases, mixed scalars");
    let same = vec![bases[1]; n];
    check_msm::<G2>(gpu, &same, &vec![fr_from_u64(6); n], "repeated base");
    // density
    let nvars = 500;
    let (words, inc) = random_density(&mut rng, nvars, 0.4);
    let bases = random_bases::<G2>(&mut rng, inc.len());
    let scalars = random_scalars(&mut rng, nvars);
    let d = gpu.upload::<G2>(&bases, 1).unwrap();
    let got = gpu.msm(&d, 0, &scalars, Some(&words)).unwrap();
    let sel: Vec<blst_fr> = inc.iter().map(|&i| scalars[i]).collect();
    assert!(
        point_eq::<G2>(&got, &msm::<G2>(&bases, &sel, None)),
        "G2 density mismatch"
    );
    eprintln!("ok G2 density");
}

/// Filecoin-like G2 scalars (90% 0 or 1, whose bases are summed from a list
/// apart from the buckets) through a density, in one pass and in several.
#[test]
fn msm_g2_skewed_with_density_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("msm_g2_skewed_with_density_matches_blst");
    let nvars = (1 << 16) + 77;
    let (words, inc) = random_density(&mut rng, nvars, 0.7);
    let bases = random_bases::<G2>(&mut rng, inc.len());
    let scalars = groth16_scalars(&mut rng, nvars);
    let sel: Vec<blst_fr> = inc.iter().map(|&i| scalars[i]).collect();
    let want = msm::<G2>(&bases, &sel, None);
    let d = gpu.upload::<G2>(&bases, 1).unwrap();
    for passes in [1usize, 3] {
        let got = with_msm_options(
            gpu,
            |o| o.passes = Some(passes),
            || gpu.msm(&d, 0, &scalars, Some(&words)).expect("msm"),
        );
        assert!(point_eq::<G2>(&got, &want), "G2 skewed, {passes} passes");
    }
    eprintln!("ok G2 skewed with a density");
}

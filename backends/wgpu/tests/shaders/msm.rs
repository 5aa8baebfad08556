//! G1 and G2 MSMs against blst, on every field path: random sizes, edge-case
//! scalars and bases, densities, later first bases.

use blst::blst_fr;
use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::{Bases, WgpuDevice, G1, G2};

use crate::devices::{all_backends, backends, max_log, on_each_backend, path};

/// The MSM of `s` (with the density `d`) over `dev`, uploaded from `bases`,
/// against blst's.
fn check_msm<C: RefCurve>(
    b: &WgpuDevice,
    bases: &[C::Affine],
    dev: &Bases<C>,
    s: &[blst_fr],
    d: Option<&[u64]>,
    what: &str,
) {
    let want = msm::<C>(bases, s, d);
    let (got, t) = b.time(|b| b.msm(dev, 0, s, d)).unwrap();
    assert!(
        C::eq(&got, &want),
        "{} MSM {what} differs from blst",
        C::NAME
    );
    eprintln!("{} MSM {what}: ok (gpu {t:.2?})", C::NAME);
}

#[test]
fn msm_g1_matches_blst() {
    on_each_backend("msm_g1_matches_blst", msm_g1_matches_blst_on);
}

fn msm_g1_matches_blst_on(b: &WgpuDevice) {
    let mut r = rng("msm_g1_matches_blst");
    let nmax = (1usize << max_log()).max(1024);
    let bases = random_bases::<G1>(&mut r, nmax);
    let dev = b.upload::<G1>(&bases).unwrap();
    for n in [1usize, 2, 3, 17, 100, 1000, nmax] {
        let s = random_scalars(&mut r, n);
        check_msm::<G1>(b, &bases, &dev, &s, None, &format!("random n={n}"));
    }
    // fewer scalars than bases, mixed edge scalars
    let s = edge_scalars(&mut r, 777, 7);
    check_msm::<G1>(b, &bases, &dev, &s, None, "edge scalars n=777");
}

/// MSMs that start at a later base (`msm`'s `first`: an assignment's auxiliary
/// part after its inputs' bases), with and without a density; past the end an
/// error.
#[test]
fn msm_from_a_later_base() {
    on_each_backend("msm_from_a_later_base", |b| {
        let mut r = rng("msm_from_a_later_base");
        for &(first, nvars, p) in &[(1usize, 300usize, 0.5f64), (70, 1500, 0.7)] {
            let (d, included) = random_density(&mut r, nvars, p);
            let count = included.len();
            let bases = bases_with_edges::<G1>(&mut r, first + count);
            let dev = b.upload::<G1>(&bases).unwrap();
            let s = edge_scalars(&mut r, nvars, 7);
            let got = b.msm(&dev, first, &s, Some(&d)).unwrap();
            assert!(
                point_eq::<G1>(&got, &msm::<G1>(&bases[first..], &s, Some(&d))),
                "G1 MSM from base {first}, density, differs from blst"
            );
            let dense = &s[..count];
            let got = b.msm(&dev, first, dense, None).unwrap();
            assert!(
                point_eq::<G1>(&got, &msm::<G1>(&bases[first..], dense, None)),
                "G1 MSM from base {first} differs from blst"
            );
            assert!(b.msm(&dev, first + 1, dense, None).is_err());
            assert!(b.msm(&dev, bases.len() + 1, &[], None).is_err());
        }
        let bases = bases_with_edges::<G2>(&mut r, 200);
        let dev = b.upload::<G2>(&bases).unwrap();
        let s = edge_scalars(&mut r, 150, 7);
        let got = b.msm(&dev, 50, &s, None).unwrap();
        assert!(
            point_eq::<G2>(&got, &msm::<G2>(&bases[50..], &s, None)),
            "G2 MSM from base 50 differs from blst"
        );
        eprintln!("MSMs from a later base: ok");
    });
}

/// An MSM from its scalars split ahead equals the MSM that splits them
/// itself: with a density and a later first base (the split holds a copy of
/// the scalars kept), for G2 bases from the same split (B_G1's split serves
/// B_G2), and for scalars none of which is 0 or 1 (the MSM reads the scalars
/// given). A split made for other scalars or bases is refused.
#[test]
fn msm_from_a_split_made_ahead() {
    on_each_backend("msm_from_a_split_made_ahead", |b| {
        let mut r = rng("msm_from_a_split_made_ahead");
        let (first, nvars) = (70usize, 1500usize);
        let (d, included) = random_density(&mut r, nvars, 0.7);
        let n = first + included.len();
        let s = edge_scalars(&mut r, nvars, 7);
        let split = WgpuDevice::split_ahead(&s, Some(&d), n, first).unwrap();
        let bases = bases_with_edges::<G1>(&mut r, n);
        let dev = b.upload::<G1>(&bases).unwrap();
        let got = b.msm_split(&dev, first, &s, &split).unwrap();
        assert!(
            point_eq::<G1>(&got, &msm::<G1>(&bases[first..], &s, Some(&d))),
            "G1 MSM from a split made ahead differs from blst"
        );
        let bases2 = bases_with_edges::<G2>(&mut r, n);
        let dev2 = b.upload::<G2>(&bases2).unwrap();
        let got = b.msm_split(&dev2, first, &s, &split).unwrap();
        assert!(
            point_eq::<G2>(&got, &msm::<G2>(&bases2[first..], &s, Some(&d))),
            "G2 MSM from a split made ahead differs from blst"
        );
        for (what, refused) in [
            (
                "another first base",
                b.msm_split(&dev, first + 1, &s, &split),
            ),
            ("fewer scalars", b.msm_split(&dev, first, &s[1..], &split)),
            (
                "other bases",
                b.msm_split(&b.upload::<G1>(&bases[1..]).unwrap(), first, &s, &split),
            ),
        ] {
            let e = refused.expect_err(what).to_string();
            assert!(e.contains("split ahead"), "{what}: {e}");
        }
        let dense = random_scalars(&mut r, included.len());
        let split = WgpuDevice::split_ahead(&dense, None, n, first).unwrap();
        let got = b.msm_split(&dev, first, &dense, &split).unwrap();
        assert!(
            point_eq::<G1>(&got, &msm::<G1>(&bases[first..], &dense, None)),
            "G1 MSM of dense scalars from a split made ahead differs from blst"
        );
        eprintln!("MSMs from splits made ahead: ok");
    });
}

#[test]
fn msm_g1_edge_cases() {
    on_each_backend("msm_g1_edge_cases", msm_g1_edge_cases_on);
}

fn msm_g1_edge_cases_on(b: &WgpuDevice) {
    let mut r = rng("msm_g1_edge_cases");
    let n = 600;
    let bases = bases_with_edges::<G1>(&mut r, n); // identities and repeats
    let dev = b.upload::<G1>(&bases).unwrap();
    check_msm::<G1>(b, &bases, &dev, &vec![fr_from_u64(0); n], None, "all zero");
    check_msm::<G1>(b, &bases, &dev, &vec![fr_from_u64(1); n], None, "all one");
    check_msm::<G1>(b, &bases, &dev, &vec![fr_minus_one(); n], None, "all r-1");
    check_msm::<G1>(b, &bases, &dev, &vec![fr_from_u64(2); n], None, "all two");
    let same = fr_random(&mut r);
    check_msm::<G1>(b, &bases, &dev, &vec![same; n], None, "all equal");
    // crowded and ordinary buckets side by side (the balanced accumulation:
    // buckets spanning many chunks next to buckets inside one)
    let half: Vec<blst_fr> = (0..n)
        .map(|i| if i % 2 == 0 { same } else { fr_random(&mut r) })
        .collect();
    check_msm::<G1>(b, &bases, &dev, &half, None, "half equal, half random");
    check_msm::<G1>(
        b,
        &bases,
        &dev,
        &edge_scalars(&mut r, n, 7),
        None,
        "mixed, identity and repeated bases",
    );
    // The same base many times (bucket doublings): P, P, P, ... with equal scalars.
    let rep = vec![bases[0]; 300];
    let drep = b.upload::<G1>(&rep).unwrap();
    check_msm::<G1>(
        b,
        &rep,
        &drep,
        &vec![same; 300],
        None,
        "repeated base, equal scalars",
    );
    check_msm::<G1>(
        b,
        &rep,
        &drep,
        &edge_scalars(&mut r, 300, 7),
        None,
        "repeated base",
    );
    // P and -P cancel in one bucket.
    let neg = G1::neg(&bases[0]);
    let pm = vec![bases[0], neg, bases[1]];
    let dpm = b.upload::<G1>(&pm).unwrap();
    check_msm::<G1>(b, &pm, &dpm, &[same, same, same], None, "P + (-P)");
    // Densities: empty, full, random; scalars cover more variables than bases.
    let nv = 1500;
    let s = edge_scalars(&mut r, nv, 7);
    check_msm::<G1>(
        b,
        &bases,
        &dev,
        &s,
        Some(&vec![0u64; nv.div_ceil(64)]),
        "empty density",
    );
    let (d, included) = random_density(&mut r, nv, 0.3);
    let cnt = included.len();
    assert!(cnt <= n);
    check_msm::<G1>(
        b,
        &bases,
        &dev,
        &s,
        Some(&d),
        &format!("random density ({cnt} of {nv})"),
    );
    let full = vec![u64::MAX; 600usize.div_ceil(64)];
    check_msm::<G1>(b, &bases, &dev, &s[..600], Some(&full), "full density");
    // Bits beyond scalars.len() are ignored.
    let mut dx = d.clone();
    *dx.last_mut().unwrap() |= !0u64 << (nv % 64);
    let want = msm::<G1>(&bases, &s, Some(&d));
    assert!(
        point_eq::<G1>(&b.msm(&dev, 0, &s, Some(&dx)).unwrap(), &want),
        "density bits beyond the scalars must be ignored"
    );
    let dense_s = random_scalars(&mut r, nv);
    check_msm::<G1>(
        b,
        &bases,
        &dev,
        &dense_s,
        Some(&d),
        "random density, random scalars",
    );
}

#[test]
fn msm_g2_matches_blst() {
    for b in backends().iter().chain(&all_backends().g2_int64) {
        msm_g2_matches_blst_on(b);
    }
}

fn msm_g2_matches_blst_on(b: &WgpuDevice) {
    eprintln!(
        "--- msm_g2_matches_blst on the {} path, G2 on the {} field code",
        path(b),
        if b.uses_int64_for_g2() {
            "int64"
        } else {
            "portable"
        }
    );
    let mut r = rng("msm_g2_matches_blst");
    let nmax = (1usize << max_log().saturating_sub(1)).max(512);
    let bases = bases_with_edges::<G2>(&mut r, nmax);
    let dev = b.upload::<G2>(&bases).unwrap();
    for n in [1usize, 5, 100, nmax] {
        let s = random_scalars(&mut r, n);
        check_msm::<G2>(
            b,
            &bases,
            &dev,
            &s,
            None,
            &format!("random n={n} (identity/repeated bases)"),
        );
    }
    let n = 300;
    check_msm::<G2>(b, &bases, &dev, &vec![fr_from_u64(0); n], None, "all zero");
    check_msm::<G2>(b, &bases, &dev, &vec![fr_from_u64(1); n], None, "all one");
    check_msm::<G2>(b, &bases, &dev, &vec![fr_minus_one(); n], None, "all r-1");
    let same = fr_random(&mut r);
    let half: Vec<blst_fr> = (0..n)
        .map(|i| if i % 3 == 0 { same } else { fr_random(&mut r) })
        .collect();
    check_msm::<G2>(b, &bases, &dev, &half, None, "a third equal");
    check_msm::<G2>(
        b,
        &bases,
        &dev,
        &edge_scalars(&mut r, n, 7),
        None,
        "edge scalars",
    );
    let rep = vec![bases[0]; 64];
    let drep = b.upload::<G2>(&rep).unwrap();
    let same = fr_random(&mut r);
    check_msm::<G2>(
        b,
        &rep,
        &drep,
        &vec![same; 64],
        None,
        "repeated base, equal scalars",
    );
    let nv = 700;
    let s = edge_scalars(&mut r, nv, 7);
    let (d, _) = random_density(&mut r, nv, 0.4);
    check_msm::<G2>(b, &bases, &dev, &s, Some(&d), "random density");
    check_msm::<G2>(b, &bases, &dev, &s, Some(&[0u64; 11]), "empty density");
}

/// The multi-threaded Pippenger reference used above NAIVE_MAX terms agrees with
/// the term-by-term sum, identities and repeated bases included (no GPU needed).
#[test]
fn reference_msms_agree() {
    let mut r = rng("reference_msms_agree");
    let n = NAIVE_MAX + 300;
    let s = random_scalars(&mut r, n);
    let b1 = bases_with_edges::<G1>(&mut r, n);
    assert!(point_eq::<G1>(
        &msm::<G1>(&b1, &s, None),
        &msm_naive::<G1>(&b1, &s)
    ));
    let b2 = bases_with_edges::<G2>(&mut r, n);
    assert!(point_eq::<G2>(
        &msm::<G2>(&b2, &s, None),
        &msm_naive::<G2>(&b2, &s)
    ));
}

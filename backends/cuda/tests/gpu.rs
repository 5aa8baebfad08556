//! GPU tests of crossgroth-cuda against blst on the host.
//!
//! Without a CUDA device every test prints that it was SKIPPED and passes,
//! unless CROSSGROTH_REQUIRE_CUDA=1, in which case a missing device fails.
//! Inputs are fresh random values each run; the seed is printed.

use std::sync::OnceLock;
use std::time::Instant;

use blst::*;
use crossgroth_cuda::{host, Bases, CudaDevice, CudaError, CudaOptions, MsmOptions, G1, G2};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

#[path = "common/options_from_env.rs"]
mod options_from_env;

fn backend() -> Option<&'static CudaDevice> {
    static B: OnceLock<Option<CudaDevice>> = OnceLock::new();
    B.get_or_init(|| {
        let require = std::env::var("CROSSGROTH_REQUIRE_CUDA").map(|v| v == "1").unwrap_or(false);
        let t = Instant::now();
        match CudaDevice::new(0, options_from_env::options_from_env()) {
            Ok(b) => {
                eprintln!("CUDA device: {:?}; module ({}) loaded in {:.2?}", b.info(), b.module_kind(), t.elapsed());
                Some(b)
            }
            Err(e) if e.is_unavailable() && !require => {
                // Written to the real stderr (not the test harness's capture) so
                // it shows even when the tests pass.
                use std::io::Write;
                let _ = writeln!(
                    std::io::stderr(),
                    "!!!!!!!! CUDA TESTS SKIPPED: {e} (set CROSSGROTH_REQUIRE_CUDA=1 to fail instead) !!!!!!!!"
                );
                None
            }
            Err(e) => panic!("CUDA backend required but not usable: {e}"),
        }
    })
    .as_ref()
}

macro_rules! gpu_or_skip {
    () => {
        match backend() {
            Some(b) => b,
            None => {
                eprintln!("SKIPPED (no CUDA device)");
                return;
            }
        }
    };
}

/// Runs `body` with the backend's MSM options changed by `change`, then puts
/// them back.
fn with_msm_options<R>(
    gpu: &CudaDevice,
    change: impl FnOnce(&mut MsmOptions),
    body: impl FnOnce() -> R,
) -> R {
    let before = gpu.options().msm;
    let mut changed = before.clone();
    change(&mut changed);
    gpu.set_msm_options(changed);
    let r = body();
    gpu.set_msm_options(before);
    r
}

fn rng() -> StdRng {
    let seed: u64 = rand::thread_rng().gen();
    eprintln!("seed = {seed:#x}");
    StdRng::seed_from_u64(seed)
}

// ------------------------------------------------------------------ Fr helpers

fn fr_random(rng: &mut impl RngCore) -> blst_fr {
    let mut bytes = [0u8; 64];
    rng.fill_bytes(&mut bytes);
    let mut s = blst_scalar::default();
    let mut f = blst_fr::default();
    unsafe {
        blst_scalar_from_le_bytes(&mut s, bytes.as_ptr(), 64);
        blst_fr_from_scalar(&mut f, &s);
    }
    f
}
fn fr_u64(v: u64) -> blst_fr {
    host::fr_from_u64(v)
}
fn fr_zero() -> blst_fr {
    blst_fr::default()
}
fn fr_minus_one() -> blst_fr {
    host::fr_sub(&fr_zero(), &fr_u64(1))
}
fn fr_add(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    unsafe { blst_fr_add(&mut r, a, b) };
    r
}
fn fr_scalar_bytes(f: &blst_fr) -> [u8; 32] {
    let mut s = blst_scalar::default();
    unsafe { blst_scalar_from_fr(&mut s, f) };
    s.b
}

// --------------------------------------------------------------- point helpers

fn g1_mul(p: &blst_p1, f: &blst_fr) -> blst_p1 {
    let b = fr_scalar_bytes(f);
    let mut r = blst_p1::default();
    unsafe { blst_p1_mult(&mut r, p, b.as_ptr(), 255) };
    r
}
fn g2_mul(p: &blst_p2, f: &blst_fr) -> blst_p2 {
    let b = fr_scalar_bytes(f);
    let mut r = blst_p2::default();
    unsafe { blst_p2_mult(&mut r, p, b.as_ptr(), 255) };
    r
}
fn g1_gen() -> blst_p1 {
    unsafe { *blst_p1_generator() }
}
fn g2_gen() -> blst_p2 {
    unsafe { *blst_p2_generator() }
}

/// n distinct-looking G1 points: a walk with 8 random steps.
fn g1_points(rng: &mut impl RngCore, n: usize) -> Vec<blst_p1_affine> {
    let steps: Vec<blst_p1> = (0..8).map(|_| g1_mul(&g1_gen(), &fr_random(rng))).collect();
    let mut acc = g1_mul(&g1_gen(), &fr_random(rng));
    let mut jac = Vec::with_capacity(n);
    for i in 0..n {
        unsafe { blst_p1_add_or_double(&mut acc, &acc, &steps[i % 8]) };
        jac.push(acc);
    }
    let mut out = vec![blst_p1_affine::default(); n];
    if n > 0 {
        let ptrs = [jac.as_ptr(), std::ptr::null()];
        unsafe { blst_p1s_to_affine(out.as_mut_ptr(), ptrs.as_ptr(), n) };
    }
    out
}
fn g2_points(rng: &mut impl RngCore, n: usize) -> Vec<blst_p2_affine> {
    let steps: Vec<blst_p2> = (0..8).map(|_| g2_mul(&g2_gen(), &fr_random(rng))).collect();
    let mut acc = g2_mul(&g2_gen(), &fr_random(rng));
    let mut jac = Vec::with_capacity(n);
    for i in 0..n {
        unsafe { blst_p2_add_or_double(&mut acc, &acc, &steps[i % 8]) };
        jac.push(acc);
    }
    let mut out = vec![blst_p2_affine::default(); n];
    if n > 0 {
        let ptrs = [jac.as_ptr(), std::ptr::null()];
        unsafe { blst_p2s_to_affine(out.as_mut_ptr(), ptrs.as_ptr(), n) };
    }
    out
}
fn g1_neg(p: &blst_p1_affine) -> blst_p1_affine {
    let mut j = blst_p1::default();
    unsafe {
        blst_p1_from_affine(&mut j, p);
        blst_p1_cneg(&mut j, true);
        let mut a = blst_p1_affine::default();
        blst_p1_to_affine(&mut a, &j);
        a
    }
}

/// Reference: sum of scalar multiplications (identity bases allowed).
fn g1_naive(bases: &[blst_p1_affine], scalars: &[blst_fr]) -> blst_p1 {
    let mut acc = blst_p1::default();
    for (b, s) in bases.iter().zip(scalars) {
        let mut p = blst_p1::default();
        unsafe { blst_p1_from_affine(&mut p, b) };
        let t = g1_mul(&p, s);
        unsafe { blst_p1_add_or_double(&mut acc, &acc, &t) };
    }
    acc
}
fn g2_naive(bases: &[blst_p2_affine], scalars: &[blst_fr]) -> blst_p2 {
    let mut acc = blst_p2::default();
    for (b, s) in bases.iter().zip(scalars) {
        let mut p = blst_p2::default();
        unsafe { blst_p2_from_affine(&mut p, b) };
        let t = g2_mul(&p, s);
        unsafe { blst_p2_add_or_double(&mut acc, &acc, &t) };
    }
    acc
}
/// Reference for large sizes: blst's single-threaded Pippenger.
fn g1_pippenger(bases: &[blst_p1_affine], scalars: &[blst_fr]) -> blst_p1 {
    let n = bases.len().min(scalars.len());
    let sc: Vec<[u8; 32]> = scalars[..n].iter().map(fr_scalar_bytes).collect();
    let flat: Vec<u8> = sc.concat();
    let mut ret = blst_p1::default();
    unsafe {
        let scratch_len = blst_p1s_mult_pippenger_scratch_sizeof(n) / 8 + 1;
        let mut scratch = vec![0u64; scratch_len];
        let pts = [bases.as_ptr(), std::ptr::null()];
        let scs = [flat.as_ptr(), std::ptr::null()];
        blst_p1s_mult_pippenger(
            &mut ret,
            pts.as_ptr(),
            n,
            scs.as_ptr(),
            255,
            scratch.as_mut_ptr() as *mut limb_t,
        );
    }
    ret
}

fn g1_eq(a: &blst_p1, b: &blst_p1) -> bool {
    unsafe { blst_p1_is_equal(a, b) }
}
fn g2_eq(a: &blst_p2, b: &blst_p2) -> bool {
    unsafe { blst_p2_is_equal(a, b) }
}

fn check_g1(gpu: &CudaDevice, bases: &[blst_p1_affine], scalars: &[blst_fr], what: &str) {
    let d = gpu.upload::<G1>(bases, 1).expect("upload");
    let t = Instant::now();
    let got = gpu.msm(&d, 0, scalars, None).expect("msm");
    let gpu_t = t.elapsed();
    let want = if scalars.len() > 3000 {
        g1_pippenger(bases, scalars)
    } else {
        g1_naive(bases, scalars)
    };
    assert!(
        g1_eq(&got, &want),
        "G1 MSM mismatch: {what} (n = {})",
        scalars.len()
    );
    eprintln!("ok G1 {what}: n = {} ({gpu_t:.2?})", scalars.len());
}
fn check_g2(gpu: &CudaDevice, bases: &[blst_p2_affine], scalars: &[blst_fr], what: &str) {
    let d = gpu.upload::<G2>(bases, 1).expect("upload");
    let got = gpu.msm(&d, 0, scalars, None).expect("msm");
    let want = g2_naive(bases, scalars);
    assert!(
        g2_eq(&got, &want),
        "G2 MSM mismatch: {what} (n = {})",
        scalars.len()
    );
    eprintln!("ok G2 {what}: n = {}", scalars.len());
}

/// A density over `nvars` variables, each included with probability `p`: the
/// bitmap and the included variables in order.
fn random_density(rng: &mut impl Rng, nvars: usize, p: f64) -> (Vec<u64>, Vec<usize>) {
    let mut words = vec![0u64; nvars.div_ceil(64)];
    let mut included = Vec::new();
    for i in 0..nvars {
        if rng.gen_bool(p) {
            words[i / 64] |= 1 << (i % 64);
            included.push(i);
        }
    }
    (words, included)
}

/// Every fourth base the identity.
fn with_g2_identities(bases: &mut [blst_p2_affine]) {
    for b in bases.iter_mut().step_by(4) {
        *b = blst_p2_affine::default();
    }
}

/// Scalars 1, 0, p - 1 and random in turn.
fn mixed_scalars(rng: &mut impl RngCore, n: usize) -> Vec<blst_fr> {
    (0..n)
        .map(|i| match i % 4 {
            0 => fr_u64(1),
            1 => fr_zero(),
            2 => fr_minus_one(),
            _ => fr_random(rng),
        })
        .collect()
}

// ---------------------------------------------------------------------- tests

#[test]
fn probe_reports_devices_or_reason() {
    let line = crossgroth_cuda::describe();
    eprintln!("crossgroth-cuda: {line}");
    match crossgroth_cuda::probe() {
        Ok(devs) => assert!(!devs.is_empty()),
        Err(e) => {
            assert!(e.is_unavailable(), "probe failed for another reason: {e}");
            assert!(e.to_string().starts_with("unavailable"));
        }
    }
    let _ = backend();
}

#[test]
fn backend_and_bases_are_send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CudaDevice>();
    assert_send_sync::<Bases<G1>>();
    assert_send_sync::<Bases<G2>>();
}

#[test]
fn msm_g1_random_sizes_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for &n in &[1usize, 2, 3, 7, 64, 100, 1000, 2049, 5000, 65_536 + 123] {
        let bases = g1_points(&mut rng, n);
        let scalars: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
        check_g1(gpu, &bases, &scalars, "random");
    }
}

#[test]
fn msm_g1_edge_cases_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    let n = 700;
    let bases = g1_points(&mut rng, n);
    let m1 = fr_minus_one();
    // empty
    let d = gpu.upload::<G1>(&bases, 1).unwrap();
    let got = gpu.msm(&d, 0, &[], None).unwrap();
    assert!(
        unsafe { blst_p1_is_inf(&got) },
        "empty MSM is not the identity"
    );
    check_g1(gpu, &bases, &vec![fr_zero(); n], "all zero scalars");
    check_g1(gpu, &bases, &vec![fr_u64(1); n], "all one scalars");
    check_g1(gpu, &bases, &vec![m1; n], "all p-1 scalars");
    check_g1(
        gpu,
        &bases,
        &vec![fr_u64(5); n],
        "all equal scalars (one hot bucket)",
    );
    check_g1(gpu, &bases, &[fr_u64(2)], "scalar 2");
    // mixture of 0, 1, p-1, small, random
    let mixed: Vec<blst_fr> = (0..n)
        .map(|i| match i % 6 {
            0 => fr_zero(),
            1 => fr_u64(1),
            2 => m1,
            3 => fr_u64(rng.gen_range(2..1000)),
            4 => host::fr_sub(&m1, &fr_u64(rng.gen_range(1..1000))),
            _ => fr_random(&mut rng),
        })
        .collect();
    check_g1(gpu, &bases, &mixed, "mixed 0/1/p-1/small/random");
    // identity bases among random ones
    let mut with_inf = bases.clone();
    for i in (0..n).step_by(3) {
        with_inf[i] = blst_p1_affine::default();
    }
    let scalars: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
    check_g1(gpu, &with_inf, &scalars, "identity bases");
    check_g1(gpu, &with_inf, &mixed, "identity bases, mixed scalars");
    // repeated bases: the same point everywhere, equal scalars (doubling path)
    let same = vec![bases[0]; n];
    check_g1(
        gpu,
        &same,
        &vec![fr_u64(3); n],
        "repeated base, equal scalars",
    );
    check_g1(gpu, &same, &scalars, "repeated base, random scalars");
    // P and -P with equal scalars (cancellation to identity inside buckets)
    let mut pm = Vec::new();
    for b in &bases[..n / 2] {
        pm.push(*b);
        pm.push(g1_neg(b));
    }
    check_g1(
        gpu,
        &pm,
        &vec![fr_u64(77); pm.len()],
        "P and -P, equal scalars",
    );
    let s2: Vec<blst_fr> = (0..pm.len())
        .map(|i| {
            if i % 2 == 0 {
                fr_u64(9)
            } else {
                host::fr_sub(&fr_zero(), &fr_u64(9))
            }
        })
        .collect();
    check_g1(gpu, &pm, &s2, "P and -P, opposite scalars");
    // fewer scalars than bases
    check_g1(gpu, &bases, &scalars[..n / 3], "fewer scalars than bases");
}

#[test]
fn msm_g1_density_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for &(nvars, p_in) in &[
        (1usize, 1.0f64),
        (63, 0.5),
        (64, 0.3),
        (65, 0.9),
        (1000, 0.5),
        (4321, 0.1),
        (20_000, 0.7),
    ] {
        let mut words = vec![0u64; nvars.div_ceil(64) + 1];
        let mut included = Vec::new();
        for i in 0..nvars {
            if rng.gen_bool(p_in) {
                words[i / 64] |= 1 << (i % 64);
                included.push(i);
            }
        }
        // garbage bits beyond nvars must be ignored
        *words.last_mut().unwrap() |= 0xdead_beef_0000_0000;
        let bases = g1_points(&mut rng, included.len());
        let scalars: Vec<blst_fr> = (0..nvars)
            .map(|i| match i % 5 {
                0 => fr_zero(),
                1 => fr_u64(1),
                _ => fr_random(&mut rng),
            })
            .collect();
        let d = gpu.upload::<G1>(&bases, 1).unwrap();
        let got = gpu
            .msm(&d, 0, &scalars, Some(&words))
            .expect("G1 MSM with density");
        let sel: Vec<blst_fr> = included.iter().map(|&i| scalars[i]).collect();
        let want = if sel.len() > 3000 {
            g1_pippenger(&bases, &sel)
        } else {
            g1_naive(&bases, &sel)
        };
        assert!(
            g1_eq(&got, &want),
            "density MSM mismatch: nvars = {nvars}, included = {}",
            included.len()
        );
        eprintln!("ok G1 density: {} of {nvars} variables", included.len());
    }
    // empty density: nothing included
    let bases = g1_points(&mut rng, 4);
    let d = gpu.upload::<G1>(&bases, 1).unwrap();
    let scalars: Vec<blst_fr> = (0..100).map(|_| fr_random(&mut rng)).collect();
    let got = gpu.msm(&d, 0, &scalars, Some(&[0u64, 0])).unwrap();
    assert!(
        unsafe { blst_p1_is_inf(&got) },
        "empty density is not the identity"
    );
    let got = gpu.msm(&d, 0, &[], Some(&[])).unwrap();
    assert!(unsafe { blst_p1_is_inf(&got) });
}

/// Tables of precomputed copies (CudaDevice::upload_with_shape and upload):
/// one bucket set for all windows, several, and plain windows
/// over copy 0 of a table whose copies do not pay, on random and edge-case
/// inputs, with and without a density.
#[test]
fn msm_g1_precomputed_tables_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    let check =
        |bases: &[blst_p1_affine], scalars: &[blst_fr], density: Option<&[u64]>, what: &str| {
            let sel: Vec<blst_fr> = match density {
                None => scalars.to_vec(),
                Some(d) => (0..scalars.len())
                    .filter(|&i| (d[i / 64] >> (i % 64)) & 1 == 1)
                    .map(|i| scalars[i])
                    .collect(),
            };
            let want = if sel.len() > 3000 {
                g1_pippenger(&bases[..sel.len()], &sel)
            } else {
                g1_naive(&bases[..sel.len()], &sel)
            };
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
                    g1_eq(&got, &want),
                    "G1 MSM on a table of {copies} copies for {c}-bit windows: {what} (n = {})",
                    scalars.len()
                );
            }
            eprintln!("ok G1 tables {what}: n = {}", scalars.len());
        };
    for &n in &[1usize, 2, 7, 100, 2049, 5000] {
        let bases = g1_points(&mut rng, n);
        let scalars: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
        check(&bases, &scalars, None, "random");
    }
    let n = 600;
    let mut bases = g1_points(&mut rng, n);
    let m1 = fr_minus_one();
    check(&bases, &vec![fr_zero(); n], None, "all zero");
    check(&bases, &vec![fr_u64(1); n], None, "all one");
    check(&bases, &vec![m1; n], None, "all p-1");
    let mixed: Vec<blst_fr> = (0..n)
        .map(|i| match i % 5 {
            0 => fr_zero(),
            1 => fr_u64(1),
            2 => m1,
            3 => fr_u64(rng.gen_range(2..1000)),
            _ => fr_random(&mut rng),
        })
        .collect();
    check(&vec![bases[0]; n], &mixed, None, "repeated base");
    let mut pm = Vec::new();
    for b in &bases[..n / 2] {
        pm.push(*b);
        pm.push(g1_neg(b));
    }
    check(&pm, &vec![fr_u64(77); n], None, "P and -P, equal scalars");
    for i in (0..n).step_by(3) {
        bases[i] = blst_p1_affine::default();
    }
    check(&bases, &mixed, None, "identity bases, mixed scalars");
    // density: variables 0..nvars, the included ones use bases in order
    let nvars: usize = 1500;
    let (words, _) = random_density(&mut rng, nvars, 0.4);
    let bases = g1_points(&mut rng, nvars);
    let scalars: Vec<blst_fr> = (0..nvars).map(|_| fr_random(&mut rng)).collect();
    check(&bases, &scalars, Some(&words), "density");
    // empty bases
    check(&[], &[], None, "empty");
}

#[test]
fn msm_g1_large_model_table_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    // The shape the cost model picks for 2^20 + 3 bases (13 copies for 20-bit
    // windows on a large device), against blst.
    let n = (1 << 20) + 3;
    let bases = g1_points(&mut rng, n);
    let scalars: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
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
        g1_eq(&got, &g1_pippenger(&bases, &scalars)),
        "2^20 + 3 on the model's table"
    );
    eprintln!("ok G1 model table: n = {n} ({gpu_t:.2?})");
}

/// MSMs in several passes over parts of the scalars (the next part uploaded
/// while the kernels work on the current one), plain and on tables, with and
/// without a density, including a last pass shorter than the others and more
/// passes than 64-scalar blocks.
#[test]
fn msm_g1_in_passes_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    let n = 5000;
    let bases = g1_points(&mut rng, n);
    let scalars: Vec<blst_fr> = (0..n)
        .map(|i| match i % 7 {
            0 => fr_zero(),
            1 => fr_u64(1),
            2 => fr_minus_one(),
            _ => fr_random(&mut rng),
        })
        .collect();
    let want = g1_pippenger(&bases, &scalars);
    let mut words = vec![0u64; n.div_ceil(64)];
    let mut sel = Vec::new();
    for i in 0..n {
        if rng.gen_bool(0.6) {
            words[i / 64] |= 1 << (i % 64);
            sel.push(scalars[i]);
        }
    }
    let want_dense = g1_naive(&bases[..sel.len()], &sel);
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
                    if !g1_eq(&got, &want) || !g1_eq(&got_dense, &want_dense) {
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
    let want_small = g1_naive(&bases[..10], &scalars[..10]);
    assert_eq!(result, Ok(()), "MSM in passes mismatch");
    assert!(g1_eq(&small, &want_small), "10 scalars in 3 passes");
    eprintln!("ok G1 in passes");
}

#[test]
fn msm_g2_precomputed_tables_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    let n = 300;
    let mut bases = g2_points(&mut rng, n);
    with_g2_identities(&mut bases);
    let scalars = mixed_scalars(&mut rng, n);
    let want = g2_naive(&bases, &scalars);
    for (copies, c) in [(32u32, 8u32), (5, 8), (2, 16)] {
        let d = gpu
            .upload_with_shape::<G2>(&bases, copies, c)
            .expect("upload table");
        let got = gpu.msm(&d, 0, &scalars, None).expect("G2 MSM on a table");
        assert!(
            g2_eq(&got, &want),
            "G2 MSM on a table of {copies} copies for {c}-bit windows"
        );
    }
    // density
    let nvars = 500;
    let (words, inc) = random_density(&mut rng, nvars, 0.4);
    let bases = g2_points(&mut rng, inc.len());
    let scalars: Vec<blst_fr> = (0..nvars).map(|_| fr_random(&mut rng)).collect();
    let d = gpu.upload_with_shape::<G2>(&bases, 32, 8).unwrap();
    let got = gpu.msm(&d, 0, &scalars, Some(&words)).unwrap();
    let sel: Vec<blst_fr> = inc.iter().map(|&i| scalars[i]).collect();
    assert!(
        g2_eq(&got, &g2_naive(&bases, &sel)),
        "G2 density mismatch on a table"
    );
    // a bad shape is an error, not a panic
    assert!(gpu.upload_with_shape::<G2>(&bases, 3, 30).is_err());
    assert!(gpu.upload_with_shape::<G2>(&bases, 0, 8).is_err());
    eprintln!("ok G2 tables");
}

/// MSMs that start at a later base (`first` > 0: the auxiliary part of A and
/// B, whose bases follow the inputs'): resident plain and table, streamed,
/// G2; starting at the end is the identity, past it an error.
#[test]
fn msm_from_a_later_base_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for &(first, nvars, p_in) in &[(1usize, 100usize, 1.0f64), (3, 5000, 0.6), (70, 3000, 0.3)] {
        let (words, included) = random_density(&mut rng, nvars, p_in);
        let bases: std::sync::Arc<Vec<blst_p1_affine>> =
            std::sync::Arc::new(g1_points(&mut rng, first + included.len()));
        let scalars = mixed_scalars(&mut rng, nvars);
        let sel: Vec<blst_fr> = included.iter().map(|&i| scalars[i]).collect();
        let want = g1_pippenger(&bases[first..], &sel);
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
                        g1_eq(&got, &want),
                        "{what} G1 MSM from base {first} of {} mismatch",
                        bases.len()
                    );
                }
            },
        );
        // dense, over the bases from `first` on
        let dense = &scalars[..bases.len() - first];
        let got = gpu.msm(&plain, first, dense, None).unwrap();
        assert!(g1_eq(&got, &g1_pippenger(&bases[first..], dense)));
        // at the end: nothing left, the identity; past it: an error
        let got = gpu.msm(&plain, bases.len(), &[], None).unwrap();
        assert!(unsafe { blst_p1_is_inf(&got) });
        assert!(gpu.msm(&plain, bases.len() + 1, &[], None).is_err());
        assert!(gpu.msm(&streamed, bases.len() + 1, &[], None).is_err());
        // too many scalars for what is left
        assert!(gpu.msm(&plain, first + 1, dense, None).is_err());
    }
    let bases2 = g2_points(&mut rng, 700);
    let scalars2 = mixed_scalars(&mut rng, 650);
    let d2 = gpu.upload::<G2>(&bases2, 1).unwrap();
    let got = gpu.msm(&d2, 50, &scalars2, None).unwrap();
    assert!(
        g2_eq(&got, &g2_naive(&bases2[50..], &scalars2)),
        "G2 MSM from base 50 mismatch"
    );
    eprintln!("ok MSMs from a later base: G1 plain, table, streamed; G2");
}

/// Bases left in host memory: the MSM streams them in chunks (set small here so
/// that several chunks, and both device buffers, are used).
#[test]
fn msm_streamed_bases_match_blst_and_resident() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    // 960 bases per chunk
    with_msm_options(
        gpu,
        |o| o.stream_chunk = Some(1000),
        || {
            // dense: 5000 random scalars with some 0 and 1
            let bases: std::sync::Arc<Vec<blst_p1_affine>> =
                std::sync::Arc::new(g1_points(&mut rng, 5000));
            let scalars: Vec<blst_fr> = (0..5000)
                .map(|i| match i % 7 {
                    0 => fr_zero(),
                    1 => fr_u64(1),
                    _ => fr_random(&mut rng),
                })
                .collect();
            let streamed = gpu.host_bases::<G1>(bases.clone());
            assert!(streamed.is_streamed() && streamed.len() == 5000);
            let got = gpu
                .msm(&streamed, 0, &scalars, None)
                .expect("streamed G1 MSM");
            assert!(
                g1_eq(&got, &g1_pippenger(&bases, &scalars)),
                "streamed G1 MSM mismatch"
            );
            // fewer scalars than bases: the last chunk is partial
            let got = gpu.msm(&streamed, 0, &scalars[..2100], None).unwrap();
            assert!(g1_eq(&got, &g1_naive(&bases[..2100], &scalars[..2100])));
            // too many scalars is an error, not a panic
            let more: Vec<blst_fr> = (0..5001).map(|_| fr_u64(3)).collect();
            assert!(gpu.msm(&streamed, 0, &more, None).is_err());

            // density with long excluded runs, so some chunks skip whole words
            let nvars: usize = 9000;
            let mut words = vec![0u64; nvars.div_ceil(64)];
            let mut included = Vec::new();
            for i in 0..nvars {
                let p = if (2000..4000).contains(&i) { 0.0 } else { 0.6 };
                if rng.gen_bool(p) {
                    words[i / 64] |= 1 << (i % 64);
                    included.push(i);
                }
            }
            let bases: std::sync::Arc<Vec<blst_p1_affine>> =
                std::sync::Arc::new(g1_points(&mut rng, included.len()));
            let scalars: Vec<blst_fr> = (0..nvars).map(|_| fr_random(&mut rng)).collect();
            let streamed = gpu.host_bases::<G1>(bases.clone());
            let got = gpu.msm(&streamed, 0, &scalars, Some(&words)).unwrap();
            let sel: Vec<blst_fr> = included.iter().map(|&i| scalars[i]).collect();
            assert!(
                g1_eq(&got, &g1_pippenger(&bases, &sel)),
                "streamed density MSM mismatch"
            );
            let resident = gpu.upload::<G1>(&bases, 1).unwrap();
            assert!(g1_eq(
                &got,
                &gpu.msm(&resident, 0, &scalars, Some(&words)).unwrap()
            ));
            // nothing included: the identity, no chunk at all
            let none = vec![0u64; words.len()];
            let got = gpu.msm(&streamed, 0, &scalars, Some(&none)).unwrap();
            assert!(unsafe { blst_p1_is_inf(&got) });
        },
    );

    // G2
    let bases2: std::sync::Arc<Vec<blst_p2_affine>> =
        std::sync::Arc::new(g2_points(&mut rng, 1500));
    let scalars2: Vec<blst_fr> = (0..1500).map(|_| fr_random(&mut rng)).collect();
    let got = with_msm_options(
        gpu,
        |o| o.stream_chunk = Some(512),
        || {
            gpu.msm(&gpu.host_bases::<G2>(bases2.clone()), 0, &scalars2, None)
                .unwrap()
        },
    );
    assert!(
        g2_eq(&got, &g2_naive(&bases2, &scalars2)),
        "streamed G2 MSM mismatch"
    );
    eprintln!("ok streamed bases: G1 dense, partial, density; G2");
}

#[test]
fn msm_g1_large_and_skewed_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    // 2^21 + 5: the scalar upload goes through the pinned staging pipeline
    // with a partial last chunk.
    let n = (1 << 21) + 5;
    let bases = g1_points(&mut rng, n);
    let scalars: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
    check_g1(gpu, &bases, &scalars, "2^21 + 5 random");
    let n = 1 << 20;
    let bases = &bases[..n];
    // Groth16-like: 90% of scalars 0 or 1, the rest small or random
    let skewed: Vec<blst_fr> = (0..n)
        .map(|_| match rng.gen_range(0..20) {
            0..=8 => fr_zero(),
            9..=17 => fr_u64(1),
            18 => fr_u64(rng.gen_range(2..16)),
            _ => fr_random(&mut rng),
        })
        .collect();
    check_g1(gpu, bases, &skewed, "2^20 skewed (90% 0/1)");
}

#[test]
fn msm_g2_random_and_edge_cases_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for &n in &[1usize, 5, 100, 777] {
        let bases = g2_points(&mut rng, n);
        let scalars: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
        check_g2(gpu, &bases, &scalars, "random");
    }
    let n = 300;
    let mut bases = g2_points(&mut rng, n);
    check_g2(gpu, &bases, &vec![fr_zero(); n], "all zero");
    check_g2(gpu, &bases, &vec![fr_u64(1); n], "all one");
    check_g2(gpu, &bases, &vec![fr_minus_one(); n], "all p-1");
    with_g2_identities(&mut bases);
    let mixed = mixed_scalars(&mut rng, n);
    check_g2(gpu, &bases, &mixed, "identity bases, mixed scalars");
    let same = vec![bases[1]; n];
    check_g2(gpu, &same, &vec![fr_u64(6); n], "repeated base");
    // density
    let nvars = 500;
    let (words, inc) = random_density(&mut rng, nvars, 0.4);
    let bases = g2_points(&mut rng, inc.len());
    let scalars: Vec<blst_fr> = (0..nvars).map(|_| fr_random(&mut rng)).collect();
    let d = gpu.upload::<G2>(&bases, 1).unwrap();
    let got = gpu.msm(&d, 0, &scalars, Some(&words)).unwrap();
    let sel: Vec<blst_fr> = inc.iter().map(|&i| scalars[i]).collect();
    assert!(g2_eq(&got, &g2_naive(&bases, &sel)), "G2 density mismatch");
    eprintln!("ok G2 density");
}

// ------------------------------------------------------------------------ NTT

fn host_fft(a: &mut [blst_fr], w: &blst_fr) {
    let n = a.len();
    let log_n = n.trailing_zeros();
    for i in 0..n {
        let j = if log_n == 0 {
            0
        } else {
            (i as u32).reverse_bits() >> (32 - log_n)
        } as usize;
        if i < j {
            a.swap(i, j);
        }
    }
    let mut m = 1;
    while m < n {
        let wm = host::fr_pow(w, (n / (2 * m)) as u64);
        for k in (0..n).step_by(2 * m) {
            let mut wj = fr_u64(1);
            for j in 0..m {
                let t = host::fr_mul(&a[k + j + m], &wj);
                let u = a[k + j];
                a[k + j] = fr_add(&u, &t);
                a[k + j + m] = host::fr_sub(&u, &t);
                wj = host::fr_mul(&wj, &wm);
            }
        }
        m *= 2;
    }
}
fn host_ifft(a: &mut [blst_fr], w: &blst_fr) {
    host_fft(a, &host::fr_inv(w));
    let ninv = host::fr_inv(&fr_u64(a.len() as u64));
    for x in a.iter_mut() {
        *x = host::fr_mul(x, &ninv);
    }
}

fn fr_eq_slices(a: &[blst_fr], b: &[blst_fr]) -> bool {
    if a.len() != b.len() {
        eprintln!("length mismatch: {} vs {}", a.len(), b.len());
        return false;
    }
    let bad: Vec<usize> = (0..a.len()).filter(|&i| a[i].l != b[i].l).collect();
    if !bad.is_empty() {
        eprintln!(
            "{} of {} elements differ; first at {:?}",
            bad.len(),
            a.len(),
            &bad[..bad.len().min(8)]
        );
    }
    bad.is_empty()
}

// ------------------------------------------------------------------ Fq inversion

/// BLS12-381's p, little-endian u64 limbs (blst_fp's layout).
const FQ_P: [u64; 6] = [
    0xb9feffffffffaaab,
    0x1eabfffeb153ffff,
    0x6730d2a0f6b0f624,
    0x64774b84f38512bf,
    0x4b1ba7b6434bacd7,
    0x1a0111ea397fe69a,
];

fn fq_below_p(l: &[u64; 6]) -> bool {
    for i in (0..6).rev() {
        if l[i] != FQ_P[i] {
            return l[i] < FQ_P[i];
        }
    }
    false
}

/// A uniform element of Fq: any value below p is the Montgomery form of one.
fn fq_random(rng: &mut impl RngCore) -> blst_fp {
    loop {
        let mut l = [0u64; 6];
        for w in l.iter_mut() {
            *w = rng.next_u64();
        }
        l[5] &= (1u64 << 61) - 1;
        if fq_below_p(&l) {
            return blst_fp { l };
        }
    }
}

/// Edge cases: 0, 1 (Montgomery form R mod p), -1, the stored values 1, 2 and
/// p - 1, p - 2, powers of two, and values with long runs of equal bits.
fn fq_edge_cases() -> Vec<blst_fp> {
    let mut v = Vec::new();
    let one = unsafe {
        let mut o = blst_fp::default();
        let u: [u64; 6] = [1, 0, 0, 0, 0, 0];
        blst_fp_from_uint64(&mut o, u.as_ptr());
        o
    };
    let mut minus_one = blst_fp::default();
    unsafe { blst_fp_cneg(&mut minus_one, &one, true) };
    v.extend([blst_fp::default(), one, minus_one]);
    let raw = |l: [u64; 6]| blst_fp { l };
    v.extend([raw([1, 0, 0, 0, 0, 0]), raw([2, 0, 0, 0, 0, 0])]);
    let mut p1 = FQ_P;
    p1[0] -= 1;
    let mut p2 = FQ_P;
    p2[0] -= 2;
    v.extend([raw(p1), raw(p2)]);
    for k in (0..380).step_by(7) {
        let mut l = [0u64; 6];
        l[k / 64] = 1 << (k % 64);
        v.push(raw(l));
        // 2^k - 1
        let mut m = [0u64; 6];
        for (i, w) in m.iter_mut().enumerate() {
            let lo = 64 * i;
            *w = if k >= lo + 64 {
                u64::MAX
            } else if k > lo {
                (1u64 << (k - lo)) - 1
            } else {
                0
            };
        }
        v.push(raw(m));
    }
    v
}

#[test]
fn fq_inverse_matches_blst() {
    use crossgroth_cuda::InverseMethod;
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for &n in &[1usize, 127, 128, 129, (1 << 16) + 3] {
        let mut input = fq_edge_cases();
        input.extend((0..n).map(|_| fq_random(&mut rng)));
        let want: Vec<blst_fp> = input
            .iter()
            .map(|x| {
                // zero stays zero (the kernels' convention; not asked of blst)
                let mut r = blst_fp::default();
                if x.l != [0; 6] {
                    unsafe { blst_fp_inverse(&mut r, x) };
                }
                r
            })
            .collect();
        for method in [InverseMethod::Divsteps, InverseMethod::Fermat] {
            let mut got = input.clone();
            gpu.fq_inverse(&mut got, method).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g.l,
                    w.l,
                    "{method:?}: 1 / {:x?} (element {i} of {})",
                    input[i].l,
                    input.len()
                );
            }
            eprintln!("ok Fq inverse {method:?}, {} elements", input.len());
        }
    }
    // resident: upload, invert twice (back to the input), download
    let input: Vec<blst_fp> = (0..(1usize << 18) + 1)
        .map(|_| fq_random(&mut rng))
        .collect();
    let mut buf = gpu.upload_fq(&input).unwrap();
    gpu.fq_inverse_resident(&mut buf, InverseMethod::Divsteps)
        .unwrap();
    gpu.fq_inverse_resident(&mut buf, InverseMethod::Divsteps)
        .unwrap();
    let mut back = vec![blst_fp::default(); input.len()];
    gpu.download_fq(&buf, &mut back).unwrap();
    assert!(
        back.iter().zip(&input).all(|(a, b)| a.l == b.l),
        "1 / (1 / x) != x on the device"
    );
    eprintln!("ok Fq inverse resident, {} elements twice", input.len());
}

#[test]
fn fr_transfers_round_trip() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    // sizes around the staging threshold (2^17 elements) and chunk size (2^18),
    // with partial chunks
    for &n in &[
        (1usize << 17) - 1,
        1 << 17,
        (1 << 18) + 3,
        (1 << 21) + 5,
        3 << 20,
    ] {
        let v: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
        let b = gpu.upload_fr(&v).unwrap();
        let back = gpu.download_fr(&b).unwrap();
        assert!(
            fr_eq_slices(&v, &back),
            "upload/download round trip failed at n = {n}"
        );
        eprintln!("ok Fr round trip n = {n}");
    }
    // ntt() (transfers) against ntt_resident (explicit upload/download) at 2^21
    let v: Vec<blst_fr> = (0..1usize << 21).map(|_| fr_random(&mut rng)).collect();
    let mut a = v.clone();
    gpu.ntt(&mut a, 21, false).unwrap();
    let mut b = gpu.upload_fr(&v).unwrap();
    gpu.ntt_resident(&mut b, 21, false).unwrap();
    assert!(
        fr_eq_slices(&a, &gpu.download_fr(&b).unwrap()),
        "ntt() and ntt_resident differ at 2^21"
    );
    eprintln!("ok ntt vs ntt_resident 2^21");
}

/// The forward NTT against the host's, and the inverse back to the input.
fn check_ntt_round_trip(gpu: &CudaDevice, input: &[blst_fr], log_n: u32) {
    let mut want = input.to_vec();
    host_fft(&mut want, &host::omega(log_n));
    let mut got = input.to_vec();
    gpu.ntt(&mut got, log_n, false).unwrap();
    assert!(
        fr_eq_slices(&got, &want),
        "forward NTT mismatch at 2^{log_n}"
    );
    gpu.ntt(&mut got, log_n, true).unwrap();
    assert!(
        fr_eq_slices(&got, input),
        "inverse NTT does not round-trip at 2^{log_n}"
    );
}

#[test]
fn ntt_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for &log_n in &[0u32, 1, 2, 3, 8, 9, 10, 11, 12, 13] {
        let n = 1usize << log_n;
        let w = host::omega(log_n);
        assert_eq!(host::fr_pow(&w, n as u64).l, fr_u64(1).l);
        if log_n > 0 {
            assert_ne!(host::fr_pow(&w, (n / 2) as u64).l, fr_u64(1).l);
        }
        let input: Vec<blst_fr> = (0..n).map(|_| fr_random(&mut rng)).collect();
        check_ntt_round_trip(gpu, &input, log_n);
        let mut want_i = input.clone();
        host_ifft(&mut want_i, &w);
        let mut got_i = input.clone();
        gpu.ntt(&mut got_i, log_n, true).unwrap();
        assert!(
            fr_eq_slices(&got_i, &want_i),
            "inverse NTT mismatch at 2^{log_n}"
        );
        eprintln!("ok NTT 2^{log_n}");
    }
    // resident buffers
    let input: Vec<blst_fr> = (0..1 << 12).map(|_| fr_random(&mut rng)).collect();
    let mut want = input.clone();
    host_fft(&mut want, &host::omega(12));
    let mut buf = gpu.upload_fr(&input).unwrap();
    gpu.ntt_resident(&mut buf, 12, false).unwrap();
    assert!(
        fr_eq_slices(&gpu.download_fr(&buf).unwrap(), &want),
        "resident NTT mismatch"
    );
    gpu.ntt_resident(&mut buf, 12, true).unwrap();
    assert!(
        fr_eq_slices(&gpu.download_fr(&buf).unwrap(), &input),
        "resident iNTT mismatch"
    );
    // edge values
    let mut v = vec![fr_minus_one(); 1024];
    let mut want = v.clone();
    host_fft(&mut want, &host::omega(10));
    gpu.ntt(&mut v, 10, false).unwrap();
    assert!(fr_eq_slices(&v, &want));
    let mut z = vec![fr_zero(); 512];
    gpu.ntt(&mut z, 9, false).unwrap();
    assert!(z.iter().all(|x| x.l == [0; 4]));
}

/// Sizes of two and three passes (2^11 .. 2^18 take two, 2^19 and up three).
#[test]
fn ntt_large_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for log_n in [16u32, 18, 19, 20, 21] {
        let input: Vec<blst_fr> = (0..1usize << log_n).map(|_| fr_random(&mut rng)).collect();
        check_ntt_round_trip(gpu, &input, log_n);
        eprintln!("ok NTT 2^{log_n}");
    }
}

/// bellperson's H computation, step by step, on the host.
fn host_h(a: &[blst_fr], b: &[blst_fr], c: &[blst_fr], log_m: u32) -> Vec<blst_fr> {
    let m = 1usize << log_m;
    let w = host::omega(log_m);
    let g = fr_u64(7);
    let ginv = host::fr_inv(&g);
    let pad = |v: &[blst_fr]| {
        let mut x = v.to_vec();
        x.resize(m, fr_zero());
        x
    };
    let (mut a, mut b, mut c) = (pad(a), pad(b), pad(c));
    for v in [&mut a, &mut b, &mut c] {
        host_ifft(v, &w);
        let mut gi = fr_u64(1);
        for x in v.iter_mut() {
            *x = host::fr_mul(x, &gi);
            gi = host::fr_mul(&gi, &g);
        }
        host_fft(v, &w);
    }
    let zinv = host::fr_inv(&host::fr_sub(&host::fr_pow(&g, m as u64), &fr_u64(1)));
    for i in 0..m {
        a[i] = host::fr_mul(&host::fr_sub(&host::fr_mul(&a[i], &b[i]), &c[i]), &zinv);
    }
    host_ifft(&mut a, &w);
    let mut gi = fr_u64(1);
    for x in a.iter_mut() {
        *x = host::fr_mul(x, &gi);
        gi = host::fr_mul(&gi, &ginv);
    }
    a.truncate(m - 1);
    a
}

#[test]
fn compute_h_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    for &(log_m, len) in &[
        (1u32, 2usize),
        (2, 3),
        (3, 8),
        (5, 20),
        (10, 1000),
        (12, 4096),
        (14, 16_000),
    ] {
        let a: Vec<blst_fr> = (0..len).map(|_| fr_random(&mut rng)).collect();
        let b: Vec<blst_fr> = (0..len).map(|_| fr_random(&mut rng)).collect();
        let c: Vec<blst_fr> = (0..len).map(|_| fr_random(&mut rng)).collect();
        let got = gpu.compute_h(&a, &b, &c, log_m).unwrap();
        let want = host_h(&a, &b, &c, log_m);
        assert!(
            fr_eq_slices(&got, &want),
            "compute_h mismatch at 2^{log_m}, len {len}"
        );
        eprintln!("ok compute_h 2^{log_m} (len {len})");
    }
    // satisfied-witness shape: c = a * b pointwise, with 0/1 heavy inputs
    let log_m = 11;
    let len = 1500;
    let a: Vec<blst_fr> = (0..len)
        .map(|i| {
            if i % 3 == 0 {
                fr_u64(1)
            } else {
                fr_random(&mut rng)
            }
        })
        .collect();
    let b: Vec<blst_fr> = (0..len)
        .map(|i| {
            if i % 4 == 0 {
                fr_zero()
            } else {
                fr_random(&mut rng)
            }
        })
        .collect();
    let c: Vec<blst_fr> = a.iter().zip(&b).map(|(x, y)| host::fr_mul(x, y)).collect();
    let got = gpu.compute_h(&a, &b, &c, log_m).unwrap();
    assert!(
        fr_eq_slices(&got, &host_h(&a, &b, &c, log_m)),
        "compute_h mismatch (satisfied)"
    );
    // shorter inputs than each other
    let got = gpu.compute_h(&a[..10], &b[..700], &c[..0], log_m).unwrap();
    assert!(fr_eq_slices(
        &got,
        &host_h(&a[..10], &b[..700], &c[..0], log_m)
    ));
    eprintln!("ok compute_h satisfied / ragged");
}

#[test]
fn compute_h_large_matches_host() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    // 2^21 domain: staged upload with a partial chunk and zero padding, staged download
    let log_m = 21;
    let len = (1usize << log_m) - 1000;
    let a: Vec<blst_fr> = (0..len).map(|_| fr_random(&mut rng)).collect();
    let b: Vec<blst_fr> = (0..len).map(|_| fr_random(&mut rng)).collect();
    let c: Vec<blst_fr> = (0..len - 7).map(|_| fr_random(&mut rng)).collect();
    let got = gpu.compute_h(&a, &b, &c, log_m).unwrap();
    assert!(
        fr_eq_slices(&got, &host_h(&a, &b, &c, log_m)),
        "compute_h mismatch at 2^{log_m}"
    );
    eprintln!("ok compute_h 2^{log_m} (len {len})");
}

#[test]
fn bad_input_is_an_error() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    let bases = g1_points(&mut rng, 10);
    let d = gpu.upload::<G1>(&bases, 1).unwrap();
    let s: Vec<blst_fr> = (0..11).map(|_| fr_random(&mut rng)).collect();
    assert!(matches!(
        gpu.msm(&d, 0, &s, None),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.msm(&d, 0, &s, Some(&[])),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.msm(&d, 0, &s, Some(&[u64::MAX])),
        Err(CudaError::InvalidInput(_))
    ));
    let mut v = vec![fr_zero(); 7];
    assert!(matches!(
        gpu.ntt(&mut v, 3, false),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.compute_h(&v, &v, &v, 2),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        gpu.compute_h(&v, &v, &v, 0),
        Err(CudaError::InvalidInput(_))
    ));
    assert!(matches!(
        CudaDevice::new(99, CudaOptions::default()),
        Err(CudaError::NoDevice(_))
    ));
    // the backend still works afterwards
    check_g1(gpu, &bases, &s[..10], "after errors");
}

#[test]
fn timing_helper_measures_device_time() {
    let gpu = gpu_or_skip!();
    let mut rng = rng();
    let mut v: Vec<blst_fr> = (0..1 << 16).map(|_| fr_random(&mut rng)).collect();
    let ((), t) = gpu.time(|g| g.ntt(&mut v, 16, false)).unwrap();
    eprintln!("NTT 2^16 with transfers: {t:.2?} (CUDA events)");
    assert!(t.as_nanos() > 0);
}

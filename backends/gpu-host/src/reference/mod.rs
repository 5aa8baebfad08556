//! The host-side expected results that crossgroth-cuda's and crossgroth-wgpu's
//! tests check the devices against, written once for both (feature
//! `reference`, for tests only): blst MSMs over G1 and G2 with and without a
//! density ([`msm`]), the serial NTT and bellperson's H ([`ntt`],
//! [`compute_h`]), Fq inversion and arithmetic ([`fq_inverse`], ...), and the
//! inputs: random and edge-case scalars, bases, densities, Fq values.
//!
//! Nothing here shares code with the backends' kernels or their host tables
//! beyond the roots of unity (which the tests check on their own).

mod fq;
mod ntt;
mod points;

pub use fq::*;
pub use ntt::*;
pub use points::*;

pub use crate::{fr_from_u64, fr_inv, fr_mul, fr_one, fr_pow, fr_sub, omega, G1, G2};
pub use rand;

use blst::*;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

/// A generator seeded afresh each run; the seed is printed with `tag`, and
/// CROSSGROTH_TEST_SEED (hex with 0x, or decimal) replays one.
pub fn rng(tag: &str) -> StdRng {
    let seed = std::env::var("CROSSGROTH_TEST_SEED")
        .ok()
        .and_then(|v| match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        })
        .unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!("[{tag}] seed {seed:#x}");
    StdRng::seed_from_u64(seed)
}

// ------------------------------------------------------------------------ Fr

pub fn fr_zero() -> blst_fr {
    blst_fr::default()
}

/// r - 1.
pub fn fr_minus_one() -> blst_fr {
    fr_sub(&fr_zero(), &fr_one())
}

pub fn fr_add(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    // SAFETY: valid field elements in, r out.
    unsafe { blst_fr_add(&mut r, a, b) };
    r
}

/// A uniform element of Fr (64 random bytes reduced mod r).
pub fn fr_random(rng: &mut impl RngCore) -> blst_fr {
    let mut bytes = [0u8; 64];
    rng.fill_bytes(&mut bytes);
    let mut s = blst_scalar::default();
    let mut f = blst_fr::default();
    // SAFETY: 64 bytes in, a scalar and then a field element out.
    unsafe {
        blst_scalar_from_le_bytes(&mut s, bytes.as_ptr(), 64);
        blst_fr_from_scalar(&mut f, &s);
    }
    f
}

/// The canonical little-endian bytes of a scalar, as blst's multiplications take them.
pub fn scalar_bytes(f: &blst_fr) -> [u8; 32] {
    let mut s = blst_scalar::default();
    // SAFETY: a valid field element in, s out.
    unsafe { blst_scalar_from_fr(&mut s, f) };
    s.b
}

/// n uniform scalars.
pub fn random_scalars(rng: &mut impl RngCore, n: usize) -> Vec<blst_fr> {
    (0..n).map(|_| fr_random(rng)).collect()
}

/// n scalars, in turn 0, 1, r - 1 and `period - 3` random ones.
pub fn edge_scalars(rng: &mut impl RngCore, n: usize, period: usize) -> Vec<blst_fr> {
    assert!(period > 3, "a period of {period} leaves no random scalars");
    (0..n)
        .map(|i| match i % period {
            0 => fr_zero(),
            1 => fr_one(),
            2 => fr_minus_one(),
            _ => fr_random(rng),
        })
        .collect()
}

/// n scalars, in turn 0, 1, r - 1, small (2..1000), r - small (1..1000) and random.
pub fn mixed_scalars(rng: &mut impl Rng, n: usize) -> Vec<blst_fr> {
    (0..n)
        .map(|i| match i % 6 {
            0 => fr_zero(),
            1 => fr_one(),
            2 => fr_minus_one(),
            3 => fr_from_u64(rng.gen_range(2..1000)),
            4 => fr_sub(&fr_minus_one(), &fr_from_u64(rng.gen_range(1..1000))),
            _ => fr_random(rng),
        })
        .collect()
}

/// Groth16-like scalars: 45% 0, 45% 1, 5% small (2..16), 5% random.
pub fn groth16_scalars(rng: &mut impl Rng, n: usize) -> Vec<blst_fr> {
    (0..n)
        .map(|_| match rng.gen_range(0..20) {
            0..=8 => fr_zero(),
            9..=17 => fr_one(),
            18 => fr_from_u64(rng.gen_range(2..16)),
            _ => fr_random(rng),
        })
        .collect()
}

/// Whether two Fr slices are equal (length and every element); the first
/// differences are printed.
pub fn fr_slices_eq(got: &[blst_fr], want: &[blst_fr]) -> bool {
    if got.len() != want.len() {
        eprintln!("length mismatch: {} vs {}", got.len(), want.len());
        return false;
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i].l != want[i].l).collect();
    if !bad.is_empty() {
        eprintln!(
            "{} of {} elements differ; first at {:?}",
            bad.len(),
            got.len(),
            &bad[..bad.len().min(8)]
        );
    }
    bad.is_empty()
}

// ------------------------------------------------------------------- density

/// A density over `nvars` variables, each included with probability `p`: the
/// bitmap (at least one word) and the included variables in order.
pub fn random_density(rng: &mut impl Rng, nvars: usize, p: f64) -> (Vec<u64>, Vec<usize>) {
    random_density_by(rng, nvars, |_| p)
}

/// As [`random_density`], variable i included with probability `p(i)`.
pub fn random_density_by(
    rng: &mut impl Rng,
    nvars: usize,
    p: impl Fn(usize) -> f64,
) -> (Vec<u64>, Vec<usize>) {
    let mut words = vec![0u64; nvars.div_ceil(64).max(1)];
    let mut included = Vec::new();
    for i in 0..nvars {
        if rng.gen_bool(p(i)) {
            words[i / 64] |= 1 << (i % 64);
            included.push(i);
        }
    }
    (words, included)
}

/// The scalars a density includes, in order (all of them without one).
pub fn selected(scalars: &[blst_fr], density: Option<&[u64]>) -> Vec<blst_fr> {
    match density {
        None => scalars.to_vec(),
        Some(d) => (0..scalars.len())
            .filter(|&i| (d[i / 64] >> (i % 64)) & 1 == 1)
            .map(|i| scalars[i])
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_sets_hold_their_edge_values() {
        let mut r = rng("scalar sets");
        let e = edge_scalars(&mut r, 14, 7);
        for (i, want) in [fr_zero(), fr_one(), fr_minus_one()].iter().enumerate() {
            assert_eq!(e[i].l, want.l);
            assert_eq!(e[i + 7].l, want.l);
        }
        assert_eq!(fr_add(&fr_minus_one(), &fr_one()).l, [0; 4]);
        let m = mixed_scalars(&mut r, 6);
        assert_eq!(
            (m[0].l, m[1].l, m[2].l),
            (fr_zero().l, fr_one().l, fr_minus_one().l)
        );
        assert_eq!(groth16_scalars(&mut r, 100).len(), 100);
        let (d, inc) = random_density(&mut r, 130, 0.5);
        let s = random_scalars(&mut r, 130);
        let sel = selected(&s, Some(&d));
        assert_eq!(sel.len(), inc.len());
        assert!(inc.iter().zip(&sel).all(|(&i, x)| s[i].l == x.l));
        assert!(fr_slices_eq(&s, &s) && !fr_slices_eq(&s, &s[1..]));
    }
}

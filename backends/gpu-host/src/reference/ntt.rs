//! The serial radix-2 NTT and bellperson's H, step by step, on the host.

use blst::blst_fr;

use super::{fr_add, fr_zero};
use crate::{fr_from_u64, fr_inv, fr_mul, fr_one, fr_pow, fr_sub, omega, COSET_GENERATOR};

/// In place: the NTT of `a` (2^log_n values) over omega(log_n), bit-reversed
/// input order as bellperson's serial FFT; the inverse divides by n.
pub fn ntt(a: &mut [blst_fr], log_n: u32, inverse: bool) {
    let n = a.len();
    assert_eq!(n, 1 << log_n, "ntt of {n} values at 2^{log_n}");
    let w = if inverse {
        fr_inv(&omega(log_n))
    } else {
        omega(log_n)
    };
    for i in 0..n {
        let j = if log_n == 0 {
            0
        } else {
            i.reverse_bits() >> (usize::BITS - log_n)
        };
        if i < j {
            a.swap(i, j);
        }
    }
    let mut m = 1;
    while m < n {
        let wm = fr_pow(&w, (n / (2 * m)) as u64);
        for k in (0..n).step_by(2 * m) {
            let mut wj = fr_one();
            for j in 0..m {
                let t = fr_mul(&a[k + j + m], &wj);
                let u = a[k + j];
                a[k + j] = fr_add(&u, &t);
                a[k + j + m] = fr_sub(&u, &t);
                wj = fr_mul(&wj, &wm);
            }
        }
        m *= 2;
    }
    if inverse {
        let ninv = fr_inv(&fr_from_u64(n as u64));
        for x in a.iter_mut() {
            *x = fr_mul(x, &ninv);
        }
    }
}

/// H as bellperson computes it: a, b, c (each zero-padded to 2^log_m) to the
/// coset g = 7, (a b - c) / (g^m - 1), back from the coset; the first m - 1
/// values. The three inputs' transforms run on threads of their own.
pub fn compute_h(a: &[blst_fr], b: &[blst_fr], c: &[blst_fr], log_m: u32) -> Vec<blst_fr> {
    let m = 1usize << log_m;
    let g = fr_from_u64(COSET_GENERATOR);
    let prep = |v: &[blst_fr]| {
        let mut x = v.to_vec();
        x.resize(m, fr_zero());
        ntt(&mut x, log_m, true);
        scale_by_powers(&mut x, &g);
        ntt(&mut x, log_m, false);
        x
    };
    let (mut xa, xb, xc) = std::thread::scope(|t| {
        let (hb, hc) = (t.spawn(|| prep(b)), t.spawn(|| prep(c)));
        (prep(a), hb.join().unwrap(), hc.join().unwrap())
    });
    let zinv = fr_inv(&fr_sub(&fr_pow(&g, m as u64), &fr_one()));
    for i in 0..m {
        xa[i] = fr_mul(&fr_sub(&fr_mul(&xa[i], &xb[i]), &xc[i]), &zinv);
    }
    ntt(&mut xa, log_m, true);
    scale_by_powers(&mut xa, &fr_inv(&g));
    xa.truncate(m - 1);
    xa
}

/// v[i] *= x^i.
fn scale_by_powers(v: &mut [blst_fr], x: &blst_fr) {
    let mut xi = fr_one();
    for e in v.iter_mut() {
        *e = fr_mul(e, &xi);
        xi = fr_mul(&xi, x);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{fr_slices_eq, random_scalars, rng};
    use super::*;

    #[test]
    fn ntt_round_trips_and_h_has_m_minus_1_values() {
        let mut r = rng("ntt");
        for log_n in [0u32, 1, 4, 7] {
            let x = random_scalars(&mut r, 1 << log_n);
            let mut y = x.clone();
            ntt(&mut y, log_n, false);
            ntt(&mut y, log_n, true);
            assert!(fr_slices_eq(&y, &x), "round trip 2^{log_n}");
        }
        // the NTT of (1, 0, 0, ...) is all ones
        let mut e = vec![fr_zero(); 8];
        e[0] = fr_one();
        ntt(&mut e, 3, false);
        assert!(e.iter().all(|v| v.l == fr_one().l));
        // H of a domain of m values has m - 1 coefficients
        let a = random_scalars(&mut r, 16);
        let b = random_scalars(&mut r, 16);
        let c: Vec<blst_fr> = a.iter().zip(&b).map(|(x, y)| fr_mul(x, y)).collect();
        assert_eq!(compute_h(&a, &b, &c, 4).len(), 15);
    }
}

//! Radix-2 NTT over Fr and the H computation (bellperson's `execute_fft` steps:
//! iFFT of a, b, c, coset FFT, a·b − c, division by Z on the coset, coset iFFT), parallel with
//! rayon. For a satisfied witness H is unique, so any exact ordering gives
//! bellperson's bytes; this one also follows bellperson's steps, so unsatisfied
//! witnesses match too.

use ff::{Field, PrimeField};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::Scalar;

/// ω for a domain of 2^log elements.
pub fn root_of_unity(log: u32) -> Scalar {
    let mut omega = Scalar::ROOT_OF_UNITY;
    for _ in log..Scalar::S {
        omega = omega.square();
    }
    omega
}

/// base^0, base^1, …, base^(n−1), times `scale`, computed in parallel chunks.
pub fn powers(base: Scalar, scale: Scalar, n: usize) -> Vec<Scalar> {
    const CHUNK: usize = 1 << 12;
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(k, chunk)| {
            let mut cur = scale * base.pow_vartime([(k * CHUNK) as u64]);
            for v in chunk {
                *v = cur;
                cur *= base;
            }
        });
    out
}

fn log2_exact(n: usize) -> Result<u32> {
    if !n.is_power_of_two() {
        return Err(Error::Invalid(format!(
            "NTT length {n} is not a power of two"
        )));
    }
    let log = n.trailing_zeros();
    if log >= Scalar::S {
        return Err(Error::DomainTooLarge { rows: n, log });
    }
    Ok(log)
}

fn bit_reverse(values: &mut [Scalar], log: u32) {
    if log == 0 {
        return;
    }
    let n = values.len();
    let shift = usize::BITS - log;
    for i in 0..n {
        let j = i.reverse_bits() >> shift;
        if i < j {
            values.swap(i, j);
        }
    }
}

/// In-place NTT with ω (or ω⁻¹ and a final ×n⁻¹ when `inverse`).
pub fn ntt(values: &mut [Scalar], inverse: bool) -> Result<()> {
    let n = values.len();
    let log = log2_exact(n)?;
    let mut omega = root_of_unity(log);
    if inverse {
        omega = omega.invert().unwrap();
    }
    transform(values, log, omega);
    if inverse {
        let n_inv = Scalar::from(n as u64).invert().unwrap();
        values
            .par_iter_mut()
            .with_min_len(1 << 12)
            .for_each(|v| *v *= n_inv);
    }
    Ok(())
}

/// Iterative Cooley-Tukey (decimation in time) after a bit-reversal permutation.
fn transform(values: &mut [Scalar], log: u32, omega: Scalar) {
    let n = values.len();
    if n <= 1 {
        return;
    }
    bit_reverse(values, log);
    let twiddles = powers(omega, Scalar::ONE, n / 2);
    let threads = rayon::current_num_threads();
    let mut half = 1;
    while half < n {
        let len = 2 * half;
        let stride = n / len;
        let blocks = n / len;
        if blocks >= threads * 4 {
            values
                .par_chunks_mut(len)
                .with_min_len(16.max(256 / len))
                .for_each(|block| {
                    let (lo, hi) = block.split_at_mut(half);
                    for j in 0..half {
                        butterfly(&mut lo[j], &mut hi[j], &twiddles[j * stride]);
                    }
                });
        } else {
            const C: usize = 1 << 10;
            for block in values.chunks_mut(len) {
                let (lo, hi) = block.split_at_mut(half);
                lo.par_chunks_mut(C)
                    .zip(hi.par_chunks_mut(C))
                    .enumerate()
                    .for_each(|(k, (lo, hi))| {
                        for t in 0..lo.len() {
                            let j = k * C + t;
                            butterfly(&mut lo[t], &mut hi[t], &twiddles[j * stride]);
                        }
                    });
            }
        }
        half = len;
    }
}

#[inline(always)]
fn butterfly(lo: &mut Scalar, hi: &mut Scalar, w: &Scalar) {
    let t = *hi * w;
    *hi = *lo - t;
    *lo += t;
}

/// The m − 1 coefficients of H = (A·B − C)/Z for evaluations a, b, c of length n on
/// the domain of m = 2^⌈log2 n⌉ points, computed on the coset g·⟨ω⟩ with g = 7.
/// In place: `a` ends holding H; `b` and `c` are left as spent scratch.
pub fn compute_h(a: &mut Vec<Scalar>, b: &mut Vec<Scalar>, c: &mut Vec<Scalar>) -> Result<()> {
    let n = a.len();
    if b.len() != n || c.len() != n {
        return Err(Error::Invalid(format!(
            "a, b, c have lengths {}, {}, {}",
            n,
            b.len(),
            c.len()
        )));
    }
    let log = crate::synthesis::log_domain(n)?;
    let m = 1usize << log;
    let omega = root_of_unity(log);
    let omega_inv = omega.invert().unwrap();
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    let m_inv = Scalar::from(m as u64).invert().unwrap();
    // iNTT then coset scaling, fused: coefficient i gets m⁻¹·gⁱ.
    let coset = powers(g, m_inv, m);
    for v in [&mut *a, &mut *b, &mut *c] {
        v.resize(m, Scalar::ZERO);
    }
    let to_coset = |v: &mut Vec<Scalar>| {
        transform(v, log, omega_inv);
        v.par_iter_mut()
            .zip(coset.par_iter())
            .with_min_len(1 << 12)
            .for_each(|(x, s)| *x *= s);
        transform(v, log, omega);
    };
    rayon::join(
        || to_coset(a),
        || rayon::join(|| to_coset(b), || to_coset(c)),
    );
    drop(coset);
    // (a·b − c) / Z(g), Z(x) = x^m − 1 being constant on the coset.
    let z_inv = (g.pow_vartime([m as u64]) - Scalar::ONE).invert().unwrap();
    a.par_iter_mut()
        .zip(b.par_iter())
        .zip(c.par_iter())
        .with_min_len(1 << 12)
        .for_each(|((a, b), c)| *a = (*a * b - c) * z_inv);
    // Inverse coset NTT: iNTT, then coefficient i × m⁻¹·g⁻ⁱ.
    transform(a, log, omega_inv);
    let uncoset = powers(g.invert().unwrap(), m_inv, m);
    a.par_iter_mut()
        .zip(uncoset.par_iter())
        .with_min_len(1 << 12)
        .for_each(|(x, s)| *x *= s);
    a.truncate(m - 1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    fn naive_dft(v: &[Scalar], omega: Scalar) -> Vec<Scalar> {
        let n = v.len();
        (0..n)
            .map(|k| {
                let wk = omega.pow_vartime([k as u64]);
                let mut acc = Scalar::ZERO;
                let mut w = Scalar::ONE;
                for x in v {
                    acc += *x * w;
                    w *= wk;
                }
                acc
            })
            .collect()
    }

    #[test]
    fn ntt_matches_naive_dft_and_inverts() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        for log in 0..8 {
            let v: Vec<Scalar> = (0..1 << log).map(|_| Scalar::random(&mut rng)).collect();
            let mut f = v.clone();
            ntt(&mut f, false).unwrap();
            assert_eq!(f, naive_dft(&v, root_of_unity(log)), "log {log}");
            ntt(&mut f, true).unwrap();
            assert_eq!(f, v);
        }
        assert!(ntt(&mut [Scalar::ONE; 3], false).is_err());
    }
}

#[cfg(test)]
mod big_tests {
    use super::*;
    use rand_core::SeedableRng;

    fn reference(v: &[Scalar], omega: Scalar) -> Vec<Scalar> {
        let n = v.len();
        if n == 1 {
            return v.to_vec();
        }
        let even: Vec<Scalar> = v.iter().step_by(2).copied().collect();
        let odd: Vec<Scalar> = v.iter().skip(1).step_by(2).copied().collect();
        let (e, o) = (
            reference(&even, omega.square()),
            reference(&odd, omega.square()),
        );
        let mut out = vec![Scalar::ZERO; n];
        let mut w = Scalar::ONE;
        for k in 0..n / 2 {
            out[k] = e[k] + w * o[k];
            out[k + n / 2] = e[k] - w * o[k];
            w *= omega;
        }
        out
    }

    #[test]
    fn large_ntt_matches_recursive_reference() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
        for log in [10u32, 13, 14, 16] {
            let v: Vec<Scalar> = (0..1 << log).map(|_| Scalar::random(&mut rng)).collect();
            let mut f = v.clone();
            ntt(&mut f, false).unwrap();
            assert_eq!(f, reference(&v, root_of_unity(log)), "log {log}");
        }
    }
}

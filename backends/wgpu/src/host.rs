//! Host-side field helpers (blst) and the constants that convert between
//! blst's Montgomery radix and the device's (13-bit limbs: R = 2^260 for Fr,
//! 2^390 for Fq).

use blst::*;

/// ff's / blstrs' `Scalar::ROOT_OF_UNITY` (a 2^32-th root of unity), canonical.
pub const ROOT_OF_UNITY_CANONICAL: [u64; 4] = [
    0x3829971f439f0d2b,
    0xb63683508c2280b9,
    0xd09b681922c813b4,
    0x16a2a19edfe81f20,
];
/// bellperson's coset generator.
pub const COSET_GENERATOR: u64 = 7;

pub fn fr_from_u64(v: u64) -> blst_fr {
    let mut r = blst_fr::default();
    let a = [v, 0, 0, 0];
    unsafe { blst_fr_from_uint64(&mut r, a.as_ptr()) };
    r
}

pub fn fr_from_canonical(l: &[u64; 4]) -> blst_fr {
    let mut r = blst_fr::default();
    unsafe { blst_fr_from_uint64(&mut r, l.as_ptr()) };
    r
}

pub fn fr_mul(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    unsafe { blst_fr_mul(&mut r, a, b) };
    r
}

pub fn fr_sub(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    unsafe { blst_fr_sub(&mut r, a, b) };
    r
}

pub fn fr_inv(a: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    unsafe { blst_fr_inverse(&mut r, a) };
    r
}

pub fn fr_pow(a: &blst_fr, mut e: u64) -> blst_fr {
    let mut r = fr_from_u64(1);
    let mut b = *a;
    while e > 0 {
        if e & 1 == 1 {
            r = fr_mul(&r, &b);
        }
        b = fr_mul(&b, &b);
        e >>= 1;
    }
    r
}

/// omega = ROOT_OF_UNITY^(2^(32 - log_n)).
pub fn omega(log_n: u32) -> blst_fr {
    let mut w = fr_from_canonical(&ROOT_OF_UNITY_CANONICAL);
    for _ in log_n..32 {
        w = fr_mul(&w, &w);
    }
    w
}

fn words8(l: &[u64; 4]) -> [u32; 8] {
    let mut w = [0u32; 8];
    for i in 0..4 {
        w[2 * i] = l[i] as u32;
        w[2 * i + 1] = (l[i] >> 32) as u32;
    }
    w
}

fn words12(l: &[u64; 6]) -> [u32; 12] {
    let mut w = [0u32; 12];
    for i in 0..6 {
        w[2 * i] = l[i] as u32;
        w[2 * i + 1] = (l[i] >> 32) as u32;
    }
    w
}

/// The device's Montgomery radices: 2^fr_bits for Fr, 2^fq_bits for Fq
/// (portable 13-bit limbs: 260 / 390; SHADER_INT64 29-bit limbs: 261 / 406).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Radix {
    pub fr_bits: u32,
    pub fq_bits: u32,
}

impl Radix {
    pub fn new(int64: bool) -> Radix {
        if int64 {
            Radix {
                fr_bits: 261,
                fq_bits: 406,
            }
        } else {
            Radix {
                fr_bits: 260,
                fq_bits: 390,
            }
        }
    }

    /// x (blst form, x 2^256) -> the device form x 2^fr_bits, as 8 words.
    pub fn fr_dev(&self, x: &blst_fr) -> [u32; 8] {
        words8(&fr_mul(x, &fr_from_u64(1 << (self.fr_bits - 256))).l)
    }

    /// Device Montgomery products B1[i] * K with these K convert:
    /// blst -> device (K = 2^(2 fr_bits - 256) mod r), device -> blst
    /// (2^256 mod r), blst -> canonical (2^(fr_bits - 256)).
    pub fn fr_k_to_dev(&self) -> [u32; 8] {
        words8(&fr_from_u64(1 << (2 * self.fr_bits - 512)).l)
    }
    pub fn fr_k_from_dev(&self) -> [u32; 8] {
        words8(&fr_from_u64(1).l)
    }
    pub fn fr_k_canonical(&self) -> [u32; 8] {
        words8(&[1 << (self.fr_bits - 256), 0, 0, 0])
    }

    /// Fq: blst -> device (K = 2^(2 fq_bits - 384) mod p) and device -> blst
    /// (K = 2^384 mod p).
    pub fn fq_k_to_dev(&self) -> [u32; 12] {
        words12(&fp_from_u64(1 << (2 * self.fq_bits - 768)).l)
    }
    pub fn fq_k_from_dev(&self) -> [u32; 12] {
        words12(&fp_from_u64(1).l)
    }

    /// Split power table for x^i, i < count: lo[j] = x^j (j < 2^bits),
    /// hi[j] = x^(j 2^bits), both in device form, as words.
    pub fn split_powers(&self, x: &blst_fr, count: u64) -> (Vec<u32>, Vec<u32>, u32) {
        let log = 64 - count.saturating_sub(1).leading_zeros();
        let bits = log.div_ceil(2);
        let nlo = 1u64 << bits;
        let nhi = (count.max(1) - 1) / nlo + 1;
        let mut lo = Vec::with_capacity(nlo as usize * 8);
        let mut p = fr_from_u64(1);
        for _ in 0..nlo {
            lo.extend_from_slice(&self.fr_dev(&p));
            p = fr_mul(&p, x);
        }
        // p = x^nlo now
        let step = p;
        let mut hi = Vec::with_capacity(nhi as usize * 8);
        let mut q = fr_from_u64(1);
        for _ in 0..nhi {
            hi.extend_from_slice(&self.fr_dev(&q));
            q = fr_mul(&q, &step);
        }
        (lo, hi, bits)
    }
}

fn fp_from_u64(v: u64) -> blst_fp {
    let mut r = blst_fp::default();
    let a = [v, 0, 0, 0, 0, 0];
    unsafe { blst_fp_from_uint64(&mut r, a.as_ptr()) };
    r
}

pub fn fr_as_words(v: &[blst_fr]) -> &[u32] {
    // SAFETY: blst_fr is repr(C) [u64; 4]; u32 has weaker alignment.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u32, v.len() * 8) }
}

pub fn words_to_fr(w: &[u32]) -> Vec<blst_fr> {
    w.chunks_exact(8)
        .map(|c| {
            let mut f = blst_fr::default();
            for i in 0..4 {
                f.l[i] = c[2 * i] as u64 | ((c[2 * i + 1] as u64) << 32);
            }
            f
        })
        .collect()
}

pub fn words_to_fp(w: &[u32]) -> blst_fp {
    let mut f = blst_fp::default();
    for i in 0..6 {
        f.l[i] = w[2 * i] as u64 | ((w[2 * i + 1] as u64) << 32);
    }
    f
}

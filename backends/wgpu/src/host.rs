//! Host-side field helpers (blst; the Fr ones shared with crossgroth-cuda come
//! from crossgroth-gpu-host) and the constants that convert between blst's
//! Montgomery radix and the device's (`Radix`: portable or SHADER_INT64 code).

use blst::*;

pub use crossgroth_gpu_host::{
    fr_as_words, fr_from_u64, fr_from_words, fr_inv, fr_mul, fr_pow, fr_sub, omega,
    split_power_tables, words_to_fr, COSET_GENERATOR,
};

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
        let (lo, hi, bits) = split_power_tables(x, count);
        let dev = |t: Vec<blst_fr>| t.iter().flat_map(|p| self.fr_dev(p)).collect();
        (dev(lo), dev(hi), bits)
    }
}

fn fp_from_u64(v: u64) -> blst_fp {
    let mut r = blst_fp::default();
    let a = [v, 0, 0, 0, 0, 0];
    unsafe { blst_fp_from_uint64(&mut r, a.as_ptr()) };
    r
}

pub fn words_to_fp(w: &[u32]) -> blst_fp {
    let mut f = blst_fp::default();
    for i in 0..6 {
        f.l[i] = w[2 * i] as u64 | ((w[2 * i + 1] as u64) << 32);
    }
    f
}

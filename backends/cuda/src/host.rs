//! Host-side Fr helpers (through blst) for twiddle and coset tables.

use blst::*;

/// 2^32-th primitive root of unity of Fr: 7^((r - 1) / 2^32), canonical limbs.
/// The same value as ff's / blstrs' `Scalar::ROOT_OF_UNITY`.
pub const ROOT_OF_UNITY_CANONICAL: [u64; 4] = [
    0x3829971f439f0d2b,
    0xb63683508c2280b9,
    0xd09b681922c813b4,
    0x16a2a19edfe81f20,
];
/// Multiplicative generator used for the coset, as in bellperson.
pub const COSET_GENERATOR: u64 = 7;

pub fn fr_from_u64(v: u64) -> blst_fr {
    let limbs = [v, 0, 0, 0];
    fr_from_canonical(&limbs)
}

pub fn fr_from_canonical(limbs: &[u64; 4]) -> blst_fr {
    let mut r = blst_fr::default();
    unsafe { blst_fr_from_uint64(&mut r, limbs.as_ptr()) };
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
    unsafe { blst_fr_eucl_inverse(&mut r, a) };
    r
}

pub fn fr_one() -> blst_fr {
    fr_from_u64(1)
}

pub fn fr_pow(base: &blst_fr, mut e: u64) -> blst_fr {
    let mut acc = fr_one();
    let mut b = *base;
    while e > 0 {
        if e & 1 == 1 {
            acc = fr_mul(&acc, &b);
        }
        b = fr_mul(&b, &b);
        e >>= 1;
    }
    acc
}

/// Primitive 2^log_n-th root of unity, as bellperson derives it:
/// ROOT_OF_UNITY^(2^(32 - log_n)).
pub fn omega(log_n: u32) -> blst_fr {
    let mut w = fr_from_canonical(&ROOT_OF_UNITY_CANONICAL);
    for _ in log_n..32 {
        w = fr_mul(&w, &w);
    }
    w
}

/// Two tables such that base^j = lo[j & (2^lo_bits - 1)] * hi[j >> lo_bits] for
/// j < count.
pub fn split_power_tables(base: &blst_fr, count: u64) -> (Vec<blst_fr>, Vec<blst_fr>, u32) {
    let count = count.max(1);
    let bits = 64 - (count - 1).leading_zeros(); // ceil(log2 count)
    let lo_bits = bits.div_ceil(2);
    let lo_len = 1usize << lo_bits;
    let hi_len = (count as usize).div_ceil(lo_len).max(1);
    let mut lo = Vec::with_capacity(lo_len);
    let mut acc = fr_one();
    for _ in 0..lo_len {
        lo.push(acc);
        acc = fr_mul(&acc, base);
    }
    // acc = base^lo_len
    let step = acc;
    let mut hi = Vec::with_capacity(hi_len);
    let mut acc = fr_one();
    for _ in 0..hi_len {
        hi.push(acc);
        acc = fr_mul(&acc, &step);
    }
    (lo, hi, lo_bits)
}

pub fn fr_as_u64s(v: &[blst_fr]) -> &[u64] {
    // blst_fr is repr(C) { l: [u64; 4] }
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u64, v.len() * 4) }
}

pub fn fr_as_u64s_mut(v: &mut [blst_fr]) -> &mut [u64] {
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u64, v.len() * 4) }
}

pub fn fr_arg(v: &blst_fr) -> [u64; 4] {
    v.l
}

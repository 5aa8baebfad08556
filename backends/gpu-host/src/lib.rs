//! Host-side helpers shared by crossgroth's GPU backends (crossgroth-cuda and
//! crossgroth-wgpu): BLS12-381 Fr arithmetic through blst for the tables the
//! devices need (twiddles, coset powers, constants), and views of blst_fr
//! slices as the words the devices take. Both backends depend on blst only;
//! this crate keeps the constants and the table layout in one place so the two
//! cannot drift apart.

pub mod curve;
pub mod matrices;
#[cfg(feature = "reference")]
pub mod reference;

pub use curve::{Curve, Group, G1, G2};
pub use matrices::{check_matrices, matrices_bytes, CsrMatrix, AUX_COLUMN};

/// Entries of a generator's window table for a setup's fixed-base products:
/// 32 windows of 8 bits, 256 entries each (entry w·256 + b is b·2^(8w)·G).
/// Both GPU crates' kernels read this layout.
pub const FIXED_BASE_TABLE_LEN: usize = 32 * 256;

/// The checks both crates' `fixed_base_mul` make before any work, as the
/// message of their invalid-input error: a table of [`FIXED_BASE_TABLE_LEN`]
/// points and one output a scalar.
pub fn check_fixed_base(
    group: &str,
    table_len: usize,
    scalars: usize,
    outputs: usize,
) -> Result<(), String> {
    if table_len != FIXED_BASE_TABLE_LEN {
        return Err(format!(
            "a {group} fixed-base table of {table_len} points (it has {FIXED_BASE_TABLE_LEN})"
        ));
    }
    if scalars != outputs {
        return Err(format!("{scalars} scalars for {outputs} {group} products"));
    }
    Ok(())
}

/// MSM bases kept in host memory and shared with their owner (no copy is
/// made): what a backend streams to its device, a window at a time, when
/// they do not fit there. Both GPU crates take this one type.
pub type HostBases<T> = std::sync::Arc<dyn AsRef<[T]> + Send + Sync>;

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
    fr_from_canonical(&[v, 0, 0, 0])
}

pub fn fr_from_canonical(limbs: &[u64; 4]) -> blst_fr {
    let mut r = blst_fr::default();
    // SAFETY: blst reads 4 limbs from a valid array and writes r.
    unsafe { blst_fr_from_uint64(&mut r, limbs.as_ptr()) };
    r
}

pub fn fr_one() -> blst_fr {
    fr_from_u64(1)
}

pub fn fr_mul(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    // SAFETY: valid field elements in, r out.
    unsafe { blst_fr_mul(&mut r, a, b) };
    r
}

pub fn fr_sub(a: &blst_fr, b: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    // SAFETY: valid field elements in, r out.
    unsafe { blst_fr_sub(&mut r, a, b) };
    r
}

/// a^-1 (0 for 0). The variable-time inverse: these are public table values.
pub fn fr_inv(a: &blst_fr) -> blst_fr {
    let mut r = blst_fr::default();
    // SAFETY: a valid field element in, r out.
    unsafe { blst_fr_eucl_inverse(&mut r, a) };
    r
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
/// j < count (both about sqrt(count) long): the devices rebuild twiddles and
/// coset powers from them with one product each.
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

/// blst_fr values as their 4 little-endian u64 limbs each.
pub fn fr_as_u64s(v: &[blst_fr]) -> &[u64] {
    // SAFETY: blst_fr is repr(C) { l: [u64; 4] }.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u64, v.len() * 4) }
}

pub fn fr_as_u64s_mut(v: &mut [blst_fr]) -> &mut [u64] {
    // SAFETY: as fr_as_u64s; every bit pattern is a valid [u64; 4].
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u64, v.len() * 4) }
}

/// blst_fr values as 8 little-endian u32 words each.
pub fn fr_as_words(v: &[blst_fr]) -> &[u32] {
    // SAFETY: blst_fr is repr(C) [u64; 4]; u32 has weaker alignment.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u32, v.len() * 8) }
}

/// The inverse of fr_as_words.
pub fn words_to_fr(w: &[u32]) -> Vec<blst_fr> {
    w.chunks_exact(8).map(fr_from_words).collect()
}

/// One blst_fr from its 8 little-endian u32 words (the first 8 of `w`).
pub fn fr_from_words(w: &[u32]) -> blst_fr {
    let mut f = blst_fr::default();
    for i in 0..4 {
        f.l[i] = u64::from(w[2 * i]) | (u64::from(w[2 * i + 1]) << 32);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omega_has_the_right_order() {
        for log_n in [1u32, 5, 20] {
            let w = omega(log_n);
            let one = fr_one();
            assert_eq!(fr_pow(&w, 1 << log_n).l, one.l);
            assert_ne!(fr_pow(&w, 1 << (log_n - 1)).l, one.l);
        }
    }

    #[test]
    fn split_tables_rebuild_every_power() {
        let x = fr_from_u64(COSET_GENERATOR);
        for count in [0u64, 1, 2, 7, 64, 1000] {
            let (lo, hi, bits) = split_power_tables(&x, count);
            for j in 0..count {
                let mask = (1u64 << bits) - 1;
                let got = fr_mul(&lo[(j & mask) as usize], &hi[(j >> bits) as usize]);
                assert_eq!(got.l, fr_pow(&x, j).l, "x^{j} of {count}");
            }
        }
    }

    #[test]
    fn word_views_round_trip() {
        let v: Vec<blst_fr> = (1..5).map(|i| fr_pow(&fr_from_u64(3), i)).collect();
        let back = words_to_fr(fr_as_words(&v));
        assert!(v.iter().zip(&back).all(|(a, b)| a.l == b.l));
        assert_eq!(fr_as_u64s(&v).len(), 16);
        assert!(fr_inv(&fr_from_u64(0)).l == [0; 4]);
        assert_eq!(fr_mul(&fr_inv(&v[0]), &v[0]).l, fr_one().l);
        assert_eq!(fr_sub(&v[0], &v[0]).l, [0; 4]);
    }
}

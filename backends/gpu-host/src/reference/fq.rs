//! Fq by blst: values, edge cases, inversion.

use blst::*;
use rand::RngCore;

/// BLS12-381's p, little-endian u64 limbs (blst_fp's layout).
pub const FQ_MODULUS: [u64; 6] = [
    0xb9feffffffffaaab,
    0x1eabfffeb153ffff,
    0x6730d2a0f6b0f624,
    0x64774b84f38512bf,
    0x4b1ba7b6434bacd7,
    0x1a0111ea397fe69a,
];

fn below_p(l: &[u64; 6]) -> bool {
    for i in (0..6).rev() {
        if l[i] != FQ_MODULUS[i] {
            return l[i] < FQ_MODULUS[i];
        }
    }
    false
}

/// A uniform element of Fq: any value below p is the Montgomery form of one.
pub fn fq_random(rng: &mut impl RngCore) -> blst_fp {
    loop {
        let mut l = [0u64; 6];
        for w in l.iter_mut() {
            *w = rng.next_u64();
        }
        l[5] &= (1u64 << 61) - 1;
        if below_p(&l) {
            return blst_fp { l };
        }
    }
}

/// v in Montgomery form.
pub fn fq_from_u64(v: u64) -> blst_fp {
    let mut r = blst_fp::default();
    let u: [u64; 6] = [v, 0, 0, 0, 0, 0];
    // SAFETY: 6 limbs in, r out.
    unsafe { blst_fp_from_uint64(&mut r, u.as_ptr()) };
    r
}

pub fn fq_mul(a: &blst_fp, b: &blst_fp) -> blst_fp {
    let mut r = blst_fp::default();
    // SAFETY: valid field elements in, r out.
    unsafe { blst_fp_mul(&mut r, a, b) };
    r
}

pub fn fq_sub(a: &blst_fp, b: &blst_fp) -> blst_fp {
    let mut r = blst_fp::default();
    // SAFETY: valid field elements in, r out.
    unsafe { blst_fp_sub(&mut r, a, b) };
    r
}

/// 1 / a, and 0 for 0 (the kernels' convention; not asked of blst).
pub fn fq_inverse(a: &blst_fp) -> blst_fp {
    let mut r = blst_fp::default();
    if a.l != [0; 6] {
        // SAFETY: a valid, nonzero field element in, r out.
        unsafe { blst_fp_inverse(&mut r, a) };
    }
    r
}

/// Edge cases: 0, 1 (Montgomery form R mod p), -1, the stored values 1, 2 and
/// p - 1, p - 2, powers of two, and values with long runs of equal bits.
pub fn fq_edge_cases() -> Vec<blst_fp> {
    let one = fq_from_u64(1);
    let raw = |l: [u64; 6]| blst_fp { l };
    let mut v = vec![blst_fp::default(), one, fq_sub(&blst_fp::default(), &one)];
    v.extend([raw([1, 0, 0, 0, 0, 0]), raw([2, 0, 0, 0, 0, 0])]);
    let mut p1 = FQ_MODULUS;
    p1[0] -= 1;
    let mut p2 = FQ_MODULUS;
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

/// Little-endian u32 words as u64 limbs (two words each).
pub fn limbs_of_words(w: &[u32]) -> Vec<u64> {
    w.chunks(2)
        .map(|c| c[0] as u64 | ((c[1] as u64) << 32))
        .collect()
}

/// u64 limbs as little-endian u32 words.
pub fn words_of_limbs(l: &[u64]) -> Vec<u32> {
    l.iter()
        .flat_map(|&x| [x as u32, (x >> 32) as u32])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::rng;
    use super::*;

    #[test]
    fn fq_values_are_below_p_and_invert() {
        let mut r = rng("fq");
        let mut all = fq_edge_cases();
        all.extend((0..64).map(|_| fq_random(&mut r)));
        let one = fq_from_u64(1);
        for x in &all {
            assert!(below_p(&x.l), "{:x?}", x.l);
            let y = fq_mul(x, &fq_inverse(x));
            assert!(y.l == one.l || x.l == [0; 6]);
        }
        assert_eq!(fq_sub(&one, &one).l, [0; 6]);
        assert_eq!(limbs_of_words(&words_of_limbs(&FQ_MODULUS)), FQ_MODULUS);
    }
}

// Montgomery arithmetic over a prime field with N 32-bit limbs, R = 2^(32N).
//
// Limb order and Montgomery radix are blst's: blst_fp (6 x u64, R = 2^384) is
// 12 little-endian u32 limbs here; blst_fr (4 x u64, R = 2^256) is 8.
// Every operation returns a fully reduced value (< p), so equality and
// is_zero are limb comparisons. Requires 2p < 2^(32N) (true for both fields).
#pragma once
#include "ptx.cuh"

// P supplies: static const int N; P::mod(i), P::one(i) (R mod p), P::inv
// (-p^-1 mod 2^32). The constant arrays live in device functions so that, after
// unrolling, every limb becomes an immediate.
//
// 16-byte aligned (every element is 32 or 48 bytes) so that copies of whole
// elements (shared memory in the NTT, twiddles, scalars) are 16-byte vector
// loads and stores rather than one per limb.
template <class P>
struct alignas(16) mont_t {
    static const int N = P::N;
    u32 l[N];

    __device__ __forceinline__ static mont_t zero() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = 0;
        return r;
    }
    __device__ __forceinline__ static mont_t one() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = P::one(i);
        return r;
    }
    __device__ __forceinline__ bool is_zero() const {
        u32 acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= l[i];
        return acc == 0;
    }
    __device__ __forceinline__ bool operator==(const mont_t& o) const {
        u32 acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= l[i] ^ o.l[i];
        return acc == 0;
    }
    __device__ __forceinline__ bool operator!=(const mont_t& o) const { return !(*this == o); }

    // a + b mod p (a, b < p, so a + b < 2p < 2^(32N): no carry out).
    __device__ __forceinline__ friend mont_t operator+(const mont_t& a, const mont_t& b) {
        mont_t r, s;
        r.l[0] = ptx::add_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) r.l[i] = ptx::addc_cc(a.l[i], b.l[i]);
        r.l[N - 1] = ptx::addc(a.l[N - 1], b.l[N - 1]);
        s.l[0] = ptx::sub_cc(r.l[0], P::mod(0));
#pragma unroll
        for (int i = 1; i < N; i++) s.l[i] = ptx::subc_cc(r.l[i], P::mod(i));
        u32 borrow = ptx::subc(0, 0);
        return borrow ? r : s;
    }
    // a - b mod p.
    __device__ __forceinline__ friend mont_t operator-(const mont_t& a, const mont_t& b) {
        mont_t r, s;
        r.l[0] = ptx::sub_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.l[i] = ptx::subc_cc(a.l[i], b.l[i]);
        u32 borrow = ptx::subc(0, 0);
        s.l[0] = ptx::add_cc(r.l[0], P::mod(0));
#pragma unroll
        for (int i = 1; i < N - 1; i++) s.l[i] = ptx::addc_cc(r.l[i], P::mod(i));
        s.l[N - 1] = ptx::addc(r.l[N - 1], P::mod(N - 1));
        return borrow ? s : r;
    }
    __device__ __forceinline__ mont_t neg() const { return zero() - *this; }
    __device__ __forceinline__ mont_t dbl() const { return *this + *this; }

    // Montgomery product. Fields with P::inline_mul inline it (Fr: NTT); the
    // others (Fq) call one out-of-line copy, which keeps the PTX small (the
    // point formulas would otherwise inline hundreds of 12-limb products).
    __device__ __forceinline__ friend mont_t operator*(const mont_t& a, const mont_t& b) {
        if (P::inline_mul) return mul_inl(a, b);
        return mul_call(a, b);
    }
    __device__ __noinline__ static mont_t mul_call(mont_t a, mont_t b) { return mul_inl(a, b); }

    // Montgomery product a * b * R^-1 mod p: CIOS (one outer step per limb of
    // b) with the accumulator split by limb parity. Products of even limbs of
    // a (and of p) go to `even`, those of odd limbs to `odd` (one limb up), so
    // the low and high halves of one 32x32 product land in adjacent limbs of
    // one carry chain, and ptxas fuses each mad.lo/madc.hi pair into one wide
    // multiply-add. A textbook CIOS (low halves in one chain, high halves in
    // the next) needs two multiplies per product, the high half at half rate:
    // on the H200 the G1 MSM of 2^24 went from 240 to 172 ms and the NTT of
    // 2^24 from 8.66 to 7.53 ms. Each step divides by 2^32 by swapping the
    // roles of the two arrays; the array that becomes `odd` is shifted down two
    // limbs while the next products are added (madc_n_rshift). Requires N even
    // and 2p < 2^(32N) (both fields here). scripts/cuda/check_mont_mul.py runs
    // this exact instruction sequence on Python integers (CI runs it).
    __device__ __forceinline__ static void mul_n(u32* acc, const u32* a, u32 bi) {
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            acc[j] = ptx::mul_lo(a[j], bi);
            acc[j + 1] = ptx::mul_hi(a[j], bi);
        }
    }
    // acc += a * bi over the even limbs of a, carry out left in the flag.
    __device__ __forceinline__ static void cmad_n(u32* acc, const u32* a, u32 bi) {
        acc[0] = ptx::mad_lo_cc(a[0], bi, acc[0]);
        acc[1] = ptx::madc_hi_cc(a[0], bi, acc[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            acc[j] = ptx::madc_lo_cc(a[j], bi, acc[j]);
            acc[j + 1] = ptx::madc_hi_cc(a[j], bi, acc[j + 1]);
        }
    }
    // odd = (odd >> 2 limbs) + a * bi (a: the odd limbs), carry in from the flag.
    __device__ __forceinline__ static void madc_n_rshift(u32* odd, const u32* a, u32 bi) {
#pragma unroll
        for (int j = 0; j < N - 2; j += 2) {
            odd[j] = ptx::madc_lo_cc(a[j], bi, odd[j + 2]);
            odd[j + 1] = ptx::madc_hi_cc(a[j], bi, odd[j + 3]);
        }
        odd[N - 2] = ptx::madc_lo_cc(a[N - 2], bi, 0);
        odd[N - 1] = ptx::madc_hi(a[N - 2], bi, 0);
    }
    // One CIOS step: acc += a * bi, then + m * p so the lowest limb is 0.
    __device__ __forceinline__ static void mad_n_redc(u32* even, u32* odd, const u32* a, u32 bi, bool first) {
        if (first) {
            mul_n(odd, a + 1, bi);
            mul_n(even, a, bi);
        } else {
            even[0] = ptx::add_cc(even[0], odd[1]);
            madc_n_rshift(odd, a + 1, bi);
            cmad_n(even, a, bi);
            odd[N - 1] = ptx::addc(odd[N - 1], 0);
        }
        const u32 m = even[0] * P::inv;
        u32 mod[N];
#pragma unroll
        for (int j = 0; j < N; j++) mod[j] = P::mod(j);
        cmad_n(odd, mod + 1, m);  // carry out is 0: odd < 2^(32N)
        cmad_n(even, mod, m);
        odd[N - 1] = ptx::addc(odd[N - 1], 0);
    }
    __device__ __forceinline__ static mont_t mul_inl(const mont_t& a, const mont_t& b) {
        u32 even[N], odd[N];
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            mad_n_redc(even, odd, a.l, b.l[i], i == 0);
            mad_n_redc(odd, even, a.l, b.l[i + 1], false);
        }
        // even + odd / 2^32 (odd[0] is 0 after the last reduction)
        even[0] = ptx::add_cc(even[0], odd[1]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) even[j] = ptx::addc_cc(even[j], odd[j + 1]);
        even[N - 1] = ptx::addc(even[N - 1], 0);
        mont_t r, s;
#pragma unroll
        for (int j = 0; j < N; j++) r.l[j] = even[j];
        s.l[0] = ptx::sub_cc(r.l[0], P::mod(0));
#pragma unroll
        for (int j = 1; j < N; j++) s.l[j] = ptx::subc_cc(r.l[j], P::mod(j));
        u32 borrow = ptx::subc(0, 0);
        return borrow ? r : s;
    }

    __device__ __forceinline__ mont_t sqr() const { return *this * *this; }

    // Montgomery -> canonical (multiply by 1).
    __device__ __forceinline__ mont_t from_mont() const {
        mont_t one_plain = zero();
        one_plain.l[0] = 1;
        return *this * one_plain;
    }
};

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
template <class P>
struct mont_t {
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

    // Montgomery product a * b * R^-1 mod p (CIOS, one outer step per limb of b).
    __device__ __forceinline__ static mont_t mul_inl(const mont_t& a, const mont_t& b) {
        u32 t[N + 2];
#pragma unroll
        for (int j = 0; j < N + 2; j++) t[j] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const u32 bi = b.l[i];
            // t += a * b_i, low halves then high halves.
            t[0] = ptx::mad_lo_cc(a.l[0], bi, t[0]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j] = ptx::madc_lo_cc(a.l[j], bi, t[j]);
            t[N] = ptx::addc_cc(t[N], 0);
            t[N + 1] = ptx::addc(t[N + 1], 0);
            t[1] = ptx::mad_hi_cc(a.l[0], bi, t[1]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j + 1] = ptx::madc_hi_cc(a.l[j], bi, t[j + 1]);
            t[N + 1] = ptx::addc(t[N + 1], 0);
            // t += m * p with m chosen so that t[0] becomes 0.
            const u32 m = t[0] * P::inv;
            t[0] = ptx::mad_lo_cc(m, P::mod(0), t[0]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j] = ptx::madc_lo_cc(m, P::mod(j), t[j]);
            t[N] = ptx::addc_cc(t[N], 0);
            t[N + 1] = ptx::addc(t[N + 1], 0);
            t[1] = ptx::mad_hi_cc(m, P::mod(0), t[1]);
#pragma unroll
            for (int j = 1; j < N; j++) t[j + 1] = ptx::madc_hi_cc(m, P::mod(j), t[j + 1]);
            t[N + 1] = ptx::addc(t[N + 1], 0);
            // divide by 2^32
#pragma unroll
            for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
            t[N + 1] = 0;
        }
        // t < 2p < 2^(32N): one conditional subtraction.
        mont_t r, s;
#pragma unroll
        for (int j = 0; j < N; j++) r.l[j] = t[j];
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

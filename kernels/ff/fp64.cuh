// Fq products on the FP64 pipe: an element as eight 48-bit limbs held in
// doubles, multiplied by FMAs with every intermediate exact, so that the
// multiplier's (IMAD) pipe, which bounds the MSM's accumulation, is left to
// the fq_t products beside them.
//
// A limb product a * b (|a * b| < 2^96) splits exactly into a multiple of 2^48
// (the FMA with 1.5 * 2^100 rounds to one: that binade's ulp is 2^48) and the
// remainder a * b - high in [-2^47, 2^47] (a second FMA, exact because the
// remainder is representable). Column sums stay integers below 2^53, hence
// exact; the Montgomery reduction (R = 2^384, the same R as fq_t, so the two
// forms hold the same Montgomery values) takes a signed m a limb. Results are
// lazily reduced: inputs below 2p give a result in (p/2, 2p).
#pragma once
#include "bls12_381.cuh"

struct fq_f64 {
    double l[8];

    // p in 48-bit limbs, and -p^-1 mod 2^48.
    __device__ __forceinline__ static double mod(int i) {
        const double v[8] = {(double)0xffffffffaaabull, (double)0xb153ffffb9feull, (double)0xf6241eabfffeull,
                             (double)0x6730d2a0f6b0ull, (double)0x4b84f38512bfull, (double)0x434bacd76477ull,
                             (double)0xe69a4b1ba7b6ull, (double)0x1a0111ea397full};
        return v[i];
    }
    __device__ __forceinline__ static double minus_pinv() { return (double)0xfffcfffcfffdull; }

    // hi + lo = a * b exactly, hi a multiple of 2^48, |lo| <= 2^47.
    __device__ __forceinline__ static void split(double a, double b, double& hi, double& lo) {
        const double c = 0x1.8p100;
        hi = fma(a, b, c) - c;
        lo = fma(a, b, -hi);
    }
    // The integer nearest t / 2^48, for integers |t| < 2^100.
    __device__ __forceinline__ static double round_div48(double t) {
        const double c = 0x1.8p52;
        return fma(t, 0x1p-48, c) - c;
    }
    __device__ __forceinline__ static double from_bits48(u64 v) {
        return __longlong_as_double((long long)(0x4330000000000000ull | v)) - 0x1p52;
    }
    __device__ __forceinline__ static u64 to_bits48(double d) {
        return (u64)__double_as_longlong(d + 0x1p52) & 0xfffffffffffffull;
    }

    // From twelve 32-bit limbs (fq_t, fq_inline_t): limb 2j is bits 96j .. 96j + 47.
    template <class M>
    __device__ __forceinline__ static fq_f64 from(const M& x) {
        fq_f64 r;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            r.l[2 * j] = from_bits48((u64)x.l[3 * j] | (u64)(x.l[3 * j + 1] & 0xffffu) << 32);
            r.l[2 * j + 1] = from_bits48((u64)(x.l[3 * j + 1] >> 16) | (u64)x.l[3 * j + 2] << 16);
        }
        return r;
    }

    // To twelve 32-bit limbs, fully reduced (this is below 2p with limbs in
    // [0, 2^48)).
    template <class M = fq_t>
    __device__ __forceinline__ M to_fq() const {
        M r;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const u64 a = to_bits48(l[2 * j]), b = to_bits48(l[2 * j + 1]);
            r.l[3 * j] = (u32)a;
            r.l[3 * j + 1] = (u32)(a >> 32) | (u32)(b << 16);
            r.l[3 * j + 2] = (u32)(b >> 16);
        }
        M s;
        s.l[0] = ptx::sub_cc(r.l[0], fq_params::mod(0));
#pragma unroll
        for (int i = 1; i < 12; i++) s.l[i] = ptx::subc_cc(r.l[i], fq_params::mod(i));
        const u32 borrow = ptx::subc(0, 0);
        return borrow ? r : s;
    }

    // a * b * 2^-384 mod p, in (p/2, 2p) for a, b below 2p.
    __device__ __forceinline__ friend fq_f64 operator*(const fq_f64& a, const fq_f64& b) {
        double t[16];
#pragma unroll
        for (int k = 0; k < 16; k++) t[k] = 0.0;
        // Columns of a * b: each below 1.5 * 2^51 (eight remainders, eight highs / 2^48).
#pragma unroll
        for (int i = 0; i < 8; i++) {
#pragma unroll
            for (int j = 0; j < 8; j++) {
                double hi, lo;
                split(a.l[i], b.l[j], hi, lo);
                t[i + j] += lo;
                t[i + j + 1] = fma(hi, 0x1p-48, t[i + j + 1]);
            }
        }
        // Montgomery reduction a limb at a time, m signed: each column gains at
        // most 9 * 2^48 more, so all stay below 2^53.
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const double r = fma(round_div48(t[i]), -0x1p48, t[i]);  // t[i] mod 2^48, in [-2^47, 2^47]
            double hi, m;
            split(r, minus_pinv(), hi, m);  // m = r * (-p^-1) mod 2^48, signed
#pragma unroll
            for (int j = 0; j < 8; j++) {
                double lo;
                split(m, mod(j), hi, lo);
                t[i + j] += lo;
                t[i + j + 1] = fma(hi, 0x1p-48, t[i + j + 1]);
            }
            t[i + 1] = fma(t[i], 0x1p-48, t[i + 1]);  // t[i] is now a multiple of 2^48
        }
        // The quotient is in (-p/2, p); plus p, positive and below 2p. Then
        // limbs in [0, 2^48) by floor carries (the top limb takes the rest).
        fq_f64 out;
#pragma unroll
        for (int k = 0; k < 8; k++) t[8 + k] += mod(k);
#pragma unroll
        for (int k = 8; k < 15; k++) {
            double q = round_div48(t[k]);
            double r = fma(q, -0x1p48, t[k]);
            if (r < 0.0) {
                r += 0x1p48;
                q -= 1.0;
            }
            out.l[k - 8] = r;
            t[k + 1] += q;
        }
        out.l[7] = t[15];
        return out;
    }
};

// BLS12-381 base field Fq (381 bits, 12 limbs) and scalar field Fr (255 bits,
// 8 limbs), in blst's Montgomery representation.
#pragma once
#include "mont.cuh"

// Fq products are called out of line unless FQ_INLINE_MUL (see mont_t::operator*).
#ifndef FQ_INLINE_MUL
#define FQ_INLINE_MUL 0
#endif

struct fq_params {
    static const int N = 12;
    static const bool inline_mul = FQ_INLINE_MUL;
    __device__ __forceinline__ static u32 inv_word() { return 0xfffcfffdu; }
    __device__ __forceinline__ static u32 mod(int i) {
        const u32 v[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u,
                           0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
        return v[i];
    }
    __device__ __forceinline__ static u32 one(int i) {
        const u32 v[12] = {0x0002fffdu, 0x76090000u, 0xc40c0002u, 0xebf4000bu, 0x53c758bau, 0x5f489857u,
                           0x70525745u, 0x77ce5853u, 0xa256ec6du, 0x5c071a97u, 0xfa80e493u, 0x15f65ec3u};
        return v[i];
    }
    // R^3 mod p (mont_t::inverse_divsteps) and the divsteps constants
    __device__ __forceinline__ static u32 r3(int i) {
        const u32 v[12] = {0xd94ca1e0u, 0xed48ac6bu, 0x03a7adf8u, 0x315f831eu, 0x615e29ddu, 0x9a53352au,
                           0x921e1761u, 0x34c04e5eu, 0x65724728u, 0x2512d435u, 0x91755d4du, 0x0aa63460u};
        return v[i];
    }
    typedef fq_safegcd divsteps;
};

// Fr's -p^-1 mod 2^32 (all ones) where ptxas cannot see its value: as an
// immediate, ptxas turns the product by it into a negation and then leaves the
// reduction's products m * p_j as separate low and high multiply-adds instead
// of one wide multiply-add each; read from the constant bank, m costs one
// multiply and every product fuses.
__constant__ u32 fr_inv_word = 0xffffffffu;

struct fr_params {
    static const int N = 8;
    static const bool inline_mul = true;
    __device__ __forceinline__ static u32 inv_word() { return fr_inv_word; }
    __device__ __forceinline__ static u32 mod(int i) {
        const u32 v[8] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                          0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
        return v[i];
    }
    __device__ __forceinline__ static u32 one(int i) {
        const u32 v[8] = {0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau,
                          0xecbc4ff5u, 0x998c4fefu, 0xacc5056fu, 0x1824b159u};
        return v[i];
    }
    __device__ __forceinline__ static u32 r3(int i) {
        const u32 v[8] = {0x439b73afu, 0xc62c1807u, 0x8cf06990u, 0x1b3e0d18u,
                          0xc7b5f418u, 0x73d13c71u, 0xc8db33e9u, 0x6e2a5bb9u};
        return v[i];
    }
    typedef fr_safegcd divsteps;
};

typedef mont_t<fq_params> fq_t;

// The same field with its products inlined (same layout as fq_t): for the one
// kernel where the out-of-line calls' argument moves cost most (the G1 MSM
// accumulation, MSM_G1_ACC_INLINE), without inlining every other kernel.
struct fq_inline_params : fq_params {
    static const bool inline_mul = true;
};
typedef mont_t<fq_inline_params> fq_inline_t;
typedef mont_t<fr_params> fr_t;

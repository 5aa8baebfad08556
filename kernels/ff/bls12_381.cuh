// BLS12-381 base field Fq (381 bits, 12 limbs) and scalar field Fr (255 bits,
// 8 limbs), in blst's Montgomery representation.
#pragma once
#include "mont.cuh"

// Fq products are called out of line unless FQ_INLINE_MUL (see mont_t::operator*).
#ifndef FQ_INLINE_MUL
#define FQ_INLINE_MUL 0
#endif
// Fq products (out of line) by Karatsuba and a separate reduction
// (mont_t::mul_kara_inl) instead of the interleaved CIOS of mul_inl.
#ifndef FQ_MUL_KARATSUBA
#define FQ_MUL_KARATSUBA 0
#endif

struct fq_params {
    static const int N = 12;
    static const bool inline_mul = FQ_INLINE_MUL;
    static const bool karatsuba = FQ_MUL_KARATSUBA;
    static const u32 inv = 0xfffcfffdu;
    __device__ __forceinline__ static u32 mod(int i) {
        const u32 v[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u,
                           0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
        return v[i];
    }
    // p^2, 24 limbs (mont_t::mul_sub_mul)
    __device__ __forceinline__ static u32 mod_sq(int i) {
        const u32 v[24] = {0x1c718e39u, 0x26aa0000u, 0x76382eabu, 0x7ced6b1du, 0x62113cfdu, 0x162c3383u,
                           0x3e71b743u, 0x66bf91edu, 0x7091a049u, 0x292e85a8u, 0x86185c7bu, 0x1d68619cu,
                           0x0978ef01u, 0xf5314933u, 0x16ddca6eu, 0x50a62cfdu, 0x349e8bd0u, 0x66e59e49u,
                           0x0e7046b4u, 0xe2dc90e5u, 0xa22f25e9u, 0x4bd278eau, 0xb8c35fc7u, 0x02a437a4u};
        return v[i];
    }
    __device__ __forceinline__ static u32 one(int i) {
        const u32 v[12] = {0x0002fffdu, 0x76090000u, 0xc40c0002u, 0xebf4000bu, 0x53c758bau, 0x5f489857u,
                           0x70525745u, 0x77ce5853u, 0xa256ec6du, 0x5c071a97u, 0xfa80e493u, 0x15f65ec3u};
        return v[i];
    }
};

struct fr_params {
    static const int N = 8;
    static const bool inline_mul = true;
    static const bool karatsuba = false;
    static const u32 inv = 0xffffffffu;
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
};

typedef mont_t<fq_params> fq_t;
typedef mont_t<fr_params> fr_t;

// BLS12-381 G1 (over Fq) and G2 (over Fq2) point types.
#pragma once
#include "../ff/fp2.cuh"
#include "xyzz.cuh"

typedef affine_t<fq_t> g1_affine_t;
typedef xyzz_t<fq_t> g1_xyzz_t;
typedef jacobian_t<fq_t> g1_jacobian_t;
typedef affine_t<fq_inline_t> g1_affine_inline_t;
typedef xyzz_t<fq_inline_t> g1_xyzz_inline_t;
typedef affine_t<fq2_t> g2_affine_t;
typedef xyzz_t<fq2_t> g2_xyzz_t;
typedef jacobian_t<fq2_t> g2_jacobian_t;

// 16-byte vector load/store of a POD whose size is a multiple of 16.
template <class T>
__device__ __forceinline__ T load16(const T* p) {
    T r;
    const uint4* s = reinterpret_cast<const uint4*>(p);
    uint4* d = reinterpret_cast<uint4*>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = __ldg(s + i);
    return r;
}
template <class T>
__device__ __forceinline__ void store16(T* p, const T& v) {
    uint4* d = reinterpret_cast<uint4*>(p);
    const uint4* s = reinterpret_cast<const uint4*>(&v);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) d[i] = s[i];
}

// A batch-affine variant of the G1 accumulation (msm_accumulate_impl in
// pippenger.cuh): the same chunks of L sorted entries, the same heads and
// bucket writes (so the levels after it are unchanged), but each thread runs K
// chunks side by side as K chains of affine additions, and the K additions of
// one step share one inversion (Montgomery's trick; mont_t::inverse_divsteps).
//
// Per addition: 1 product for the running product of the denominators, 2 to
// take the inverse apart, then lambda, lambda^2 and y3: 6 products against the
// 10 of a mixed XYZZ addition, plus the inversion over K. The chains' state
// (accumulator x, y and the running product: 3 Fq a chain) does not fit in
// registers for K >= 8; where it goes (L1, L2) is what the GPU measures.
//
// Built only with -DMSM_AFFINE_KERNELS=1 (a variant cubin, see
// scripts/cuda/build-ptx.sh --variant), so that the module everyone loads and
// JIT-compiles stays as it is until this is measured; the host launches it
// with CROSSGROTH_CUDA_MSM_AFFINE=<K> (G1 only). scripts/cuda/check_kernels_host.py
// runs it on the host against Python's sums (repeated points, P and -P,
// identity bases, hot buckets).
#pragma once
#include "pippenger.cuh"

// What step j does to chain k.
enum msm_affine_op : u8 {
    MSM_AFF_SKIP = 0,   // no entry left in the chunk, or an identity base
    MSM_AFF_SET = 1,    // the run's first point
    MSM_AFF_ADD = 2,    // acc + P, acc.x != P.x
    MSM_AFF_DBL = 3,    // acc + acc
    MSM_AFF_CLEAR = 4,  // acc + (-acc): the identity
};

template <class A, class X>
__device__ __forceinline__ void msm_affine_flush(const A& acc, bool empty, bool first_run, bool final_level,
                                                 u32 key, X* buckets, X* head) {
    if (first_run && !final_level) {
        store16(head, empty ? X::inf() : X::from_affine(acc));
    } else if (!empty) {
        bucket_add(buckets, key, X::from_affine(acc));
    }
}

// The base of entry e, negated where its sign bit says so.
template <class A>
__device__ __forceinline__ A msm_affine_point(const A* __restrict__ bases, u64 ent) {
    u32 v = (u32)ent;
    A p = load16(bases + (v & 0x7fffffffu));
    if (v & 0x80000000u) p.y = p.y.neg();
    return p;
}

// The operation and its denominator for acc + p.
template <class A, class F>
__device__ __forceinline__ msm_affine_op msm_affine_plan(const A& acc, bool empty, const A& p, F& den) {
    den = F::one();
    if (p.is_inf()) return MSM_AFF_SKIP;
    if (empty) return MSM_AFF_SET;
    if (acc.x == p.x) {
        if (acc.y == p.y) {
            den = acc.y.dbl();  // y != 0: G1 has no point of order 2
            return MSM_AFF_DBL;
        }
        return MSM_AFF_CLEAR;
    }
    den = p.x - acc.x;
    return MSM_AFF_ADD;
}

template <class A, class X, class F, int K>
__device__ __forceinline__ void msm_accumulate_affine_impl(const A* __restrict__ bases,
                                                           const u64* __restrict__ entries,
                                                           const u32* __restrict__ offsets, u32 nb, u32 L,
                                                           X* __restrict__ buckets, X* __restrict__ heads) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 total = offsets[nb];
    const u64 chunk0 = (u64)t * K;
    if (chunk0 * L >= total) return;
    const bool final_level = total <= L;
    A acc[K];
    F prefix[K];
    u32 start[K], len[K], cur[K];
    bool empty[K], first_run[K];
    u8 op[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const u64 s = (chunk0 + k) * L;
        start[k] = s < total ? (u32)s : total;
        len[k] = s < total ? min(L, total - (u32)s) : 0;
        cur[k] = len[k] ? (u32)(entries[start[k]] >> 32) : 0;
        empty[k] = true;
        first_run[k] = true;
    }
    for (u32 j = 0; j < L; j++) {
        // Each chain: its entry, a flush where the bucket changes, and the
        // running product of the denominators.
#pragma unroll
        for (int k = 0; k < K; k++) {
            F den = F::one();
            op[k] = MSM_AFF_SKIP;
            if (j < len[k]) {
                const u64 ent = entries[start[k] + j];
                const u32 key = (u32)(ent >> 32);
                if (key != cur[k]) {
                    msm_affine_flush(acc[k], empty[k], first_run[k], final_level, cur[k], buckets,
                                     heads + chunk0 + k);
                    cur[k] = key;
                    first_run[k] = false;
                    empty[k] = true;
                }
                op[k] = msm_affine_plan(acc[k], empty[k], msm_affine_point(bases, ent), den);
            }
            prefix[k] = k == 0 ? den : prefix[k - 1] * den;
        }
        // One inversion for the K denominators (none is zero), taken apart
        // from the last chain back.
        F inv = prefix[K - 1].inverse_divsteps();
#pragma unroll
        for (int k = K - 1; k >= 0; k--) {
            if (op[k] == MSM_AFF_SKIP) continue;  // its denominator was 1
            const A p = msm_affine_point(bases, entries[start[k] + j]);
            F den;
            msm_affine_plan(acc[k], empty[k], p, den);
            const F inv_k = k > 0 ? inv * prefix[k - 1] : inv;
            inv = inv * den;
            if (op[k] == MSM_AFF_SET) {
                acc[k] = p;
                empty[k] = false;
            } else if (op[k] == MSM_AFF_CLEAR) {
                empty[k] = true;
            } else {
                const F num = op[k] == MSM_AFF_ADD ? p.y - acc[k].y : acc[k].x.sqr().dbl() + acc[k].x.sqr();
                const F lambda = num * inv_k;
                const F x3 = lambda.sqr() - acc[k].x - p.x;
                acc[k].y = lambda * (acc[k].x - x3) - acc[k].y;
                acc[k].x = x3;
            }
        }
    }
#pragma unroll
    for (int k = 0; k < K; k++)
        if (len[k]) msm_affine_flush(acc[k], empty[k], first_run[k], final_level, cur[k], buckets, heads + chunk0 + k);
}

#ifndef MSM_AFFINE_KERNELS
#define MSM_AFFINE_KERNELS 0
#endif
#if MSM_AFFINE_KERNELS
#define MSM_AFFINE_KERNEL(K)                                                                                     \
    extern "C" __global__ void __launch_bounds__(128) g1_msm_accumulate_affine##K(                               \
        const g1_affine_t* bases, const u64* entries, const u32* offsets, u32 nb, u32 L, g1_xyzz_t* buckets,     \
        g1_xyzz_t* heads) {                                                                                      \
        msm_accumulate_affine_impl<g1_affine_t, g1_xyzz_t, fq_t, K>(bases, entries, offsets, nb, L, buckets,      \
                                                                    heads);                                      \
    }
MSM_AFFINE_KERNEL(4)
MSM_AFFINE_KERNEL(8)
MSM_AFFINE_KERNEL(16)
#endif

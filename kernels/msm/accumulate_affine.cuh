// A batch-affine variant of the MSM accumulation (msm_accumulate_impl in
// pippenger.cuh), for G1 and G2: the same chunks of L sorted entries, the same
// heads and bucket writes (so the levels after it are unchanged), but each
// thread runs K chunks side by side as K chains of affine additions, and the K
// additions of one step share one inversion (Montgomery's trick;
// inverse_divsteps).
//
// Per addition: 1 product for the running product of the denominators, 2 to
// take the inverse apart, then lambda, lambda^2 and y3: 6 products against the
// 10 of a mixed XYZZ addition, plus the inversion over K. The chains' state
// (accumulator x, y and the running product: 3 field elements a chain) does not
// fit in registers for K >= 8; where it goes (local or shared memory) is what
// the GPU measures.
//
// Built only with -DMSM_AFFINE_KERNELS=1 (a variant cubin:
// scripts/device/build-variants.sh), so that the module everyone loads and
// JIT-compiles stays as it is until this is measured; the host launches it
// with CROSSGROTH_CUDA_MSM_AFFINE=<K> (G2 where its K is built).
// scripts/cuda/check_kernels_host.py runs it on the host against Python's sums
// (repeated points, P and -P, identity bases, hot buckets) and inside whole G1
// MSMs.
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
            den = acc.y.dbl();  // y != 0: no point of order 2 in G1 or G2
            return MSM_AFF_DBL;
        }
        return MSM_AFF_CLEAR;
    }
    den = p.x - acc.x;
    return MSM_AFF_ADD;
}

// Where the chains' accumulators and running products live: in the thread's
// own arrays (registers as far as they go, then local memory), or in shared
// memory, limb-major so that the lanes of a warp read consecutive words.
template <class A, class F, int K>
struct affine_chains_local {
    A acc[K];
    F prefix[K];
    __device__ __forceinline__ A get_acc(int k) const { return acc[k]; }
    __device__ __forceinline__ void set_acc(int k, const A& a) { acc[k] = a; }
    __device__ __forceinline__ F get_prefix(int k) const { return prefix[k]; }
    __device__ __forceinline__ void set_prefix(int k, const F& f) { prefix[k] = f; }
};
template <class A, class F, int K, int B>
struct affine_chains_shared {
    static const int W = sizeof(F) / 4;  // words of one field element (Fq 12, Fq2 24)
    u32* s;                              // K * 3 * W * B words: chain k's x, y, prefix
    __device__ __forceinline__ F get(int k, int which) const {
        F r;
        u32* rw = reinterpret_cast<u32*>(&r);
#pragma unroll
        for (int w = 0; w < W; w++) rw[w] = s[((k * 3 + which) * W + w) * B + threadIdx.x % B];
        return r;
    }
    __device__ __forceinline__ void put(int k, int which, const F& f) {
        const u32* fw = reinterpret_cast<const u32*>(&f);
#pragma unroll
        for (int w = 0; w < W; w++) s[((k * 3 + which) * W + w) * B + threadIdx.x % B] = fw[w];
    }
    __device__ __forceinline__ A get_acc(int k) const {
        A a;
        a.x = get(k, 0);
        a.y = get(k, 1);
        return a;
    }
    __device__ __forceinline__ void set_acc(int k, const A& a) {
        put(k, 0, a.x);
        put(k, 1, a.y);
    }
    __device__ __forceinline__ F get_prefix(int k) const { return get(k, 2); }
    __device__ __forceinline__ void set_prefix(int k, const F& f) { put(k, 2, f); }
};

template <class A, class X, class F, int K, class S>
__device__ __forceinline__ void msm_accumulate_affine_impl(const A* __restrict__ bases,
                                                           const u64* __restrict__ entries,
                                                           const u32* __restrict__ offsets, u32 nb, u32 L,
                                                           X* __restrict__ buckets, X* __restrict__ heads, S& st) {
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 total = offsets[nb];
    const u64 chunk0 = (u64)t * K;
    if (chunk0 * L >= total) return;
    const bool final_level = total <= L;
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
        A zero;
        zero.x = F::zero();
        zero.y = F::zero();
        st.set_acc(k, zero);  // read (and ignored) while the chain is empty
    }
    for (u32 j = 0; j < L; j++) {
        // Each chain: its entry, a flush where the bucket changes, and the
        // running product of the denominators.
        F prefix = F::one();
#pragma unroll
        for (int k = 0; k < K; k++) {
            F den = F::one();
            op[k] = MSM_AFF_SKIP;
            if (j < len[k]) {
                const u64 ent = entries[start[k] + j];
                const u32 key = (u32)(ent >> 32);
                const A acc = st.get_acc(k);
                if (key != cur[k]) {
                    msm_affine_flush(acc, empty[k], first_run[k], final_level, cur[k], buckets, heads + chunk0 + k);
                    cur[k] = key;
                    first_run[k] = false;
                    empty[k] = true;
                }
                op[k] = msm_affine_plan(acc, empty[k], msm_affine_point(bases, ent), den);
            }
            prefix = k == 0 ? den : prefix * den;
            st.set_prefix(k, prefix);
        }
        // One inversion for the K denominators (none is zero), taken apart
        // from the last chain back.
        F inv = prefix.inverse_divsteps();
#pragma unroll
        for (int k = K - 1; k >= 0; k--) {
            if (op[k] == MSM_AFF_SKIP) continue;  // its denominator was 1
            // The point and denominator again rather than kept from the first
            // loop: K more points of state would not stay on chip.
            const A p = msm_affine_point(bases, entries[start[k] + j]);
            A acc = st.get_acc(k);
            F den;
            msm_affine_plan(acc, empty[k], p, den);
            const F inv_k = k > 0 ? inv * st.get_prefix(k - 1) : inv;
            inv = inv * den;
            if (op[k] == MSM_AFF_SET) {
                st.set_acc(k, p);
                empty[k] = false;
            } else if (op[k] == MSM_AFF_CLEAR) {
                empty[k] = true;
            } else {
                const F num = op[k] == MSM_AFF_ADD ? p.y - acc.y : acc.x.sqr().dbl() + acc.x.sqr();
                const F lambda = num * inv_k;
                const F x3 = lambda.sqr() - acc.x - p.x;
                acc.y = lambda * (acc.x - x3) - acc.y;
                acc.x = x3;
                st.set_acc(k, acc);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < K; k++)
        if (len[k])
            msm_affine_flush(st.get_acc(k), empty[k], first_run[k], final_level, cur[k], buckets, heads + chunk0 + k);
}

// The thread's own arrays (launch with blocks of 128).
template <class A, class X, class F, int K>
__device__ __forceinline__ void msm_accumulate_affine_local(const A* bases, const u64* entries, const u32* offsets,
                                                            u32 nb, u32 L, X* buckets, X* heads) {
    affine_chains_local<A, F, K> st;
    msm_accumulate_affine_impl<A, X, F, K>(bases, entries, offsets, nb, L, buckets, heads, st);
}

// Shared memory for blocks of B threads: K * 3 * 12 * B words (K = 8, B = 32:
// 36 KB, six blocks an SM).
template <class A, class X, class F, int K, int B>
__device__ __forceinline__ void msm_accumulate_affine_shared(const A* bases, const u64* entries, const u32* offsets,
                                                             u32 nb, u32 L, X* buckets, X* heads) {
    __shared__ u32 words[K * 3 * (sizeof(F) / 4) * B];
    affine_chains_shared<A, F, K, B> st{words};
    msm_accumulate_affine_impl<A, X, F, K>(bases, entries, offsets, nb, L, buckets, heads, st);
}

#ifndef MSM_AFFINE_KERNELS
#define MSM_AFFINE_KERNELS 0
#endif
#if MSM_AFFINE_KERNELS
// g1_msm_accumulate_affine<K>: the chains' state in the thread's arrays, blocks
// of 128; g1_msm_accumulate_affine_s<K>: in shared memory, blocks of
// MSM_AFFINE_SHARED_BLOCK (32).
#define MSM_AFFINE_SHARED_BLOCK 32
#define MSM_AFFINE_KERNEL(G, F, K)                                                                               \
    extern "C" __global__ void __launch_bounds__(128) G##_msm_accumulate_affine##K(                              \
        const G##_affine_t* bases, const u64* entries, const u32* offsets, u32 nb, u32 L, G##_xyzz_t* buckets,   \
        G##_xyzz_t* heads) {                                                                                     \
        msm_accumulate_affine_local<G##_affine_t, G##_xyzz_t, F, K>(bases, entries, offsets, nb, L, buckets,      \
                                                                    heads);                                      \
    }
#define MSM_AFFINE_SHARED_KERNEL(G, F, K)                                                                        \
    extern "C" __global__ void __launch_bounds__(MSM_AFFINE_SHARED_BLOCK) G##_msm_accumulate_affine_s##K(         \
        const G##_affine_t* bases, const u64* entries, const u32* offsets, u32 nb, u32 L, G##_xyzz_t* buckets,   \
        G##_xyzz_t* heads) {                                                                                     \
        msm_accumulate_affine_shared<G##_affine_t, G##_xyzz_t, F, K, MSM_AFFINE_SHARED_BLOCK>(                    \
            bases, entries, offsets, nb, L, buckets, heads);                                                     \
    }
MSM_AFFINE_KERNEL(g1, fq_t, 4)
MSM_AFFINE_KERNEL(g1, fq_t, 8)
MSM_AFFINE_KERNEL(g1, fq_t, 16)
// 16 chains would need 72 KB: past the 48 KB of static shared memory
MSM_AFFINE_SHARED_KERNEL(g1, fq_t, 4)
MSM_AFFINE_SHARED_KERNEL(g1, fq_t, 8)
// G2: an addition is 6 Fq2 products (18 Fq) against 30 in XYZZ, the state twice
// G1's (shared memory: 4 chains, 36 KB)
MSM_AFFINE_KERNEL(g2, fq2_t, 4)
MSM_AFFINE_KERNEL(g2, fq2_t, 8)
MSM_AFFINE_SHARED_KERNEL(g2, fq2_t, 4)
#endif

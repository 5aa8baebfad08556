// Pippenger multi-scalar multiplication, generic over the point type.
//
// Pass structure (host drives, one stream):
//   1. msm_prepare   per scalar: density -> base index, Montgomery -> canonical,
//                    scalars 0 (dropped) and 1 (flagged for a plain sum) taken
//                    out, signed c-bit window digits counted per bucket.
//   2. msm_scan      exclusive scan of the bucket counts (one block).
//   3. msm_scatter   counting sort: (bucket key, base index | sign) pairs laid
//                    out grouped by bucket.
//   4. msm_accumulate  the sorted list is cut into equal chunks of L entries, one
//                    per thread, so every thread does the same number of mixed
//                    additions whatever the bucket sizes; runs wholly inside a
//                    chunk are written to their bucket, runs that touch a chunk
//                    edge go to head/tail partials.
//   5. msm_fixup     per bucket: sum its head/tail partials (or mark it empty).
//   6. msm_bucket_reduce  per window segment of S buckets: sum_k k * B_k by
//                    running sums, plus lo * (segment sum).
//   7. msm_sum_groups  (repeated) per window: sum the segment results.
//   8. msm_ones      plain sum of the bases whose scalar is 1 (then 7 again).
//   9. msm_to_jacobian  window sums and the ones sum as Jacobian points; the
//                    host combines the windows (Horner, c doublings each).
#pragma once
#include "../ec/curves.cuh"

#define MSM_NONE 0xffffffffu
#define MSM_ONE_FLAG 0x80000000u

__device__ __forceinline__ u32 fr_limb(const fr_t& s, int idx) {
    u32 r = 0;
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (j == idx) r = s.l[j];
    return r;
}

// c-bit field of a canonical scalar starting at bit off.
__device__ __forceinline__ u32 scalar_bits(const fr_t& s, u32 off, u32 c) {
    int limb = off >> 5, sh = off & 31;
    u32 v = fr_limb(s, limb) >> sh;
    if (sh + c > 32) v |= fr_limb(s, limb + 1) << (32 - sh);
    return v & ((1u << c) - 1);
}

__device__ __forceinline__ bool fr_is_canonical_one(const fr_t& s) {
    u32 acc = s.l[0] ^ 1u;
#pragma unroll
    for (int j = 1; j < 8; j++) acc |= s.l[j];
    return acc == 0;
}

// Signed digit of window w, given the carry from the window below.
// Returns d in [-(2^(c-1) - 1), 2^(c-1)].
__device__ __forceinline__ int next_digit(const fr_t& s, u32 w, u32 c, u32& carry) {
    u32 v = scalar_bits(s, w * c, c) + carry;
    u32 half = 1u << (c - 1);
    if (v > half) { carry = 1; return (int)v - (int)(1u << c); }
    carry = 0;
    return (int)v;
}

extern "C" __global__ void msm_prepare(const fr_t* __restrict__ scalars, u32 n, const u64* __restrict__ density,
                                       const u32* __restrict__ dens_prefix, u32 c, u32 nwin,
                                       fr_t* __restrict__ canon, u32* __restrict__ bidx, u32* __restrict__ counts) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u32 b = i;
    if (density) {
        u64 word = density[i >> 6];
        u32 bit = i & 63;
        if (!((word >> bit) & 1ull)) { bidx[i] = MSM_NONE; return; }
        b = dens_prefix[i >> 6] + (u32)__popcll(word & ((1ull << bit) - 1ull));
    }
    fr_t s = load16(scalars + i).from_mont();
    if (s.is_zero()) { bidx[i] = MSM_NONE; return; }
    if (fr_is_canonical_one(s)) { bidx[i] = b | MSM_ONE_FLAG; return; }
    bidx[i] = b;
    store16(canon + i, s);
    u32 K = 1u << (c - 1);
    u32 carry = 0;
    for (u32 w = 0; w < nwin; w++) {
        int d = next_digit(s, w, c, carry);
        if (d != 0) atomicAdd(&counts[w * K + (u32)(d < 0 ? -d : d) - 1], 1u);
    }
}

extern "C" __global__ void msm_scatter(const fr_t* __restrict__ canon, const u32* __restrict__ bidx, u32 n, u32 c,
                                       u32 nwin, u32* __restrict__ cursor, u32* __restrict__ keys,
                                       u32* __restrict__ vals) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u32 b = bidx[i];
    if (b & MSM_ONE_FLAG) return;  // excluded, zero or one
    fr_t s = load16(canon + i);
    u32 K = 1u << (c - 1);
    u32 carry = 0;
    for (u32 w = 0; w < nwin; w++) {
        int d = next_digit(s, w, c, carry);
        if (d != 0) {
            u32 key = w * K + (u32)(d < 0 ? -d : d) - 1;
            u32 pos = atomicAdd(&cursor[key], 1u);
            keys[pos] = key;
            vals[pos] = b | (d < 0 ? MSM_ONE_FLAG : 0u);  // top bit: negate
        }
    }
}

// Exclusive scan of counts[0..nb) into offsets[0..nb] (offsets[nb] = total) and a
// copy into cursor. One block of 1024 threads.
extern "C" __global__ void msm_scan(const u32* __restrict__ counts, u32 nb, u32* __restrict__ offsets,
                                    u32* __restrict__ cursor) {
    __shared__ u32 sums[1024];
    u32 t = threadIdx.x;
    u32 per = (nb + 1023) / 1024;
    u32 lo = t * per, hi = min(lo + per, nb);
    u32 s = 0;
    for (u32 i = lo; i < hi; i++) s += counts[i];
    sums[t] = s;
    __syncthreads();
    for (u32 off = 1; off < 1024; off <<= 1) {
        u32 v = t >= off ? sums[t - off] : 0;
        __syncthreads();
        sums[t] += v;
        __syncthreads();
    }
    u32 run = sums[t] - s;  // exclusive
    for (u32 i = lo; i < hi; i++) {
        offsets[i] = run;
        cursor[i] = run;
        run += counts[i];
    }
    if (t == 1023) offsets[nb] = sums[1023];
}

template <class A, class X>
__device__ __forceinline__ void msm_accumulate_impl(const A* __restrict__ bases, const u32* __restrict__ keys,
                                                    const u32* __restrict__ vals, const u32* __restrict__ offsets,
                                                    u32 nb, u32 L, X* __restrict__ buckets, X* __restrict__ heads,
                                                    X* __restrict__ tails) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 total = offsets[nb];
    u64 start64 = (u64)t * L;
    if (start64 >= total) return;
    u32 start = (u32)start64;
    u32 end = min(start + L, total);
    u32 cur = keys[start];
    u32 run_start = start;
    X acc = X::inf();
    for (u32 e = start; e < end; e++) {
        u32 k = keys[e];
        if (k != cur) {
            if (run_start == start) store16(heads + t, acc);
            else store16(buckets + cur, acc);
            cur = k;
            run_start = e;
            acc = X::inf();
        }
        u32 v = vals[e];
        A p = load16(bases + (v & 0x7fffffffu));
        if (v & 0x80000000u) p.y = p.y.neg();
        acc.add_affine(p);
    }
    if (run_start == start) store16(heads + t, acc);
    else store16(tails + t, acc);
}

template <class X>
__device__ __forceinline__ void msm_fixup_impl(const u32* __restrict__ offsets, u32 nb, u32 L,
                                               X* __restrict__ buckets, const X* __restrict__ heads,
                                               const X* __restrict__ tails) {
    u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    u32 s = offsets[b], e = offsets[b + 1];
    u32 total = offsets[nb];
    if (s == e) { store16(buckets + b, X::inf()); return; }
    u32 cs = s / L, ce = (e - 1) / L;
    u32 chunk_end = min(cs * L + L, total);
    bool starts_chunk = (s == cs * L);
    if (cs == ce && !starts_chunk && e != chunk_end) return;  // interior run: already written
    X acc = starts_chunk ? load16(heads + cs) : load16(tails + cs);
    for (u32 ch = cs + 1; ch <= ce; ch++) acc.add(load16(heads + ch));
    store16(buckets + b, acc);
}

// Segment of S buckets of window w: sum_{j} (j + 1) * B_j over j in [lo, lo + S).
template <class X>
__device__ __forceinline__ void msm_bucket_reduce_impl(const X* __restrict__ buckets, u32 K, u32 nwin, u32 S,
                                                       X* __restrict__ seg_out) {
    u32 nseg = K / S;
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nseg * nwin) return;
    u32 w = t / nseg, seg = t % nseg;
    u32 lo = seg * S;
    const X* bk = buckets + (u64)w * K;
    X run = X::inf(), sum = X::inf();
    for (u32 j = lo + S; j-- > lo;) {
        run.add(load16(bk + j));
        sum.add(run);
    }
    // sum now = sum_j (j - lo + 1) B_j; add lo * run.
    if (lo) {
        X m = X::inf();
        int top = 31 - __clz(lo);
        for (int bit = top; bit >= 0; bit--) {
            m.dbl();
            if ((lo >> bit) & 1u) m.add(run);
        }
        sum.add(m);
    }
    store16(seg_out + t, sum);
}

// out[g * len2 + t] = sum of in[g * len + i] for i in [t F, min(t F + F, len)).
template <class X>
__device__ __forceinline__ void msm_sum_groups_impl(const X* __restrict__ in, u32 groups, u32 len, u32 F,
                                                    X* __restrict__ out, u32 len2) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= groups * len2) return;
    u32 g = t / len2, k = t % len2;
    u32 lo = k * F, hi = min(lo + F, len);
    X acc = X::inf();
    for (u32 i = lo; i < hi; i++) acc.add(load16(in + (u64)g * len + i));
    store16(out + t, acc);
}

// Partial sums of the bases whose scalar is 1, F scalars per thread.
template <class A, class X>
__device__ __forceinline__ void msm_ones_impl(const A* __restrict__ bases, const u32* __restrict__ bidx, u32 n,
                                              u32 F, X* __restrict__ out, u32 T) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) return;
    u32 lo = t * F, hi = min(lo + F, n);
    X acc = X::inf();
    for (u32 i = lo; i < hi; i++) {
        u32 b = bidx[i];
        if (b != MSM_NONE && (b & MSM_ONE_FLAG)) acc.add_affine(load16(bases + (b & 0x7fffffffu)));
    }
    store16(out + t, acc);
}

template <class X, class J>
__device__ __forceinline__ void msm_to_jacobian_impl(const X* __restrict__ in, u32 n, J* __restrict__ out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    J j = load16(in + t).to_jacobian();
    out[t] = j;
}

#define MSM_INSTANTIATE(G)                                                                                        \
    extern "C" __global__ void G##_msm_accumulate(const G##_hot_affine_t* bases, const u32* keys,                 \
                                                  const u32* vals, const u32* offsets, u32 nb, u32 L,             \
                                                  G##_hot_xyzz_t* buckets, G##_hot_xyzz_t* heads,                 \
                                                  G##_hot_xyzz_t* tails) {                                        \
        msm_accumulate_impl(bases, keys, vals, offsets, nb, L, buckets, heads, tails);                            \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_fixup(const u32* offsets, u32 nb, u32 L, G##_xyzz_t* buckets,              \
                                             const G##_xyzz_t* heads, const G##_xyzz_t* tails) {                  \
        msm_fixup_impl(offsets, nb, L, buckets, heads, tails);                                                    \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_bucket_reduce(const G##_xyzz_t* buckets, u32 K, u32 nwin, u32 S,           \
                                                     G##_xyzz_t* seg_out) {                                       \
        msm_bucket_reduce_impl(buckets, K, nwin, S, seg_out);                                                     \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_sum_groups(const G##_xyzz_t* in, u32 groups, u32 len, u32 F,              \
                                                  G##_xyzz_t* out, u32 len2) {                                    \
        msm_sum_groups_impl(in, groups, len, F, out, len2);                                                       \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_ones(const G##_affine_t* bases, const u32* bidx, u32 n, u32 F,             \
                                            G##_xyzz_t* out, u32 T) {                                             \
        msm_ones_impl(bases, bidx, n, F, out, T);                                                                 \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_to_jacobian(const G##_xyzz_t* in, u32 n, G##_jacobian_t* out) {            \
        msm_to_jacobian_impl(in, n, out);                                                                         \
    }

MSM_INSTANTIATE(g1)
MSM_INSTANTIATE(g2)

// Radix-2 NTT over Fr (blst Montgomery form) and the Groth16 H computation's
// element-wise steps.
//
// Forward transform: bit-reversal permutation, then log n butterfly stages
// (decimation in time); natural-order output. The twiddle table holds
// omega^j for j < n/2. The first stages (blocks of up to 2^NTT_SHARED_LOG
// elements) run in shared memory in one launch.
#pragma once
#include "../ff/bls12_381.cuh"

#define NTT_SHARED_LOG 9

extern "C" __global__ void ntt_bitrev(fr_t* a, u32 log_n) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    u32 n = 1u << log_n;
    if (i >= n || log_n == 0) return;
    u32 j = __brev(i) >> (32 - log_n);
    if (i < j) {
        fr_t x = a[i], y = a[j];
        a[i] = y;
        a[j] = x;
    }
}

// tw[j] = lo[j & mask] * hi[j >> lo_bits] for j < count.
extern "C" __global__ void ntt_twiddles(fr_t* tw, const fr_t* lo, const fr_t* hi, u32 lo_bits, u32 count) {
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    tw[j] = lo[j & ((1u << lo_bits) - 1)] * hi[j >> lo_bits];
}

// One radix-2 stage with half-size m = 2^s, n/2 threads.
extern "C" __global__ void ntt_stage(fr_t* a, const fr_t* __restrict__ tw, u32 log_n, u32 s) {
    u32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= (1u << (log_n - 1))) return;
    u32 m = 1u << s;
    u32 j = k & (m - 1);
    u32 i0 = ((k >> s) << (s + 1)) + j;
    u32 i1 = i0 + m;
    fr_t w = tw[j << (log_n - 1 - s)];
    fr_t u = a[i0];
    fr_t v = a[i1] * w;
    a[i0] = u + v;
    a[i1] = u - v;
}

// Stages 0 .. nst-1 (nst <= NTT_SHARED_LOG) on blocks of 2^nst elements in
// shared memory; blockDim.x = 2^(nst-1).
extern "C" __global__ void ntt_stages_shared(fr_t* a, const fr_t* __restrict__ tw, u32 log_n, u32 nst) {
    __shared__ fr_t sh[1 << NTT_SHARED_LOG];
    u32 half = 1u << (nst - 1);
    u32 base = blockIdx.x << nst;
    u32 t = threadIdx.x;
    sh[t] = a[base + t];
    sh[t + half] = a[base + t + half];
    __syncthreads();
    for (u32 s = 0; s < nst; s++) {
        u32 m = 1u << s;
        u32 j = t & (m - 1);
        u32 i0 = ((t >> s) << (s + 1)) + j;
        u32 i1 = i0 + m;
        fr_t w = tw[j << (log_n - 1 - s)];
        fr_t u = sh[i0];
        fr_t v = sh[i1] * w;
        sh[i0] = u + v;
        sh[i1] = u - v;
        __syncthreads();
    }
    a[base + t] = sh[t];
    a[base + t + half] = sh[t + half];
}

// Stages s0 .. s0+nst-1 (any s0 >= g) in shared memory. These stages pair
// elements whose indices differ only in bits s0 .. s0+nst-1, so the array splits
// into independent groups of 2^nst elements with stride 2^s0. A block takes 2^g
// groups with consecutive low bits (so global loads come in runs of 2^g
// contiguous elements): 2^(g+nst) <= 2^NTT_STRIDED_LOG elements,
// blockDim.x = 2^(g+nst-1).
#define NTT_STRIDED_LOG 10
extern "C" __global__ void ntt_stages_strided(fr_t* a, const fr_t* __restrict__ tw, u32 log_n, u32 s0, u32 nst,
                                              u32 g) {
    __shared__ fr_t sh[1 << NTT_STRIDED_LOG];
    u32 E = 1u << (g + nst);
    u32 half = E >> 1;
    u32 t = threadIdx.x;
    u32 bid = blockIdx.x;
    u32 low_groups = (1u << s0) >> g;  // blocks along the low bits
    u32 low_base = (bid & (low_groups - 1)) << g;
    u32 high = (bid >> (s0 - g)) << (s0 + nst);
    u32 gmask = (1u << g) - 1;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        u32 e = t + h * half;
        u32 idx = low_base + (e & gmask) + ((e >> g) << s0) + high;
        sh[e] = a[idx];
    }
    __syncthreads();
    u32 lo = t & gmask;
    u32 jp = t >> g;
    for (u32 r = 0; r < nst; r++) {
        u32 mloc = 1u << r;
        u32 jj = jp & (mloc - 1);
        u32 j0 = ((jp >> r) << (r + 1)) + jj;
        u32 e0 = (j0 << g) | lo, e1 = ((j0 + mloc) << g) | lo;
        u32 jglob = low_base + lo + (jj << s0);
        fr_t w = tw[jglob << (log_n - 1 - (s0 + r))];
        fr_t u = sh[e0];
        fr_t v = sh[e1] * w;
        sh[e0] = u + v;
        sh[e1] = u - v;
        __syncthreads();
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        u32 e = t + h * half;
        u32 idx = low_base + (e & gmask) + ((e >> g) << s0) + high;
        a[idx] = sh[e];
    }
}

// a[i] *= c
extern "C" __global__ void fr_scale(fr_t* a, u32 n, fr_t c) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    a[i] = a[i] * c;
}

// a[i] *= c * g^i, with g^i = lo[i & mask] * hi[i >> lo_bits].
extern "C" __global__ void fr_scale_powers(fr_t* a, u32 n, fr_t c, const fr_t* __restrict__ lo,
                                           const fr_t* __restrict__ hi, u32 lo_bits) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t gi = lo[i & ((1u << lo_bits) - 1)] * hi[i >> lo_bits];
    a[i] = a[i] * (c * gi);
}

// a[i] = (a[i] * b[i] - c[i]) * z
extern "C" __global__ void h_combine(fr_t* a, const fr_t* __restrict__ b, const fr_t* __restrict__ c, u32 n,
                                     fr_t z) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    a[i] = (a[i] * b[i] - c[i]) * z;
}

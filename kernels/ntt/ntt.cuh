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

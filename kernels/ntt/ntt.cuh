// NTT over Fr (blst Montgomery form) and the Groth16 H computation's
// element-wise step.
//
// Forward transform, radix-2 decimation in time: the input is read in
// bit-reversed order and the output comes out in natural order. The log n
// stages run in passes of up to 9 stages; one pass loads a block of 2^(g+k)
// elements into shared memory, runs its k stages there and writes them back,
// so a 2^24 transform is three passes over device memory.
//
// The first pass reads the input through the bit-reversal permutation (out of
// place: no separate permutation pass) and the last pass can scale its output
// (by a constant, or by c·g^i for a coset), so a whole transform, n^-1 and
// coset factors included, is exactly its passes.
//
// Twiddles: tw[j] = omega^j for j < n/2 (omega^-1 for the inverse transform).
#pragma once
#include "../ff/bls12_381.cuh"

// Elements per block, at most: 2^NTT_BLOCK_LOG (32 KiB of shared memory).
#define NTT_BLOCK_LOG 10

// tw[j] = lo[j & mask] * hi[j >> lo_bits] for j < count.
extern "C" __global__ void ntt_twiddles(fr_t* tw, const fr_t* lo, const fr_t* hi, u32 lo_bits, u32 count) {
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    tw[j] = lo[j & ((1u << lo_bits) - 1)] * hi[j >> lo_bits];
}

__device__ __forceinline__ u32 bitrev_bits(u32 x, u32 bits) { return bits == 0 ? 0 : __brev(x) >> (32 - bits); }

// One pass: stages s0 .. s0+k-1 of a 2^log_n transform. These stages combine
// positions that differ only in bits s0 .. s0+k-1, so the positions split into
// groups of 2^k (stride 2^s0). A block takes 2^g groups: in later passes the
// groups with consecutive low bits (so that device memory is read in runs of
// 2^g elements); in the first pass (first = 1, s0 = 0) the groups whose
// bit-reversed input indices are consecutive (same reason, for the gather).
//
// Shared element e = (jpos << g) | lo: group lo of the block, position jpos in
// the group. Each thread runs butterflies t, t + blockDim.x, ... of a stage.
//
// scale: 0 none; 1 multiply the output at position p by c; 2 by
// slo[p & (2^sbits - 1)] * shi[p >> sbits] (c is then folded into slo).
// in and out may be the same buffer (later passes): a block reads all its
// elements before writing any, and no two blocks share an element.
template <bool RADIX4, int U>
__device__ __forceinline__ void ntt_pass_body(const fr_t* in, fr_t* out, const fr_t* __restrict__ tw, u32 log_n,
                                              u32 s0, u32 k, u32 g, u32 first, u32 scale, fr_t c,
                                              const fr_t* __restrict__ slo, const fr_t* __restrict__ shi, u32 sbits) {
    __shared__ fr_t sh[1 << NTT_BLOCK_LOG];
    const u32 E = 1u << (g + k);
    const u32 gmask = (1u << g) - 1;
    const u32 kmask = (1u << k) - 1;
    const u32 b = blockIdx.x;
    const u32 t = threadIdx.x;
    // Later passes: the block's low bits and high bits.
    const u32 low_base = first ? 0 : (b & ((1u << (s0 - g)) - 1)) << g;
    const u32 high = first ? 0 : (b >> (s0 - g)) << (s0 + k);

    for (u32 e = t; e < E; e += blockDim.x) {
        const u32 lo = e & gmask, jpos = e >> g;
        u32 src;
        if (first) {
            // position p = q * 2^k + jpos with q = bitrev(b * 2^g + lo); its
            // input index is bitrev(p) = bitrev_k(jpos) << (log_n - k) | (b * 2^g + lo).
            src = (bitrev_bits(jpos, k) << (log_n - k)) | ((b << g) | lo);
        } else {
            src = high | (jpos << s0) | (low_base + lo);
        }
        sh[e] = in[src];
    }
    __syncthreads();

    u32 r = 0;
    if (RADIX4) {
        // Two stages per round: each thread takes quads of positions
        // j0, j0 + m, j0 + 2m, j0 + 3m (m = 2^r) through stages r and r + 1 in
        // registers; half the barriers, three twiddles per four products.
        const u32 quarter = E >> 2;
        for (; r + 1 < k; r += 2) {
            const u32 mloc = 1u << r;
            const u32 tw_shift = log_n - 1 - (s0 + r);
            for (u32 qt = t; qt < quarter; qt += blockDim.x) {
                const u32 lo = qt & gmask, q = qt >> g;
                const u32 jj = q & (mloc - 1);
                const u32 j0 = ((q >> r) << (r + 2)) + jj;
                const u32 e0 = (j0 << g) | lo, step = mloc << g;
                const u32 jglob = first ? jj : (low_base + lo + (jj << s0));
                const u32 jglob_m = first ? (jj + mloc) : (jglob + (mloc << s0));
                fr_t x0 = sh[e0], x1 = sh[e0 + step], x2 = sh[e0 + 2 * step], x3 = sh[e0 + 3 * step];
                if (!(first && r == 0)) {
                    const fr_t w = tw[jglob << tw_shift];
                    x1 = x1 * w;
                    x3 = x3 * w;
                }
                fr_t y0 = x0 + x1, y1 = x0 - x1, y2 = x2 + x3, y3 = x2 - x3;
                const fr_t wa = tw[jglob << (tw_shift - 1)];
                const fr_t wb = tw[jglob_m << (tw_shift - 1)];
                y2 = y2 * wa;
                y3 = y3 * wb;
                sh[e0] = y0 + y2;
                sh[e0 + 2 * step] = y0 - y2;
                sh[e0 + step] = y1 + y3;
                sh[e0 + 3 * step] = y1 - y3;
            }
            __syncthreads();
        }
    }
    const u32 half = E >> 1;
    for (; r < k; r++) {
        const u32 mloc = 1u << r;
        const u32 tw_shift = log_n - 1 - (s0 + r);
        // U butterflies per thread at a time: loads, then U independent
        // products, then stores, so the products' carry chains overlap.
        for (u32 base = t; base < half; base += blockDim.x * U) {
            fr_t u[U], v[U];
            u32 e0[U], e1[U];
#pragma unroll
            for (int x = 0; x < U; x++) {
                const u32 bt = min(base + x * blockDim.x, half - 1);  // duplicates are harmless, see below
                const u32 lo = bt & gmask, jp = bt >> g;
                const u32 jj = jp & (mloc - 1);
                const u32 j0 = ((jp >> r) << (r + 1)) + jj;
                e0[x] = (j0 << g) | lo;
                e1[x] = ((j0 + mloc) << g) | lo;
                u[x] = sh[e0[x]];
                v[x] = sh[e1[x]];
                if (!(first && r == 0)) {  // stage 0's twiddles are all 1
                    const u32 jglob = first ? jj : (low_base + lo + (jj << s0));
                    v[x] = v[x] * tw[jglob << tw_shift];
                }
            }
#pragma unroll
            for (int x = 0; x < U; x++) {
                if (base + x * blockDim.x < half) {  // a clamped duplicate writes nothing
                    sh[e0[x]] = u[x] + v[x];
                    sh[e1[x]] = u[x] - v[x];
                }
            }
        }
        __syncthreads();
    }

    for (u32 i = t; i < E; i += blockDim.x) {
        u32 e, p;
        if (first) {
            // write in runs along jpos (consecutive output positions)
            const u32 jpos = i & kmask, lo = i >> k;
            e = (jpos << g) | lo;
            p = (bitrev_bits((b << g) | lo, log_n - k) << k) | jpos;
        } else {
            const u32 lo = i & gmask, jpos = i >> g;
            e = i;
            p = high | (jpos << s0) | (low_base + lo);
        }
        fr_t v = sh[e];
        if (scale == 1) {
            v = v * c;
        } else if (scale == 2) {
            v = v * (slo[p & ((1u << sbits) - 1)] * shi[p >> sbits]);
        }
        out[p] = v;
    }
}

#define NTT_PASS_ARGS                                                                                      \
    const fr_t *in, fr_t *out, const fr_t *__restrict__ tw, u32 log_n, u32 s0, u32 k, u32 g, u32 first, u32 scale, \
        fr_t c, const fr_t *__restrict__ slo, const fr_t *__restrict__ shi, u32 sbits

// Radix-4 rounds: two stages per barrier (blockDim.x up to 2^(g+k-2)).
extern "C" __global__ void __launch_bounds__(256) ntt_pass4(NTT_PASS_ARGS) {
    ntt_pass_body<true, 1>(in, out, tw, log_n, s0, k, g, first, scale, c, slo, shi, sbits);
}

// a[i] = (a[i] * b[i] - c[i]) * z
extern "C" __global__ void h_combine(fr_t* a, const fr_t* __restrict__ b, const fr_t* __restrict__ c, u32 n,
                                     fr_t z) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    a[i] = (a[i] * b[i] - c[i]) * z;
}

// Kernels over field elements alone.
#pragma once
#include "bls12_381.cuh"

// values[i] = 1 / values[i] in Fq (Montgomery form; zero stays zero), by
// divsteps (method 1, mont_t::inverse_divsteps) or Fermat (method 0,
// mont_t::inverse). For tests, and to time the two against each other (H200,
// 2026-12-01: 2^20 of them 1.99 ms by divsteps, 21.75 ms by Fermat).
extern "C" __global__ void fq_inverse_batch(fq_t* values, u32 n, u32 method) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fq_t v = values[i];
    values[i] = method ? v.inverse_divsteps() : v.inverse();
}

// One limb product of a Montgomery product on 48-bit limbs held in doubles (the
// FP64 pipe's share of an Fq product, as a probe): a * b < 2^96 split by two
// FMAs into its high part, a multiple of 2^48 rounded to nearest, and the exact
// remainder a * b - high in [-2^47, 2^47], each added into a column sum (exact
// while the columns stay below 2^101 and 2^53).
__device__ __forceinline__ void fp64_limb_product(double a, double b, double& lo_col, double& hi_col) {
    const double c1 = 0x1p100;  // [2^100, 2^101) has an ulp of 2^48
    const double high = fma(a, b, c1) - c1;
    lo_col += fma(a, b, -high);
    hi_col += high;
}

// Whether work on the FP64 pipe runs beside the multiplier's (IMAD) pipe, which
// the MSM's Fq products keep busy: thread t runs `rounds` rounds on the four Fq
// elements values[4t .. 4t + 4), each round four independent products x_k *= y
// (y = the thread's first element as it came in; with fq_products 0, none) and
// `limb_products` FP64 limb products on four independent columns. Timed with
// either alone and both together, it says how much of an Fq product the FP64
// pipe could take over. With limb_products 0, values[4t + k] = x_k * y^rounds
// exactly (scripts/cuda/check_kernels_host.py checks it); otherwise the
// columns' bits are folded into the first element so that no work is dead.
extern "C" __global__ void __launch_bounds__(128)
    fq_pipe_probe(fq_t* values, u32 threads, u32 rounds, u32 fq_products, u32 limb_products) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    fq_inline_t x[4];
#pragma unroll
    for (int k = 0; k < 4; k++) x[k] = *reinterpret_cast<const fq_inline_t*>(values + 4 * t + k);
    const fq_inline_t y = x[0];
    double a0[4], a[4], b[8], lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        a0[k] = (double)(x[k].l[0] & 0xffffffu) * 0x1p24 + (double)(x[k].l[1] & 0xffffffu);
        a[k] = a0[k];
    }
#pragma unroll
    for (int j = 0; j < 8; j++) b[j] = (double)(y.l[j] & 0xffffffu) * 0x1p24 + (double)(y.l[j + 4] & 0xffffffu);
    for (u32 r = 0; r < rounds; r++) {
        if (fq_products) {
#pragma unroll
            for (int k = 0; k < 4; k++) x[k] = x[k] * y;
        }
#pragma unroll 4
        for (u32 i = 0; i < limb_products; i += 4) {
#pragma unroll
            for (int k = 0; k < 4; k++) fp64_limb_product(a[k], b[(i + k) & 7], lo[k], hi[k]);
        }
#pragma unroll
        for (int k = 0; k < 4; k++) a[k] = fma(lo[k], 0x1p-64, a0[k]);  // depends on this round, stays near 2^48
    }
    if (limb_products) {
        double s = (lo[0] + lo[1]) + (lo[2] + lo[3]) + (hi[0] + hi[1]) + (hi[2] + hi[3]);
        unsigned long long bits = (unsigned long long)__double_as_longlong(s);
        x[0].l[0] ^= (u32)bits ^ (u32)(bits >> 32);
    }
#pragma unroll
    for (int k = 0; k < 4; k++) *reinterpret_cast<fq_inline_t*>(values + 4 * t + k) = x[k];
}

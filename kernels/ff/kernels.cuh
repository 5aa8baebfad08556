// Kernels over field elements alone.
#pragma once
#include "bls12_381.cuh"
#include "fp64.cuh"

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
// (y = the thread's first element as it came in; with fq_products 0, none),
// the last F of them as fq_f64 products (ff/fp64.cuh) and the others as fq_t
// products, and `limb_products` FP64 limb products on four independent
// columns. Timed with each alone and together, it says how much of the work
// the FP64 pipe can take over. With limb_products 0, values[4t + k] = x_k *
// y^rounds exactly on either pipe (scripts/cuda/check_kernels_host.py checks
// it); otherwise the columns' bits are folded into the first element so that
// no work is dead.
template <int F>
__device__ __forceinline__ void fq_pipe_probe_body(fq_t* values, u32 threads, u32 rounds, u32 fq_products,
                                                   u32 limb_products) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    fq_inline_t x[4 - F > 0 ? 4 - F : 1];
    fq_f64 z[F > 0 ? F : 1];
#pragma unroll
    for (int k = 0; k < 4 - F; k++) x[k] = *reinterpret_cast<const fq_inline_t*>(values + 4 * t + k);
#pragma unroll
    for (int k = 0; k < F; k++) z[k] = fq_f64::from(values[4 * t + 4 - F + k]);
    const fq_inline_t y = *reinterpret_cast<const fq_inline_t*>(values + 4 * t);
    const fq_f64 yf = fq_f64::from(values[4 * t]);
    double a0[4], a[4], b[8], lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        a0[k] = (double)(values[4 * t + k].l[0] & 0xffffffu) * 0x1p24 + (double)(values[4 * t + k].l[1] & 0xffffffu);
        a[k] = a0[k];
    }
#pragma unroll
    for (int j = 0; j < 8; j++) b[j] = (double)(y.l[j] & 0xffffffu) * 0x1p24 + (double)(y.l[j + 4] & 0xffffffu);
    for (u32 r = 0; r < rounds; r++) {
        if (fq_products) {
#pragma unroll
            for (int k = 0; k < 4 - F; k++) x[k] = x[k] * y;
#pragma unroll
            for (int k = 0; k < F; k++) z[k] = z[k] * yf;
        }
#pragma unroll 4
        for (u32 i = 0; i < limb_products; i += 4) {
#pragma unroll
            for (int k = 0; k < 4; k++) fp64_limb_product(a[k], b[(i + k) & 7], lo[k], hi[k]);
        }
#pragma unroll
        for (int k = 0; k < 4; k++) a[k] = fma(lo[k], 0x1p-64, a0[k]);  // depends on this round, stays near 2^48
    }
    fq_t out[4];
#pragma unroll
    for (int k = 0; k < 4 - F; k++) out[k] = *reinterpret_cast<const fq_t*>(&x[k]);
#pragma unroll
    for (int k = 0; k < F; k++) out[4 - F + k] = z[k].to_fq();
    if (limb_products) {
        double s = (lo[0] + lo[1]) + (lo[2] + lo[3]) + (hi[0] + hi[1]) + (hi[2] + hi[3]);
        unsigned long long bits = (unsigned long long)__double_as_longlong(s);
        out[0].l[0] ^= (u32)bits ^ (u32)(bits >> 32);
    }
#pragma unroll
    for (int k = 0; k < 4; k++) values[4 * t + k] = out[k];
}

#define FQ_PIPE_PROBE(NAME, F)                                                                                  \
    extern "C" __global__ void __launch_bounds__(128)                                                          \
        NAME(fq_t* values, u32 threads, u32 rounds, u32 fq_products, u32 limb_products) {                      \
        fq_pipe_probe_body<F>(values, threads, rounds, fq_products, limb_products);                           \
    }
FQ_PIPE_PROBE(fq_pipe_probe, 0)
FQ_PIPE_PROBE(fq_pipe_probe_fp64_1, 1)
FQ_PIPE_PROBE(fq_pipe_probe_fp64_2, 2)
FQ_PIPE_PROBE(fq_pipe_probe_fp64_3, 3)
FQ_PIPE_PROBE(fq_pipe_probe_fp64_4, 4)

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

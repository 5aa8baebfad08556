// Just enough of CUDA to compile kernels/*.cuh with the host's C++ compiler and
// run a kernel's threads one after another (scripts/cuda/check_kernels_host.py).
// Thread-local state, block barriers and warp shuffles are not emulated: a
// kernel that uses them aborts when run (the MSM accumulation does not).
// Include this before anything from kernels/.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CROSSGROTH_HOST_EMULATION 1
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static

struct emu_dim3 {
    unsigned x, y, z;
};
static emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

struct uint4 {
    unsigned x, y, z, w;
};

[[noreturn]] inline void emu_unsupported(const char* what) {
    fprintf(stderr, "cuda_emu: %s is not emulated\n", what);
    abort();
}
inline void __syncthreads() { emu_unsupported("__syncthreads"); }
inline unsigned __shfl_down_sync(unsigned, unsigned, int) { emu_unsupported("__shfl_down_sync"); }
inline unsigned __shfl_up_sync(unsigned, unsigned, int) { emu_unsupported("__shfl_up_sync"); }
[[noreturn]] inline void __trap() { emu_unsupported("__trap"); }
// Threads run one at a time: a plain read-modify-write is atomic.
inline unsigned atomicAdd(unsigned* p, unsigned v) {
    unsigned old = *p;
    *p = old + v;
    return old;
}
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(unsigned v) { return v ? __builtin_clz(v) : 32; }
inline unsigned __brev(unsigned v) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((v >> i) & 1u) << (31 - i);
    return r;
}

// Runs kernel(args...) for every thread of a 1-D grid, one after another.
template <class F>
inline void emu_launch(unsigned threads, unsigned block, F kernel) {
    blockDim = {block, 1, 1};
    gridDim = {(threads + block - 1) / block, 1, 1};
    for (unsigned b = 0; b < gridDim.x; b++)
        for (unsigned t = 0; t < block; t++) {
            blockIdx = {b, 0, 0};
            threadIdx = {t, 0, 0};
            kernel();
        }
}

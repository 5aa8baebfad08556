// Just enough of CUDA to compile kernels/*.cuh with the host's C++ compiler and
// run them (scripts/cuda/check_kernels_host.py). emu_launch runs a kernel's
// threads one after another (for kernels without barriers: fast);
// emu_launch_threads runs each block's threads as OS threads with real block
// barriers and warp shuffles and votes (__syncthreads, __shfl_sync,
// __shfl_up_sync, __shfl_down_sync, __ballot_sync), one block at a time, so __shared__ memory (a static
// here) is the block's. Include this before anything from kernels/.
#pragma once
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CROSSGROTH_HOST_EMULATION 1
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static
#define __constant__

struct emu_dim3 {
    unsigned x, y, z;
};
static thread_local emu_dim3 threadIdx, blockIdx;
static emu_dim3 blockDim, gridDim;

// The barriers of the block and warp a thread of emu_launch_threads runs in
// (null under emu_launch), and each warp's exchange slots for shuffles.
struct emu_warp {
    std::barrier<> bar{32};
    unsigned slot[32];
};
static thread_local std::barrier<>* emu_block_barrier = nullptr;
static thread_local emu_warp* emu_this_warp = nullptr;

struct uint4 {
    unsigned x, y, z, w;
};

[[noreturn]] inline void emu_unsupported(const char* what) {
    fprintf(stderr, "cuda_emu: %s is not emulated\n", what);
    abort();
}
inline void __syncthreads() {
    if (!emu_block_barrier) emu_unsupported("__syncthreads under emu_launch (use emu_launch_threads)");
    emu_block_barrier->arrive_and_wait();
}
// Every lane of the warp takes part (the kernels shuffle with full masks).
inline unsigned emu_shuffle(unsigned v, int src_lane) {
    if (!emu_this_warp) emu_unsupported("warp shuffles under emu_launch (use emu_launch_threads)");
    const unsigned lane = threadIdx.x % 32;
    emu_this_warp->slot[lane] = v;
    emu_this_warp->bar.arrive_and_wait();
    const unsigned r = emu_this_warp->slot[src_lane];
    emu_this_warp->bar.arrive_and_wait();
    return r;
}
inline unsigned __shfl_sync(unsigned, unsigned v, int src_lane) { return emu_shuffle(v, src_lane & 31); }
// Every lane's predicate, gathered through the warp's slots.
inline unsigned __ballot_sync(unsigned, int pred) {
    if (!emu_this_warp) emu_unsupported("warp votes under emu_launch (use emu_launch_threads)");
    const unsigned lane = threadIdx.x % 32;
    emu_this_warp->slot[lane] = pred ? 1u : 0u;
    emu_this_warp->bar.arrive_and_wait();
    unsigned mask = 0;
    for (unsigned l = 0; l < 32; l++) mask |= emu_this_warp->slot[l] << l;
    emu_this_warp->bar.arrive_and_wait();
    return mask;
}
inline unsigned __shfl_down_sync(unsigned, unsigned v, int off) {
    const int lane = (int)(threadIdx.x % 32);
    return emu_shuffle(v, lane + off < 32 ? lane + off : lane);
}
inline unsigned __shfl_up_sync(unsigned, unsigned v, int off) {
    const int lane = (int)(threadIdx.x % 32);
    return emu_shuffle(v, lane >= off ? lane - off : lane);
}
[[noreturn]] inline void __trap() { emu_unsupported("__trap"); }
// Under emu_launch threads run one at a time, so a plain read-modify-write is
// atomic; under emu_launch_threads a builtin atomic.
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicMin(unsigned* p, unsigned v) {
    unsigned cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return cur;
}
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
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

// Runs kernel() for every thread of a 1-D grid, block by block, each block's
// threads at once as OS threads (block a multiple of 32), with barriers and
// shuffles. A thread that returns leaves its barriers (as on the GPU, where an
// exited thread no longer holds a barrier back).
template <class F>
inline void emu_launch_threads(unsigned threads, unsigned block, F kernel) {
    if (block % 32) emu_unsupported("blocks that are not whole warps");
    blockDim = {block, 1, 1};
    gridDim = {(threads + block - 1) / block, 1, 1};
    for (unsigned b = 0; b < gridDim.x; b++) {
        std::barrier<> block_bar((std::ptrdiff_t)block);
        std::vector<emu_warp> warps(block / 32);
        std::vector<std::thread> pool;
        pool.reserve(block);
        for (unsigned t = 0; t < block; t++)
            pool.emplace_back([&, b, t] {
                blockIdx = {b, 0, 0};
                threadIdx = {t, 0, 0};
                emu_block_barrier = &block_bar;
                emu_this_warp = &warps[t / 32];
                kernel();
                emu_this_warp->bar.arrive_and_drop();
                block_bar.arrive_and_drop();
            });
        for (auto& th : pool) th.join();
    }
}

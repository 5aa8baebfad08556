// The sort of plain windows (a bucket set per window) in two steps through
// coarse bins of 2^F buckets, so that neither step scatters single entries
// over the whole of memory (included by pippenger.cuh, which defines the
// digits):
//
//   msm_count_bins   entries per bin, counted in shared memory by a block over
//                    many scalars and added to global memory once a bin;
//   (the offsets scan of pippenger.cuh, over the bins)
//   msm_scatter_bins one window: a block counts its tile's entries per bin in
//                    shared memory, reserves each bin's run with one global
//                    atomic, and writes its entries there (runs, not single
//                    entries; the bins' write fronts stay in L2);
//   msm_sort_bins    one block a bin of that window: counts its entries per
//                    bucket in shared memory, scans, and writes each entry to
//                    its bucket's place.
//
// The single-step scatter bumped one of 2^(c-1) cursors an entry and wrote each
// entry alone to a random place, whose partial sector writes reached memory one
// by one; here every global write is part of a run. Within a bucket the entries'
// order is not fixed, which the sums do not see.
#pragma once

// Bins a shared histogram of msm_count_bins holds (32 KB).
#define MSM_BINS_SHARED 8192
// Bins of one window at most: c <= 22, F = 10.
#define MSM_BINS_WINDOW 2048
// Scalars a thread of msm_scatter_bins takes (tile: MSM_BIN_ITEMS blocks'
// worth of threads; the host emulation takes fewer, to run several tiles).
#ifndef MSM_BIN_ITEMS
#define MSM_BIN_ITEMS 16
#endif
// Words between the bins' fill cursors, so that they fall on different L2 lines.
#define MSM_BIN_PAD 32

// Counts the entries of windows [w_lo, w_hi) per bin (bin of a key: key >> F;
// key = window K + |digit| - 1, K = 2^(c - 1)) into bin_counts; the host keeps
// (w_hi - w_lo) K / 2^F <= MSM_BINS_SHARED. Grid-stride over the scalars, so
// that a block counts many before it adds its histogram to global memory.
extern "C" __global__ void __launch_bounds__(256) msm_count_bins(const fr_t* __restrict__ canon,
                                                                 const u32* __restrict__ bidx, u32 n, u32 c, u32 F,
                                                                 u32 w_lo, u32 w_hi, u32* __restrict__ bin_counts) {
    __shared__ u32 hist[MSM_BINS_SHARED];
    const u32 K = 1u << (c - 1), bps = K >> F, nbl = (w_hi - w_lo) * bps;
    for (u32 j = threadIdx.x; j < nbl; j += blockDim.x) hist[j] = 0;
    __syncthreads();
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (bidx[i] == MSM_NONE) continue;
        fr_t s = load16(canon + i);
        u32 carry = 0;
        for (u32 w = 0; w < w_hi; w++) {
            int d = next_digit(s, w, c, carry);
            if (d != 0 && w >= w_lo) atomicAdd(&hist[(w - w_lo) * bps + (((u32)(d < 0 ? -d : d) - 1) >> F)], 1u);
        }
    }
    __syncthreads();
    for (u32 j = threadIdx.x; j < nbl; j += blockDim.x)
        if (hist[j]) atomicAdd(&bin_counts[w_lo * bps + j], hist[j]);
}

// Window w's entries into its bins' runs of tmp: tmp holds the window alone,
// bin j at bin_offsets[j] - bin_offsets[w bps]; fill (MSM_BIN_PAD words a bin,
// zeroed by the host) counts what blocks reserved. An entry is the bucket key
// above, the point index | negate flag below, as the accumulation reads it.
extern "C" __global__ void __launch_bounds__(256) msm_scatter_bins(const fr_t* __restrict__ canon,
                                                                   const u32* __restrict__ bidx, u32 n, u32 c,
                                                                   u32 F, u32 w, u32 stride,
                                                                   const u32* __restrict__ bin_offsets,
                                                                   u32* __restrict__ fill, u64* __restrict__ tmp) {
    __shared__ u32 hist[MSM_BINS_WINDOW];
    __shared__ u32 start[MSM_BINS_WINDOW];
    const u32 K = 1u << (c - 1), bps = K >> F, first = w * bps;
    for (u32 j = threadIdx.x; j < bps; j += blockDim.x) hist[j] = 0;
    __syncthreads();
    u32 key[MSM_BIN_ITEMS], low[MSM_BIN_ITEMS], rank[MSM_BIN_ITEMS];
    const u32 tile = blockIdx.x * blockDim.x * MSM_BIN_ITEMS;
#pragma unroll
    for (u32 k = 0; k < MSM_BIN_ITEMS; k++) {
        key[k] = MSM_NONE;
        u32 i = tile + k * blockDim.x + threadIdx.x;  // coalesced
        if (i >= n) continue;
        u32 b = bidx[i];
        if (b == MSM_NONE) continue;
        fr_t s = load16(canon + i);
        u32 carry = 0;
        int d = 0;
        for (u32 v = 0; v <= w; v++) d = next_digit(s, v, c, carry);
        if (d == 0) continue;
        u32 mag = (u32)(d < 0 ? -d : d) - 1;
        key[k] = w * K + mag;
        low[k] = b * stride | (d < 0 ? MSM_NEG_FLAG : 0u);
        rank[k] = atomicAdd(&hist[mag >> F], 1u);
    }
    __syncthreads();
    const u32 base = bin_offsets[first];
    for (u32 j = threadIdx.x; j < bps; j += blockDim.x)
        if (hist[j]) start[j] = bin_offsets[first + j] - base + atomicAdd(&fill[(first + j) * MSM_BIN_PAD], hist[j]);
    __syncthreads();
#pragma unroll
    for (u32 k = 0; k < MSM_BIN_ITEMS; k++)
        if (key[k] != MSM_NONE)
            tmp[start[(key[k] - w * K) >> F] + rank[k]] = ((u64)key[k] << 32) | (u64)low[k];
}

// Exclusive scan of cnt[0, 1024) in place by a block of 256 or 1024 threads
// (1024 / blockDim.x counts a thread); returns the total.
__device__ __forceinline__ u32 msm_block_scan_1024(u32* cnt, u32* warp_sums) {
    const u32 t = threadIdx.x, lane = t & 31, warp = t >> 5, per = 1024 / blockDim.x, warps = blockDim.x >> 5;
    u32 own = 0;
    for (u32 k = 0; k < per; k++) own += cnt[per * t + k];
    u32 inc = own;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        u32 o = __shfl_up_sync(0xffffffffu, inc, off);
        if (lane >= off) inc += o;
    }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        u32 s = lane < warps ? warp_sums[lane] : 0, si = s;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            u32 o = __shfl_up_sync(0xffffffffu, si, off);
            if (lane >= off) si += o;
        }
        if (lane < warps) warp_sums[lane] = si - s;  // exclusive over warps
        if (lane == 31) warp_sums[32] = si;          // the total
    }
    __syncthreads();
    u32 run = warp_sums[warp] + inc - own;
    for (u32 k = 0; k < per; k++) {
        u32 v = cnt[per * t + k];
        cnt[per * t + k] = run;
        run += v;
    }
    u32 total = warp_sums[32];
    __syncthreads();
    return total;
}

// Entries a thread of msm_sort_bins loads before it counts or places them:
// independent loads in flight, where one at a time left a block's pass over a
// large bin (the top window's few bins hold all of its entries) waiting on
// memory once an entry.
#define MSM_SORT_BATCH 8

// One block (256 or 1024 threads) a bin of window w: its entries from tmp
// to their buckets' places in entries (bin j's entries begin at
// bin_offsets[j]; in a bin the bucket is the key's low F bits).
extern "C" __global__ void __launch_bounds__(1024) msm_sort_bins(const u64* __restrict__ tmp,
                                                                 const u32* __restrict__ bin_offsets, u32 c, u32 F,
                                                                 u32 w, u64* __restrict__ entries) {
    __shared__ u32 cnt[1024];
    __shared__ u32 warp_sums[33];
    const u32 bps = (1u << (c - 1)) >> F, mask = (1u << F) - 1u;
    const u32 j = w * bps + blockIdx.x;
    const u32 lo = bin_offsets[j], hi = bin_offsets[j + 1], base = bin_offsets[w * bps];
    for (u32 k = threadIdx.x; k < 1024; k += blockDim.x) cnt[k] = 0;
    __syncthreads();
    const u32 step = blockDim.x * MSM_SORT_BATCH;
    for (u32 e0 = lo + threadIdx.x; e0 < hi; e0 += step) {
        u32 key[MSM_SORT_BATCH];
#pragma unroll
        for (u32 k = 0; k < MSM_SORT_BATCH; k++) {
            u32 e = e0 + k * blockDim.x;
            key[k] = e < hi ? (u32)(tmp[e - base] >> 32) : MSM_NONE;
        }
#pragma unroll
        for (u32 k = 0; k < MSM_SORT_BATCH; k++)
            if (key[k] != MSM_NONE) atomicAdd(&cnt[key[k] & mask], 1u);
    }
    __syncthreads();
    msm_block_scan_1024(cnt, warp_sums);
    for (u32 e0 = lo + threadIdx.x; e0 < hi; e0 += step) {
        u64 ent[MSM_SORT_BATCH];
#pragma unroll
        for (u32 k = 0; k < MSM_SORT_BATCH; k++) {
            u32 e = e0 + k * blockDim.x;
            ent[k] = e < hi ? tmp[e - base] : ~0ull;
        }
#pragma unroll
        for (u32 k = 0; k < MSM_SORT_BATCH; k++)
            if (ent[k] != ~0ull) entries[lo + atomicAdd(&cnt[(u32)(ent[k] >> 32) & mask], 1u)] = ent[k];
    }
}

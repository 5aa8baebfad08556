// Pippenger multi-scalar multiplication, generic over the point type.
//
// Bucket sets: window w's digits go to bucket set w % wset and use copy
// w / wset of the bases, copy k being 2^(c wset k) times them. Plain bases
// have one copy (wset = nwin: a bucket set per window); a precomputed table
// (msm_precompute) has F copies per base, stored base-major (index b F + k),
// and wset = ceil(nwin / F) sets: every term still costs one addition per
// window, but the running-sum reduction runs over wset sets instead of nwin,
// which makes larger windows (fewer additions) pay.
//
// The host may run steps 1-5 in several passes over parts of the scalars
// (each pass's runs add to the buckets), uploading the next part meanwhile.
// With one pass it reads the count of general scalars after step 1 and picks
// the window size and sizes the sort from it: in a Filecoin circuit most
// scalars are 0 or 1, so the count of scalars overstates the buckets' work.
//
// Pass structure (host drives, one stream):
//   1. msm_classify  per scalar: density -> base index, Montgomery -> canonical;
//                    scalars 0 dropped, the bases of scalars 1 appended to a
//                    list for a plain sum, the rest counted (general).
//      msm_count_digits  signed c-bit window digits of the general scalars
//                    counted per bucket.
//   2. msm_scan_*    exclusive scan of the bucket counts (tiles, then one
//                    block over the tile sums, then each tile).
//   3. msm_scatter   counting sort: (bucket key, base index | sign) pairs, one
//                    u64 each, laid out grouped by bucket; one launch a window.
//   4. msm_accumulate  the sorted list is cut into equal chunks of L0 entries,
//                    one per thread, so every thread does the same number of
//                    mixed additions whatever the bucket sizes (a Groth16
//                    witness can put most scalars in one bucket). Each chunk
//                    adds its runs to their buckets, except its first run,
//                    which becomes an entry of the next level.
//   5. msm_accumulate_level  the same over those partial sums, L1 per thread,
//                    level after level until one chunk remains: a bucket of
//                    any size costs O(L0 + L1 log n) sequential additions.
//   6. msm_bucket_reduce  per window segment of S buckets: sum_k k * B_k by
//                    running sums, plus lo * (segment sum).
//   7. msm_sum_groups  (repeated) per window: sum the segment results.
//   8. msm_ones      plain sum of the bases whose scalar is 1, from their list
//                    (then 7 again).
//   9. msm_to_jacobian  window sums and the ones sum as Jacobian points; the
//                    host combines the windows (Horner, c doublings each).
#pragma once
#include "../ec/curves.cuh"

// Occupancy of the accumulation kernels (blocks of 128 threads per SM that the
// register allocation must allow); tuned on an H200 at two for both. G1 has a
// knob of its own: at three, ptxas gives the sm_90 cubin's (inlined) G1
// accumulation 168 registers and 84 bytes of spills instead of 212 and none,
// and on the H200 (2026-12-01) its accumulation of a 2^24 MSM on a table took
// 87.7-90.3 ms against 86.3 ms at two (benches/results/h200-2026-12-01c).
#ifndef MSM_ACC_MIN_BLOCKS
#define MSM_ACC_MIN_BLOCKS 2
#endif
#ifndef MSM_G1_ACC_MIN_BLOCKS
#define MSM_G1_ACC_MIN_BLOCKS MSM_ACC_MIN_BLOCKS
#endif

#define MSM_NONE 0xffffffffu
// an entry's base index with this bit set adds the negated base (digit < 0)
#define MSM_NEG_FLAG 0x80000000u

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

// What a scalar contributes: nothing (excluded by the density, or zero), its
// base once (scalar 1: Filecoin circuits' bits, summed apart from the buckets),
// or digits (every other scalar).
#define MSM_KIND_NONE 0u
#define MSM_KIND_ONE 1u
#define MSM_KIND_GENERAL 2u

// Classifies scalars [first, first + n) of a pass: bidx[i] is the base index
// of a general scalar (its canonical form in canon[i]) and MSM_NONE otherwise;
// the base indices of scalars equal to 1 are appended to ones (at
// counters[1], in no particular order, which a sum does not see), and
// counters[0] counts the general scalars, so that the host can size the
// buckets and the sort by the terms that need them. Appends go a warp at a
// time into the block's share, then one global atomic a block: a global
// atomic a scalar on one counter would serialise 10^8 of them. Every thread
// reaches the barriers (blocks of whole warps).
extern "C" __global__ void msm_classify(const fr_t* __restrict__ scalars, u32 n, const u64* __restrict__ density,
                                        const u32* __restrict__ dens_prefix, u32 first, fr_t* __restrict__ canon,
                                        u32* __restrict__ bidx, u32* __restrict__ ones, u32* __restrict__ counters) {
    __shared__ u32 block_ones, block_general, block_base;
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    u32 lane = threadIdx.x & 31;
    u32 kind = MSM_KIND_NONE;
    u32 b = first + i;  // a pass over scalars [first, first + n): dense ranks are global
    if (i < n) {
        bool included = true;
        if (density) {
            u64 word = density[i >> 6];
            u32 bit = i & 63;
            included = (word >> bit) & 1ull;
            b = dens_prefix[i >> 6] + (u32)__popcll(word & ((1ull << bit) - 1ull));
        }
        if (included) {
            fr_t s = load16(scalars + i).from_mont();
            if (fr_is_canonical_one(s)) {
                kind = MSM_KIND_ONE;
            } else if (!s.is_zero()) {
                kind = MSM_KIND_GENERAL;
                store16(canon + i, s);
            }
        }
        bidx[i] = kind == MSM_KIND_GENERAL ? b : MSM_NONE;
    }
    if (threadIdx.x == 0) {
        block_ones = 0;
        block_general = 0;
    }
    __syncthreads();
    u32 one_mask = __ballot_sync(0xffffffffu, kind == MSM_KIND_ONE);
    u32 general_mask = __ballot_sync(0xffffffffu, kind == MSM_KIND_GENERAL);
    u32 warp_base = 0;
    if (lane == 0) {
        if (one_mask) warp_base = atomicAdd(&block_ones, (u32)__popc(one_mask));
        if (general_mask) atomicAdd(&block_general, (u32)__popc(general_mask));
    }
    warp_base = __shfl_sync(0xffffffffu, warp_base, 0);
    __syncthreads();
    if (threadIdx.x == 0) {
        block_base = block_ones ? atomicAdd(&counters[1], block_ones) : 0;
        if (block_general) atomicAdd(&counters[0], block_general);
    }
    __syncthreads();
    if (kind == MSM_KIND_ONE) ones[block_base + warp_base + (u32)__popc(one_mask & ((1u << lane) - 1u))] = b;
}

// The bucket counts of the general scalars of a pass (classified by
// msm_classify): one for each nonzero signed digit.
extern "C" __global__ void msm_count_digits(const fr_t* __restrict__ canon, const u32* __restrict__ bidx, u32 n,
                                            u32 c, u32 nwin, u32 wset, u32* __restrict__ counts) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || bidx[i] == MSM_NONE) return;
    fr_t s = load16(canon + i);
    u32 K = 1u << (c - 1);
    u32 carry = 0;
    for (u32 w = 0, set = 0; w < nwin; w++) {
        int d = next_digit(s, w, c, carry);
        if (d != 0) atomicAdd(&counts[set * K + (u32)(d < 0 ? -d : d) - 1], 1u);
        if (++set == wset) set = 0;
    }
}

// Scalars a thread of msm_scatter sorts. Each entry's place comes from an
// atomic on its bucket's cursor, a round trip to L2 that the store waits on;
// with one scalar a thread the scatter waits on those round trips (Nsight
// Compute: long-scoreboard stalls, L2 and DRAM far from busy), so a thread
// has the atomics of several scalars in flight at once.
#ifndef MSM_SCATTER_SCALARS
#define MSM_SCATTER_SCALARS 4
#endif

// Windows [w_lo, w_hi) of every scalar (the host may cut the windows into
// several launches, so that one launch's bucket cursors and entries stay
// within a smaller part of memory). Thread t of block b takes scalars
// b * blockDim * MSM_SCATTER_SCALARS + k * blockDim + t (a warp's loads stay
// coalesced); the host launches n / MSM_SCATTER_SCALARS threads, rounded up.
extern "C" __global__ void msm_scatter(const fr_t* __restrict__ canon, const u32* __restrict__ bidx, u32 n, u32 c,
                                       u32 w_lo, u32 w_hi, u32 wset, u32 stride, u32* __restrict__ cursor,
                                       u64* __restrict__ entries) {
    constexpr int S = MSM_SCATTER_SCALARS;
    const u32 first = blockIdx.x * blockDim.x * S + threadIdx.x;
    const u32 K = 1u << (c - 1);
    fr_t s[S];
    u32 carry[S], point[S];
    bool live[S];
#pragma unroll
    for (int k = 0; k < S; k++) {
        u32 i = first + k * blockDim.x;
        u32 b = i < n ? bidx[i] : MSM_NONE;
        live[k] = b != MSM_NONE;  // excluded, zero or one: no entries
        if (live[k]) s[k] = load16(canon + i);
        carry[k] = 0;
        // table index of the copy window w uses (the host keeps b stride + copy < 2^31)
        point[k] = live[k] ? b * stride : 0;
    }
    for (u32 w = 0, set = 0; w < w_hi; w++) {
        u32 key[S], pos[S], val[S];
        bool put[S];
#pragma unroll
        for (int k = 0; k < S; k++) {
            int d = live[k] ? next_digit(s[k], w, c, carry[k]) : 0;
            put[k] = d != 0 && w >= w_lo;
            key[k] = set * K + (u32)(d < 0 ? -d : d) - 1;
            val[k] = point[k] | (d < 0 ? MSM_NEG_FLAG : 0u);
        }
        // every atomic first, then the stores that wait on them
#pragma unroll
        for (int k = 0; k < S; k++)
            if (put[k]) pos[k] = atomicAdd(&cursor[key[k]], 1u);
#pragma unroll
        for (int k = 0; k < S; k++)
            // one 8-byte write: bucket key above, base index | negate flag below
            if (put[k]) entries[pos[k]] = ((u64)key[k] << 32) | (u64)val[k];
        if (++set == wset) {
            set = 0;
#pragma unroll
            for (int k = 0; k < S; k++) point[k]++;
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

// The bucket counts of a large window size (c = 20: 13 x 2^19 buckets) are
// too many for one block: msm_scan_tiles sums tiles of MSM_SCAN_TILE counts,
// msm_scan turns the tile sums into tile offsets, msm_scan_apply scans each tile
// from its offset.
#define MSM_SCAN_TILE 4096

extern "C" __global__ void __launch_bounds__(1024) msm_scan_tiles(const u32* __restrict__ counts, u32 nb,
                                                                   u32* __restrict__ tile_sums) {
    __shared__ u32 warp_sums[32];
    u32 base = blockIdx.x * MSM_SCAN_TILE, t = threadIdx.x;
    u32 s = 0;
#pragma unroll
    for (u32 k = 0; k < MSM_SCAN_TILE / 1024; k++) {
        u32 i = base + k * 1024 + t;  // coalesced
        if (i < nb) s += counts[i];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if ((t & 31) == 0) warp_sums[t >> 5] = s;
    __syncthreads();
    if (t < 32) {
        s = warp_sums[t];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (t == 0) tile_sums[blockIdx.x] = s;
    }
}

// Each thread scans 4 consecutive counts of the tile; the block scans the
// per-thread totals through warp shuffles.
extern "C" __global__ void __launch_bounds__(1024) msm_scan_apply(const u32* __restrict__ counts, u32 nb,
                                                                   const u32* __restrict__ tile_offsets,
                                                                   u32* __restrict__ offsets,
                                                                   u32* __restrict__ cursor) {
    __shared__ u32 warp_sums[32];
    u32 t = threadIdx.x, lane = t & 31, warp = t >> 5;
    u32 i0 = blockIdx.x * MSM_SCAN_TILE + t * 4;
    u32 v[4];
    u32 own = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        v[k] = i0 + k < nb ? counts[i0 + k] : 0;
        own += v[k];
    }
    u32 inc = own;  // inclusive scan within the warp
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        u32 o = __shfl_up_sync(0xffffffffu, inc, off);
        if (lane >= off) inc += o;
    }
    if (lane == 31) warp_sums[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        u32 w = warp_sums[lane], wi = w;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            u32 o = __shfl_up_sync(0xffffffffu, wi, off);
            if (lane >= off) wi += o;
        }
        warp_sums[lane] = wi - w;  // exclusive over warps
    }
    __syncthreads();
    u32 run = tile_offsets[blockIdx.x] + warp_sums[warp] + inc - own;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (i0 + k < nb) {
            offsets[i0 + k] = run;
            cursor[i0 + k] = run;
        }
        run += v[k];
    }
    if (i0 < nb && i0 + 4 >= nb) offsets[nb] = run;  // the thread holding the last count
}

// Number of entries at level k of the accumulation tree (level 0: the sorted
// (bucket, point) entries; level k >= 1: one per chunk of level k - 1).
__device__ __forceinline__ u32 level_count(u32 total, u32 L0, u32 L1, u32 k) {
    u32 n = total;
    if (k >= 1) {
        n = (n + L0 - 1) / L0;
        for (u32 j = 1; j < k; j++) n = (n + L1 - 1) / L1;
    }
    return n;
}

// Adds a finished run to its bucket. Within one level a bucket is written by at
// most one thread (the chunk in which its run is not the first run), and the
// levels run as separate launches, so the read-modify-write needs no atomics.
template <class X>
__device__ __forceinline__ void bucket_add(X* buckets, u32 key, const X& run) {
    X b = load16(buckets + key);
    b.add(run);
    store16(buckets + key, b);
}

// Level 0: chunk t = entries [t L0, t L0 + L0) of the sorted list. Every run but
// the chunk's first is added to its bucket; the first run (which may continue a
// bucket begun in earlier chunks) goes to heads[t], an entry of level 1 whose
// key is the key of the chunk's first entry. If all entries fit in one chunk,
// the first run goes to its bucket too.
template <class A, class X>
__device__ __forceinline__ void msm_accumulate_impl(const A* __restrict__ bases, const u64* __restrict__ entries,
                                                    const u32* __restrict__ offsets,
                                                    u32 nb, u32 L, X* __restrict__ buckets, X* __restrict__ heads) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 total = offsets[nb];
    u64 start64 = (u64)t * L;
    if (start64 >= total) return;
    u32 start = (u32)start64;
    u32 end = min(start + L, total);
    bool final_level = total <= L;
    u32 cur = (u32)(entries[start] >> 32);
    u32 run_start = start;
    X acc = X::inf();
    for (u32 e = start; e < end; e++) {
        u64 ent = entries[e];
        u32 k = (u32)(ent >> 32);
        if (k != cur) {
            if (run_start == start && !final_level) store16(heads + t, acc);
            else bucket_add(buckets, cur, acc);
            cur = k;
            run_start = e;
            acc = X::inf();
        }
        u32 v = (u32)ent;
        A p = load16(bases + (v & ~MSM_NEG_FLAG));
        if (v & MSM_NEG_FLAG) p.y = p.y.neg();
        acc.add_affine(p);
    }
    if (run_start == start && !final_level) store16(heads + t, acc);
    else bucket_add(buckets, cur, acc);
}

// Level k >= 1: the same over the partial sums of level k - 1 (in), whose keys
// are the keys of entries0[i * stride] with stride = L0 * L1^(k-1).
template <class X>
__device__ __forceinline__ void msm_accumulate_level_impl(const X* __restrict__ in, const u64* __restrict__ entries0,
                                                          const u32* __restrict__ offsets, u32 nb, u32 L0, u32 L1,
                                                          u32 k, X* __restrict__ buckets, X* __restrict__ out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    u32 total = offsets[nb];
    u32 prev = level_count(total, L0, L1, k - 1);
    if (prev <= (k == 1 ? L0 : L1)) return;  // level k - 1 was the last
    u32 n = level_count(total, L0, L1, k);
    u64 stride = L0;
    for (u32 j = 1; j < k; j++) stride *= L1;
    u64 start64 = (u64)t * L1;
    if (start64 >= n) return;
    u32 start = (u32)start64;
    u32 end = min(start + L1, n);
    bool final_level = n <= L1;
    u32 cur = (u32)(entries0[start * stride] >> 32);
    u32 run_start = start;
    X acc = X::inf();
    for (u32 e = start; e < end; e++) {
        u32 key = (u32)(entries0[e * stride] >> 32);
        if (key != cur) {
            if (run_start == start && !final_level) store16(out + t, acc);
            else bucket_add(buckets, cur, acc);
            cur = key;
            run_start = e;
            acc = X::inf();
        }
        acc.add(load16(in + e));
    }
    if (run_start == start && !final_level) store16(out + t, acc);
    else bucket_add(buckets, cur, acc);
}

// dst[t] += src[t] for every bucket: a later pass's buckets into the sums so
// far (one thread a bucket: the additions do not diverge, unlike adding each
// run to a filled bucket inside the accumulation, where the lanes of a warp
// reach their run ends at different entries).
template <class X>
__device__ __forceinline__ void msm_bucket_merge_impl(X* __restrict__ dst, const X* __restrict__ src, u32 nb) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nb) return;
    X s = load16(src + t);
    if (s.is_inf()) return;
    X d = load16(dst + t);
    d.add(s);
    store16(dst + t, d);
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

// Partial sums of the bases whose scalar is 1, from their compacted list
// (msm_classify): thread t adds ones[t], ones[t + T], ... below *count, so
// that every lane of a warp adds on every step and neighbouring lanes read
// neighbouring entries.
template <class A, class X>
__device__ __forceinline__ void msm_ones_impl(const A* __restrict__ bases, u32 stride, const u32* __restrict__ ones,
                                              const u32* __restrict__ count, X* __restrict__ out, u32 T) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T) return;
    u32 n = *count;
    X acc = X::inf();
    for (u32 i = t; i < n; i += T) acc.add_affine(load16(bases + (u64)ones[i] * stride));
    store16(out + t, acc);
}

// The table of precomputed copies for bases[0, n) (a chunk of a larger set:
// the host offsets the pointers): table[i F + k] = 2^(shift k) bases[i] in
// affine form, k < F. Each thread doubles its base (F - 1) shift times in XYZZ,
// keeping the copies and the running product of their ZZZ in tmp / tmp_prod
// ((F - 1) each per thread), then turns all of them affine with one inversion
// (x = X (ZZ / ZZZ)^2, y = Y / ZZZ). The group has prime order, so no multiple
// of a base other than the identity is the identity. The inversion is by
// divsteps: on the H200 (2026-12-01) 2^20 Fq inversions took 1.99 ms by
// divsteps against 21.75 ms by Fermat (benches/results/h200-2026-12-01c).
template <class A, class X, class Fe>
__device__ __forceinline__ void msm_precompute_impl(const A* __restrict__ bases, u32 n, u32 F, u32 shift,
                                                    A* __restrict__ table, X* __restrict__ tmp,
                                                    Fe* __restrict__ tmp_prod) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    A p = load16(bases + i);
    A* row = table + (u64)i * F;
    store16(row, p);
    if (F == 1) return;
    if (p.is_inf()) {
        for (u32 k = 1; k < F; k++) store16(row + k, p);
        return;
    }
    X* pts = tmp + (u64)i * (F - 1);
    Fe* prods = tmp_prod + (u64)i * (F - 1);
    X acc = X::from_affine(p);
    Fe prod = Fe::one();
    for (u32 k = 1; k < F; k++) {
        for (u32 s = 0; s < shift; s++) acc.dbl();
        pts[k - 1] = acc;
        prod = prod * acc.ZZZ;
        prods[k - 1] = prod;
    }
    Fe inv = prod.inverse_divsteps();  // 1 / (ZZZ_1 ... ZZZ_(F-1))
    for (u32 k = F - 1; k >= 1; k--) {
        X q = pts[k - 1];
        Fe zzz_inv = k > 1 ? inv * prods[k - 2] : inv;
        inv = inv * q.ZZZ;
        Fe t = q.ZZ * zzz_inv;  // ZZ / ZZZ, whose square is 1 / ZZ
        A r;
        r.x = q.X * t.sqr();
        r.y = q.Y * zzz_inv;
        store16(row + k, r);
    }
}

template <class X, class J>
__device__ __forceinline__ void msm_to_jacobian_impl(const X* __restrict__ in, u32 n, J* __restrict__ out) {
    u32 t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    J j = load16(in + t).to_jacobian();
    out[t] = j;
}

// MSM_G1_ACC_INLINE: the G1 accumulation with its Fq products inlined
// (fq_inline_t, same layout) instead of called (each call moves its operands
// into the argument registers, ~36 moves on the multiplier's pipe). On in the
// sm_90 cubin only (scripts/cuda/build-ptx.sh, HOPPER_DEFINES): on the H200
// (2026-12-01) it took the G1 MSM of 2^24 on a table from 116.63 to 114.65 ms
// and plain from 132.20 to 131.32 ms, but its PTX took the driver 26.9 s to
// JIT instead of 14-20 s, which GPUs other than Hopper would pay on first load.
// (Proofs with it looked 30 % slower once: host copies between the MSMs, gone
// since, took twice as long when this cubin was loaded from a file.)
#ifndef MSM_G1_ACC_INLINE
#define MSM_G1_ACC_INLINE 0
#endif

extern "C" __global__ void __launch_bounds__(128, MSM_G1_ACC_MIN_BLOCKS)
    g1_msm_accumulate(const g1_affine_t* bases, const u64* entries, const u32* offsets, u32 nb, u32 L,
                      g1_xyzz_t* buckets, g1_xyzz_t* heads) {
#if MSM_G1_ACC_INLINE
    msm_accumulate_impl(reinterpret_cast<const g1_affine_inline_t*>(bases), entries, offsets, nb, L,
                        reinterpret_cast<g1_xyzz_inline_t*>(buckets), reinterpret_cast<g1_xyzz_inline_t*>(heads));
#else
    msm_accumulate_impl(bases, entries, offsets, nb, L, buckets, heads);
#endif
}
extern "C" __global__ void __launch_bounds__(128, MSM_ACC_MIN_BLOCKS)
    g2_msm_accumulate(const g2_affine_t* bases, const u64* entries, const u32* offsets, u32 nb, u32 L,
                      g2_xyzz_t* buckets, g2_xyzz_t* heads) {
    msm_accumulate_impl(bases, entries, offsets, nb, L, buckets, heads);
}

#define MSM_INSTANTIATE(G)                                                                                        \
    extern "C" __global__ void G##_msm_accumulate_level(const G##_xyzz_t* in, const u64* entries0,                \
                                                        const u32* offsets, u32 nb, u32 L0, u32 L1, u32 k,        \
                                                        G##_xyzz_t* buckets, G##_xyzz_t* out) {                   \
        msm_accumulate_level_impl(in, entries0, offsets, nb, L0, L1, k, buckets, out);                            \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_bucket_reduce(const G##_xyzz_t* buckets, u32 K, u32 nwin, u32 S,           \
                                                     G##_xyzz_t* seg_out) {                                       \
        msm_bucket_reduce_impl(buckets, K, nwin, S, seg_out);                                                     \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_bucket_merge(G##_xyzz_t* dst, const G##_xyzz_t* src, u32 nb) {            \
        msm_bucket_merge_impl(dst, src, nb);                                                                      \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_sum_groups(const G##_xyzz_t* in, u32 groups, u32 len, u32 F,              \
                                                  G##_xyzz_t* out, u32 len2) {                                    \
        msm_sum_groups_impl(in, groups, len, F, out, len2);                                                       \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_ones(const G##_affine_t* bases, u32 stride, const u32* ones,               \
                                            const u32* count, G##_xyzz_t* out, u32 T) {                           \
        msm_ones_impl(bases, stride, ones, count, out, T);                                                        \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_precompute(const G##_affine_t* bases, u32 n, u32 F, u32 shift,             \
                                                  G##_affine_t* table, G##_xyzz_t* tmp,                           \
                                                  decltype(G##_affine_t::x)* tmp_prod) {                          \
        msm_precompute_impl(bases, n, F, shift, table, tmp, tmp_prod);                                            \
    }                                                                                                             \
    extern "C" __global__ void G##_msm_to_jacobian(const G##_xyzz_t* in, u32 n, G##_jacobian_t* out) {            \
        msm_to_jacobian_impl(in, n, out);                                                                         \
    }

MSM_INSTANTIATE(g1)
MSM_INSTANTIATE(g2)

// a, b, c of a proof from its witness and the circuit's recorded constraint
// matrices (src/synthesis/recorded.rs), so that only the witness crosses the
// bus and the host never holds the three evaluation vectors.
//
// A matrix is in compressed sparse rows as the recorder keeps it: column
// `col[t]` names an aux variable when its top bit is set and an input
// otherwise; `coeff[t]` indexes the shape's table of distinct coefficients,
// whose entries 0 and 1 are +1 and -1 (a sum or a difference, no product).
#pragma once

#define SPMV_AUX_COLUMN 0x80000000u

// Fr values across a warp's lanes, a limb at a time (every lane takes part).
__device__ __forceinline__ fr_t fr_shfl(const fr_t& v, u32 src_lane) {
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.l[i] = __shfl_sync(0xffffffffu, v.l[i], src_lane);
    return r;
}

__device__ __forceinline__ fr_t fr_shfl_up(const fr_t& v, u32 delta) {
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.l[i] = __shfl_up_sync(0xffffffffu, v.l[i], delta);
    return r;
}

// out[i] = sum over row i's terms of coefficient * variable, for i < rows;
// zero for rows <= i < m (the padding to the domain).
//
// One warp a group of 32 consecutive rows (launched with m rounded up to whole
// warps): the lanes take the group's terms 32 at a time, so that col and coeff
// are read in runs; a segmented sum over the lanes adds each row's terms in
// the run, and lane j adds row j's share to its total. With one thread a row,
// a warp waited for its longest row, and a circuit's packings of dozens of
// bits sit beside rows of one or two terms.
extern "C" __global__ void fr_spmv(fr_t* __restrict__ out, const u32* __restrict__ row_start,
                                   const u32* __restrict__ col, const u32* __restrict__ coeff,
                                   const fr_t* __restrict__ table, const fr_t* __restrict__ input,
                                   const fr_t* __restrict__ aux, u32 rows, u32 m) {
    const u32 lane = threadIdx.x & 31;
    const u32 r0 = blockIdx.x * blockDim.x + threadIdx.x - lane;  // the group's first row
    if (r0 >= m) return;                                          // the whole warp
    // Row r0 + lane's terms are [first, next); rows past `rows` have none.
    const u32 first = row_start[min(r0 + lane, rows)];
    const u32 end = row_start[min(r0 + 32, rows)];
    const u32 after = __shfl_down_sync(0xffffffffu, first, 1);  // every lane takes part
    const u32 next = lane == 31 ? end : after;
    fr_t acc = fr_t::zero();
    for (u32 base = __shfl_sync(0xffffffffu, first, 0); base < end; base += 32) {
        const u32 t = base + lane;
        // The row of term t: the last lane j of the group with first_j <= t
        // (first is non-decreasing; an empty row shares its start with the next).
        u32 j = 0;
#pragma unroll
        for (u32 step = 16; step > 0; step >>= 1)
            if (__shfl_sync(0xffffffffu, first, j + step) <= t) j += step;
        fr_t v = fr_t::zero();
        u32 key = 32;  // lanes past the group's terms: a segment of their own, never read
        if (t < end) {
            key = j;
            const u32 c = col[t];
            v = (c & SPMV_AUX_COLUMN) ? aux[c & ~SPMV_AUX_COLUMN] : input[c];
            const u32 k = coeff[t];
            if (k == 1)
                v = v.neg();
            else if (k != 0)
                v = v * table[k];
        }
        // Inclusive sums within each row's lanes: the last lane of a row's
        // segment ends with the row's share of this run.
#pragma unroll
        for (u32 d = 1; d < 32; d <<= 1) {
            const fr_t o = fr_shfl_up(v, d);
            const u32 ok = __shfl_up_sync(0xffffffffu, key, d);
            if (lane >= d && ok == key) v = v + o;
        }
        const u32 lo = max(first, base), hi = min(next, base + 32);
        const fr_t share = fr_shfl(v, hi > lo ? hi - 1 - base : 0);
        if (hi > lo) acc = acc + share;
    }
    if (r0 + lane < m) out[r0 + lane] = acc;
}

// *first = the least row i < rows with a[i] * b[i] != c[i] (untouched when every
// row holds; the host sets it to 0xffffffff first).
extern "C" __global__ void fr_first_unsatisfied(const fr_t* __restrict__ a, const fr_t* __restrict__ b,
                                                const fr_t* __restrict__ c, u32 rows, u32* first) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    if (a[i] * b[i] != c[i]) atomicMin(first, i);
}

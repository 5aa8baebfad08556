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

// out[i] = sum over row i's terms of coefficient * variable, for i < rows;
// zero for rows <= i < m (the padding to the domain).
extern "C" __global__ void fr_spmv(fr_t* __restrict__ out, const u32* __restrict__ row_start,
                                   const u32* __restrict__ col, const u32* __restrict__ coeff,
                                   const fr_t* __restrict__ table, const fr_t* __restrict__ input,
                                   const fr_t* __restrict__ aux, u32 rows, u32 m) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    fr_t acc = fr_t::zero();
    if (i < rows) {
        u32 end = row_start[i + 1];
        for (u32 t = row_start[i]; t < end; t++) {
            u32 c = col[t];
            fr_t v = (c & SPMV_AUX_COLUMN) ? aux[c & ~SPMV_AUX_COLUMN] : input[c];
            u32 k = coeff[t];
            if (k == 0)
                acc = acc + v;
            else if (k == 1)
                acc = acc - v;
            else
                acc = acc + v * table[k];
        }
    }
    out[i] = acc;
}

// *first = the least row i < rows with a[i] * b[i] != c[i] (untouched when every
// row holds; the host sets it to 0xffffffff first).
extern "C" __global__ void fr_first_unsatisfied(const fr_t* __restrict__ a, const fr_t* __restrict__ b,
                                                const fr_t* __restrict__ c, u32 rows, u32* first) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    if (a[i] * b[i] != c[i]) atomicMin(first, i);
}

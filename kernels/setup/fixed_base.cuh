// Fixed-base multiplication for parameter generation: every query point of a
// Groth16 setup is k·G for one generator G and a scalar k per variable or
// domain element, hundreds of millions of them at Filecoin scale.
//
// G is given as the host's table of 8-bit windows, table[w 256 + b] = b 2^(8w) G
// in affine form (32 windows, 256 entries each: 786 KB for G1, which stays in
// the L2 cache), so each product is at most 32 mixed additions into an XYZZ
// accumulator, one thread a scalar, then one divsteps inversion to make it
// affine. Affine points are canonical, so the output is bit for bit the host
// generator's (which adds the same table entries and normalises in batches).
// Needs msm/pippenger.cuh (scalar_bits) before it.
#pragma once

template <class A, class X>
__device__ __forceinline__ void fixed_base_mul_impl(const A* __restrict__ table, const fr_t* __restrict__ scalars,
                                                    u32 n, A* __restrict__ out) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fr_t s = load16(scalars + i).from_mont();
    X acc = X::inf();
#pragma unroll 1
    for (u32 w = 0; w < 32; w++) {
        u32 b = scalar_bits(s, 8 * w, 8);
        if (b != 0) acc.add_affine(load16(table + w * 256 + b));
    }
    A r;
    if (acc.is_inf()) {
        // blst's affine identity: (0, 0)
        r.x = decltype(r.x)::zero();
        r.y = decltype(r.y)::zero();
    } else {
        auto zzz_inv = acc.ZZZ.inverse_divsteps();
        auto t = acc.ZZ * zzz_inv;  // ZZ / ZZZ, whose square is 1 / ZZ
        r.x = acc.X * t.sqr();
        r.y = acc.Y * zzz_inv;
    }
    store16(out + i, r);
}

extern "C" __global__ void g1_fixed_base_mul(const g1_affine_t* table, const fr_t* scalars, u32 n,
                                             g1_affine_t* out) {
    fixed_base_mul_impl<g1_affine_t, g1_xyzz_t>(table, scalars, n, out);
}
extern "C" __global__ void g2_fixed_base_mul(const g2_affine_t* table, const fr_t* scalars, u32 n,
                                             g2_affine_t* out) {
    fixed_base_mul_impl<g2_affine_t, g2_xyzz_t>(table, scalars, n, out);
}

// Fq2 = Fq[u] / (u^2 + 1), laid out as blst_fp2 {fp[2]}: c0 then c1.
#pragma once
#include "bls12_381.cuh"

struct fq2_t {
    fq_t c0, c1;

    __device__ __forceinline__ static fq2_t zero() { fq2_t r; r.c0 = fq_t::zero(); r.c1 = fq_t::zero(); return r; }
    __device__ __forceinline__ static fq2_t one() { fq2_t r; r.c0 = fq_t::one(); r.c1 = fq_t::zero(); return r; }
    __device__ __forceinline__ bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    __device__ __forceinline__ bool operator==(const fq2_t& o) const { return c0 == o.c0 && c1 == o.c1; }
    __device__ __forceinline__ bool operator!=(const fq2_t& o) const { return !(*this == o); }
    __device__ __forceinline__ friend fq2_t operator+(const fq2_t& a, const fq2_t& b) { fq2_t r; r.c0 = a.c0 + b.c0; r.c1 = a.c1 + b.c1; return r; }
    __device__ __forceinline__ friend fq2_t operator-(const fq2_t& a, const fq2_t& b) { fq2_t r; r.c0 = a.c0 - b.c0; r.c1 = a.c1 - b.c1; return r; }
    __device__ __forceinline__ fq2_t neg() const { fq2_t r; r.c0 = c0.neg(); r.c1 = c1.neg(); return r; }
    __device__ __forceinline__ fq2_t dbl() const { return *this + *this; }
    // Karatsuba: 3 base-field products.
    __device__ __forceinline__ friend fq2_t operator*(const fq2_t& a, const fq2_t& b) {
        fq_t t0 = a.c0 * b.c0;
        fq_t t1 = a.c1 * b.c1;
        fq_t t2 = (a.c0 + a.c1) * (b.c0 + b.c1);
        fq2_t r;
        r.c0 = t0 - t1;
        r.c1 = t2 - t0 - t1;
        return r;
    }
    // 1 / (a + bu) = (a - bu) / (a^2 + b^2), the norm inverted by divsteps;
    // zero stays zero.
    __device__ __forceinline__ fq2_t inverse_divsteps() const {
        fq_t t = (c0.sqr() + c1.sqr()).inverse_divsteps();
        fq2_t r;
        r.c0 = c0 * t;
        r.c1 = (c1 * t).neg();
        return r;
    }
    // (a + bu)^2 = (a + b)(a - b) + 2ab u
    __device__ __forceinline__ fq2_t sqr() const {
        fq2_t r;
        fq_t ab = c0 * c1;
        r.c0 = (c0 + c1) * (c0 - c1);
        r.c1 = ab + ab;
        return r;
    }
};

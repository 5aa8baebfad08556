// A G1 XYZZ accumulator for mixed additions whose ZZ and ZZZ are fq_f64
// (ff/fp64.cuh): PRODUCTS of a mixed addition's ten products run on the FP64
// pipe, the others on the multiplier's, which bounds the MSM's accumulation:
// 4 (U2 = x ZZ, S2 = y ZZZ, ZZ PP, ZZZ PPP), 5 (and Q = X PP) or 6 (and
// Y PPP), which split suits the two pipes' rates being for the GPU to say. Same formulas and
// exceptional cases as xyzz_t::add_affine; the identity is a flag, since a
// lazily reduced fq_f64 may hold p for zero. as_xyzz gives the xyzz_t the
// buckets and the levels keep.
#pragma once
#include "../ff/fp64.cuh"
#include "xyzz.cuh"

template <class F, int PRODUCTS>
struct xyzz_f64_acc_t {
    static_assert(PRODUCTS >= 4 && PRODUCTS <= 6, "4, 5 or 6 products on the FP64 pipe");
    F X, Y;
    fq_f64 ZZ, ZZZ;
    bool inf_;

    __device__ __forceinline__ static xyzz_f64_acc_t inf() {
        xyzz_f64_acc_t r;
        r.inf_ = true;
        return r;
    }

    // this += p
    __device__ __forceinline__ void add_affine(const affine_t<F>& p) {
        if (p.is_inf()) return;
        if (inf_) {
            set(p.x, p.y, F::one(), F::one());
            return;
        }
        const F U2 = (fq_f64::from(p.x) * ZZ).template to_fq<F>();
        const F S2 = (fq_f64::from(p.y) * ZZZ).template to_fq<F>();
        const F P = U2 - X;
        const F R = S2 - Y;
        if (P.is_zero()) {
            if (R.is_zero()) {
                xyzz_t<F> d;
                d.set_dbl_affine(p);
                set(d.X, d.Y, d.ZZ, d.ZZZ);
            } else {
                inf_ = true;
            }
            return;
        }
        const F PP = P.sqr();
        const F PPP = P * PP;
        const fq_f64 pp = fq_f64::from(PP), ppp = fq_f64::from(PPP);
        F Q;
        if constexpr (PRODUCTS >= 5) Q = (fq_f64::from(X) * pp).template to_fq<F>();
        else Q = X * PP;
        const F X3 = R.sqr() - PPP - Q.dbl();
        F YPPP;
        if constexpr (PRODUCTS >= 6) YPPP = (fq_f64::from(Y) * ppp).template to_fq<F>();
        else YPPP = Y * PPP;
        Y = R * (Q - X3) - YPPP;
        X = X3;
        ZZ = ZZ * pp;
        ZZZ = ZZZ * ppp;
    }

    __device__ __forceinline__ xyzz_t<F> as_xyzz() const {
        if (inf_) return xyzz_t<F>::inf();
        xyzz_t<F> r;
        r.X = X;
        r.Y = Y;
        r.ZZ = ZZ.template to_fq<F>();
        r.ZZZ = ZZZ.template to_fq<F>();
        return r;
    }

  private:
    __device__ __forceinline__ void set(const F& x, const F& y, const F& zz, const F& zzz) {
        X = x;
        Y = y;
        ZZ = fq_f64::from(zz);
        ZZZ = fq_f64::from(zzz);
        inf_ = false;
    }
};

// The plain accumulator is its own XYZZ point.
template <class F>
__device__ __forceinline__ const xyzz_t<F>& as_xyzz(const xyzz_t<F>& p) {
    return p;
}
template <class F, int PRODUCTS>
__device__ __forceinline__ xyzz_t<F> as_xyzz(const xyzz_f64_acc_t<F, PRODUCTS>& p) {
    return p.as_xyzz();
}

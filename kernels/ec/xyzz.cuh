// Short Weierstrass points (a = 0) over a field F: affine (blst layout) and
// extended Jacobian XYZZ accumulators (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2).
// Formulas: hyperelliptic.org EFD, "xyzz" coordinates (madd-2008-s, add-2008-s,
// mdbl-2008-s-1, dbl-2008-s-1), with the exceptional cases handled.
#pragma once

// blst_p1_affine / blst_p2_affine: {x, y}; the identity is x = y = 0.
template <class F>
struct affine_t {
    F x, y;
    __device__ __forceinline__ bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

// blst_p1 / blst_p2: Jacobian {x, y, z}; z = 0 is the identity.
template <class F>
struct jacobian_t {
    F x, y, z;
};

template <class F>
struct xyzz_t {
    F X, Y, ZZ, ZZZ;

    __device__ __forceinline__ static xyzz_t inf() {
        xyzz_t r;
        r.X = F::zero(); r.Y = F::zero(); r.ZZ = F::zero(); r.ZZZ = F::zero();
        return r;
    }
    __device__ __forceinline__ bool is_inf() const { return ZZ.is_zero(); }

    __device__ __forceinline__ static xyzz_t from_affine(const affine_t<F>& p) {
        if (p.is_inf()) return inf();
        xyzz_t r;
        r.X = p.x; r.Y = p.y; r.ZZ = F::one(); r.ZZZ = F::one();
        return r;
    }

    // this = 2 * this
    __device__ __forceinline__ void dbl() {
        if (is_inf()) return;
        F U = Y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = X * V;
        F X2 = X.sqr();
        F M = X2.dbl() + X2;
        F X3 = M.sqr() - S.dbl();
        Y = M * (S - X3) - W * Y;
        X = X3;
        ZZ = V * ZZ;
        ZZZ = W * ZZZ;
    }

    // this = 2 * p for an affine p (not the identity)
    __device__ __forceinline__ void set_dbl_affine(const affine_t<F>& p) {
        F U = p.y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = p.x * V;
        F X2 = p.x.sqr();
        F M = X2.dbl() + X2;
        X = M.sqr() - S.dbl();
        Y = M * (S - X) - W * p.y;
        ZZ = V;
        ZZZ = W;
    }

    // this += p (mixed addition with an affine point)
    __device__ __forceinline__ void add_affine(const affine_t<F>& p) {
        if (p.is_inf()) return;
        if (is_inf()) { X = p.x; Y = p.y; ZZ = F::one(); ZZZ = F::one(); return; }
        F U2 = p.x * ZZ;
        F S2 = p.y * ZZZ;
        F P = U2 - X;
        F R = S2 - Y;
        if (P.is_zero()) {
            if (R.is_zero()) set_dbl_affine(p);
            else *this = inf();
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = X * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - Y * PPP;
        X = X3;
        ZZ = ZZ * PP;
        ZZZ = ZZZ * PPP;
    }

    // this += q (both XYZZ)
    __device__ __forceinline__ void add(const xyzz_t& q) {
        if (q.is_inf()) return;
        if (is_inf()) { *this = q; return; }
        F U1 = X * q.ZZ;
        F U2 = q.X * ZZ;
        F S1 = Y * q.ZZZ;
        F S2 = q.Y * ZZZ;
        F P = U2 - U1;
        F R = S2 - S1;
        if (P.is_zero()) {
            if (R.is_zero()) dbl();
            else *this = inf();
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = U1 * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - S1 * PPP;
        X = X3;
        ZZ = ZZ * q.ZZ * PP;
        ZZZ = ZZZ * q.ZZZ * PPP;
    }

    // Jacobian with Z = ZZ * ZZZ: X' = X ZZ ZZZ^2, Y' = Y ZZ^3 ZZZ^2.
    __device__ __forceinline__ jacobian_t<F> to_jacobian() const {
        jacobian_t<F> r;
        if (is_inf()) { r.x = F::zero(); r.y = F::zero(); r.z = F::zero(); return r; }
        F z = ZZ * ZZZ;
        F zzz2 = ZZZ.sqr();
        r.x = X * ZZ * zzz2;
        r.y = Y * ZZ.sqr() * ZZ * zzz2;
        r.z = z;
        return r;
    }
};

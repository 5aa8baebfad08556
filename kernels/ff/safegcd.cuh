// Modular inversion by Bernstein-Yang divsteps ("Fast constant-time gcd
// computation and modular inversion", 2019), for inverting in bulk on the GPU
// where a Fermat inversion (~570 dependent Fq products) is too slow: batches of
// 30 divsteps on the low 32 bits of f and g (branch-free, on the integer ALU),
// then their 2x2 transition matrix applied to the full f, g and to the
// coefficients d, e (13 signed 30-bit limbs for Fq; 32x32 -> 64-bit products).
// The structure follows libsecp256k1's explanation of its implementation
// (doc/safegcd_implementation.md there), with the original delta = 1 divsteps,
// whose iteration bound is proven for any bit length (Theorem 11.2 of the
// paper: floor((49 d + 57) / 17) divsteps for d >= 46 bits; 1101 for Fq).
//
// Branch-free within a batch (the lanes of a warp never diverge inside one);
// a thread stops after the batch in which g reaches 0 (at most the proven
// bound's batches), so its time depends on the input. Host and device alike:
// scripts/cuda/check_safegcd.py compiles this header with the host's C++
// compiler and checks it against Python's pow(x, -1, p).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SG_FN __host__ __device__ __forceinline__
#define SG_NO_UNROLL _Pragma("unroll 1")
#else
#define SG_FN inline
#define SG_NO_UNROLL
#endif

namespace safegcd {

typedef unsigned int w32;
typedef int s32;
typedef long long s64;
typedef unsigned long long w64;

const s32 M30 = 0x3fffffff;

// Q supplies: N32 (32-bit limbs of an element), L (30-bit limbs: enough for
// values in (-2p, p) with room for the matrix products' carries), ITERS
// (batches of 30 divsteps, at least the proven bound / 30), mod30(i) (the
// modulus in 30-bit limbs) and minv30 (p^-1 mod 2^30).

// Transition matrix of 30 divsteps, scaled by 2^30: [u v; q r].
struct matrix {
    s32 u, v, q, r;
};

// 30 divsteps on the low bits of f and g (f odd), eta = -delta. Every
// variable is a 32-bit word used modulo 2^32: step i only looks at bit 0 of
// g after i shifts, exact for i < 32; u, v, q, r stay within 31 signed bits.
SG_FN s32 divsteps_30(s32 eta, w32 f, w32 g, matrix* t) {
    w32 u = 1, v = 0, q = 0, r = 1;
    for (int i = 0; i < 30; i++) {
        const w32 c1 = 0u - (w32)(eta < 0);  // delta > 0
        const w32 x = (f ^ c1) - c1, y = (u ^ c1) - c1, z = (v ^ c1) - c1;
        const w32 c2 = 0u - (g & 1u);  // g odd
        g += x & c2;
        q += y & c2;
        r += z & c2;
        const w32 c3 = c1 & c2;  // both: (f, g) <- (g, (g - f) / 2)
        eta = (s32)(((w32)eta ^ c3) - c3) - 1;
        f += g & c3;
        u += q & c3;
        v += r & c3;
        g >>= 1;
        u <<= 1;
        v <<= 1;
    }
    t->u = (s32)u;
    t->v = (s32)v;
    t->q = (s32)q;
    t->r = (s32)r;
    return eta;
}

// [f, g] <- t [f, g] / 2^30 (exact: the low 30 bits of t [f, g] are zero).
template <int L>
SG_FN void update_fg(s32* f, s32* g, const matrix& t) {
    s64 cf = (s64)t.u * f[0] + (s64)t.v * g[0];
    s64 cg = (s64)t.q * f[0] + (s64)t.r * g[0];
    cf >>= 30;
    cg >>= 30;
    for (int i = 1; i < L; i++) {
        cf += (s64)t.u * f[i] + (s64)t.v * g[i];
        cg += (s64)t.q * f[i] + (s64)t.r * g[i];
        f[i - 1] = (s32)cf & M30;
        g[i - 1] = (s32)cg & M30;
        cf >>= 30;
        cg >>= 30;
    }
    f[L - 1] = (s32)cf;
    g[L - 1] = (s32)cg;
}

// [d, e] <- t [d, e] / 2^30 mod p, for d, e in (-2p, p) (kept there): the
// multiples md, me of p added first bring d, e < 0 up by p and cancel the low
// 30 bits.
template <class Q>
SG_FN void update_de(s32* d, s32* e, const matrix& t) {
    const int L = Q::L;
    const w32 sd = 0u - (w32)(d[L - 1] < 0), se = 0u - (w32)(e[L - 1] < 0);
    w32 md = ((w32)t.u & sd) + ((w32)t.v & se);
    w32 me = ((w32)t.q & sd) + ((w32)t.r & se);
    s64 cd = (s64)t.u * d[0] + (s64)t.v * e[0];
    s64 ce = (s64)t.q * d[0] + (s64)t.r * e[0];
    md -= (Q::minv30 * (w32)cd + md) & (w32)M30;
    me -= (Q::minv30 * (w32)ce + me) & (w32)M30;
    cd += (s64)Q::mod30(0) * (s32)md;
    ce += (s64)Q::mod30(0) * (s32)me;
    cd >>= 30;
    ce >>= 30;
    for (int i = 1; i < L; i++) {
        cd += (s64)t.u * d[i] + (s64)t.v * e[i] + (s64)Q::mod30(i) * (s32)md;
        ce += (s64)t.q * d[i] + (s64)t.r * e[i] + (s64)Q::mod30(i) * (s32)me;
        d[i - 1] = (s32)cd & M30;
        e[i - 1] = (s32)ce & M30;
        cd >>= 30;
        ce >>= 30;
    }
    d[L - 1] = (s32)cd;
    e[L - 1] = (s32)ce;
}

// Carries so that every limb but the top one is in [0, 2^30).
template <int L>
SG_FN void carry30(s32* a) {
    for (int i = 0; i < L - 1; i++) {
        a[i + 1] += a[i] >> 30;
        a[i] &= M30;
    }
}

// a + p if a < 0 (a's limbs carried).
template <class Q>
SG_FN void add_p_if_negative(s32* a) {
    const s32 neg = -(s32)(a[Q::L - 1] < 0);
    for (int i = 0; i < Q::L; i++) a[i] += Q::mod30(i) & neg;
    carry30<Q::L>(a);
}

// sign(f) d mod p in [0, p), for d in (-2p, p) and f = +-1.
template <class Q>
SG_FN void normalize(s32* d, const s32* f) {
    add_p_if_negative<Q>(d);  // (-p, p)
    const w32 neg = 0u - (w32)(f[Q::L - 1] < 0);
    for (int i = 0; i < Q::L; i++) d[i] = (s32)(((w32)d[i] ^ neg) - neg);
    carry30<Q::L>(d);
    add_p_if_negative<Q>(d);  // [0, p)
}

// 32-bit limbs <-> 30-bit limbs (little endian; values in [0, 2^(32 N32))).
template <class Q>
SG_FN void to30(const w32* x, s32* a) {
    for (int j = 0; j < Q::L; j++) {
        const int bit = 30 * j, w = bit / 32, sh = bit % 32;
        w32 v = w < Q::N32 ? x[w] >> sh : 0u;
        if (sh > 2 && w + 1 < Q::N32) v |= x[w + 1] << (32 - sh);
        a[j] = (s32)(v & (w32)M30);
    }
}
template <class Q>
SG_FN void from30(const s32* a, w32* x) {
    for (int w = 0; w < Q::N32; w++) {
        const int bit = 32 * w, j = bit / 30, sh = bit % 30;
        w32 v = (w32)a[j] >> sh;
        if (j + 1 < Q::L) v |= (w32)a[j + 1] << (30 - sh);
        if (sh > 28 && j + 2 < Q::L) v |= (w32)a[j + 2] << (60 - sh);
        x[w] = v;
    }
}

// out = x^-1 mod p for a canonical x in [0, p) (32-bit limbs); 0 gives 0.
// Returns whether g reached 0 (always, within the proven bound; the host
// check counts on it). batches, when given, receives the batches run.
template <class Q>
SG_FN bool inverse(const w32* x, w32* out, int* batches = nullptr) {
    s32 f[Q::L], g[Q::L], d[Q::L], e[Q::L];
    for (int i = 0; i < Q::L; i++) {
        f[i] = Q::mod30(i);
        d[i] = 0;
        e[i] = 0;
    }
    e[0] = 1;
    to30<Q>(x, g);
    s32 eta = -1;
    SG_NO_UNROLL  // one copy of the batch's code, not ITERS
    for (int it = 0; it < Q::ITERS; it++) {
        // Once g is 0 the remaining batches change nothing that matters: f
        // stays, d only moves by multiples of p (e is no longer used). A
        // thread stops there (~28 batches for a random Fq element against the
        // 37 of the bound), so the time depends on the input: this is for
        // public data or for where timing does not matter (an MSM's buckets).
        s32 live = 0;
        for (int i = 0; i < Q::L; i++) live |= g[i];
        if (!live) break;
        matrix t;
        eta = divsteps_30(eta, (w32)f[0], (w32)g[0], &t);
        update_de<Q>(d, e, t);
        update_fg<Q::L>(f, g, t);
        if (batches) *batches = it + 1;
    }
    s32 nz = 0;
    for (int i = 0; i < Q::L; i++) nz |= g[i];
    normalize<Q>(d, f);
    from30<Q>(d, out);
    return nz == 0;
}

}  // namespace safegcd

// BLS12-381's fields for safegcd::inverse.
struct fq_safegcd {
    static const int N32 = 12, L = 13, ITERS = 37;  // 1110 >= 1101 divsteps
    static const safegcd::w32 minv30 = 0x00030003u;
    SG_FN static safegcd::s32 mod30(int i) {
        const safegcd::s32 v[13] = {1073719979, 670826495, 356515835, 721420204, 821437470, 55215066, 288093811,
                                    316751073,  752313463, 517541166, 698659258, 982409209, 1704209};
        return v[i];
    }
};
struct fr_safegcd {
    static const int N32 = 8, L = 9, ITERS = 25;  // 750 >= 738 divsteps
    static const safegcd::w32 minv30 = 0x00000001u;
    SG_FN static safegcd::s32 mod30(int i) {
        const safegcd::s32 v[9] = {1,         1073741820, 1072021487, 795410623, 567805267,
                                   660611110, 399803187,  701811303,  29677};
        return v[i];
    }
};

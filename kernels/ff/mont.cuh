// Montgomery arithmetic over a prime field with N 32-bit limbs, R = 2^(32N).
//
// Limb order and Montgomery radix are blst's: blst_fp (6 x u64, R = 2^384) is
// 12 little-endian u32 limbs here; blst_fr (4 x u64, R = 2^256) is 8.
// Every operation returns a fully reduced value (< p), so equality and
// is_zero are limb comparisons. Requires 2p < 2^(32N) (true for both fields).
#pragma once
#include "ptx.cuh"
#include "safegcd.cuh"

// P supplies: static const int N; P::mod(i), P::one(i) (R mod p),
// P::inv_word() (-p^-1 mod 2^32). The constant arrays live in device functions
// so that, after unrolling, every limb becomes an immediate.
//
// 16-byte aligned (every element is 32 or 48 bytes) so that copies of whole
// elements (shared memory in the NTT, twiddles, scalars) are 16-byte vector
// loads and stores rather than one per limb.
template <class P>
struct alignas(16) mont_t {
    static const int N = P::N;
    u32 l[N];

    __device__ __forceinline__ static mont_t zero() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = 0;
        return r;
    }
    __device__ __forceinline__ static mont_t one() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = P::one(i);
        return r;
    }
    __device__ __forceinline__ bool is_zero() const {
        u32 acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= l[i];
        return acc == 0;
    }
    __device__ __forceinline__ bool operator==(const mont_t& o) const {
        u32 acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= l[i] ^ o.l[i];
        return acc == 0;
    }
    __device__ __forceinline__ bool operator!=(const mont_t& o) const { return !(*this == o); }

    // a + b mod p (a, b < p, so a + b < 2p < 2^(32N): no carry out).
    __device__ __forceinline__ friend mont_t operator+(const mont_t& a, const mont_t& b) {
        mont_t r, s;
        r.l[0] = ptx::add_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) r.l[i] = ptx::addc_cc(a.l[i], b.l[i]);
        r.l[N - 1] = ptx::addc(a.l[N - 1], b.l[N - 1]);
        s.l[0] = ptx::sub_cc(r.l[0], P::mod(0));
#pragma unroll
        for (int i = 1; i < N; i++) s.l[i] = ptx::subc_cc(r.l[i], P::mod(i));
        u32 borrow = ptx::subc(0, 0);
        return borrow ? r : s;
    }
    // a - b mod p.
    __device__ __forceinline__ friend mont_t operator-(const mont_t& a, const mont_t& b) {
        mont_t r, s;
        r.l[0] = ptx::sub_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.l[i] = ptx::subc_cc(a.l[i], b.l[i]);
        u32 borrow = ptx::subc(0, 0);
        s.l[0] = ptx::add_cc(r.l[0], P::mod(0));
#pragma unroll
        for (int i = 1; i < N - 1; i++) s.l[i] = ptx::addc_cc(r.l[i], P::mod(i));
        s.l[N - 1] = ptx::addc(r.l[N - 1], P::mod(N - 1));
        return borrow ? s : r;
    }
    __device__ __forceinline__ mont_t neg() const { return zero() - *this; }
    __device__ __forceinline__ mont_t dbl() const { return *this + *this; }

    // Montgomery product. Fields with P::inline_mul inline it (Fr: NTT); the
    // others (Fq) call one out-of-line copy, which keeps the PTX small (the
    // point formulas would otherwise inline hundreds of 12-limb products).
    __device__ __forceinline__ friend mont_t operator*(const mont_t& a, const mont_t& b) {
        if (P::inline_mul) return mul_inl(a, b);
        return mul_call(a, b);
    }
    __device__ __noinline__ static mont_t mul_call(mont_t a, mont_t b) { return mul_inl(a, b); }

    // Montgomery product a * b * R^-1 mod p: CIOS (one outer step per limb of
    // b) with the accumulator split by limb parity. Products of even limbs of
    // a (and of p) go to `even`, those of odd limbs to `odd` (one limb up), so
    // the low and high halves of one 32x32 product land in adjacent limbs of
    // one carry chain, and ptxas fuses each mad.lo/madc.hi pair into one wide
    // multiply-add. A textbook CIOS (low halves in one chain, high halves in
    // the next) needs two multiplies per product, the high half at half rate:
    // on the H200 the G1 MSM of 2^24 went from 240 to 172 ms and the NTT of
    // 2^24 from 8.66 to 7.53 ms. Each step divides by 2^32 by swapping the
    // roles of the two arrays; the array that becomes `odd` is shifted down two
    // limbs while the next products are added (madc_n_rshift). Requires N even
    // and 2p < 2^(32N) (both fields here). scripts/cuda/check_mont_mul.py runs
    // this exact instruction sequence on Python integers (CI runs it).
    __device__ __forceinline__ static void mul_n(u32* acc, const u32* a, u32 bi) {
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            acc[j] = ptx::mul_lo(a[j], bi);
            acc[j + 1] = ptx::mul_hi(a[j], bi);
        }
    }
    // acc += a * bi over the even limbs of a, carry out left in the flag.
    __device__ __forceinline__ static void cmad_n(u32* acc, const u32* a, u32 bi) {
        acc[0] = ptx::mad_lo_cc(a[0], bi, acc[0]);
        acc[1] = ptx::madc_hi_cc(a[0], bi, acc[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            acc[j] = ptx::madc_lo_cc(a[j], bi, acc[j]);
            acc[j + 1] = ptx::madc_hi_cc(a[j], bi, acc[j + 1]);
        }
    }
    // odd = (odd >> 2 limbs) + a * bi (a: the odd limbs), carry in from the flag.
    __device__ __forceinline__ static void madc_n_rshift(u32* odd, const u32* a, u32 bi) {
#pragma unroll
        for (int j = 0; j < N - 2; j += 2) {
            odd[j] = ptx::madc_lo_cc(a[j], bi, odd[j + 2]);
            odd[j + 1] = ptx::madc_hi_cc(a[j], bi, odd[j + 3]);
        }
        odd[N - 2] = ptx::madc_lo_cc(a[N - 2], bi, 0);
        odd[N - 1] = ptx::madc_hi(a[N - 2], bi, 0);
    }
    // One CIOS step: acc += a * bi, then + m * p so the lowest limb is 0.
    __device__ __forceinline__ static void mad_n_redc(u32* even, u32* odd, const u32* a, u32 bi, bool first) {
        if (first) {
            mul_n(odd, a + 1, bi);
            mul_n(even, a, bi);
        } else {
            even[0] = ptx::add_cc(even[0], odd[1]);
            madc_n_rshift(odd, a + 1, bi);
            cmad_n(even, a, bi);
            odd[N - 1] = ptx::addc(odd[N - 1], 0);
        }
        const u32 m = even[0] * P::inv_word();
        u32 mod[N];
#pragma unroll
        for (int j = 0; j < N; j++) mod[j] = P::mod(j);
        cmad_n(odd, mod + 1, m);  // carry out is 0: odd < 2^(32N)
        cmad_n(even, mod, m);
        odd[N - 1] = ptx::addc(odd[N - 1], 0);
    }
    // v - p if v >= p, else v, for v < 2p given as N limbs.
    __device__ __forceinline__ static mont_t reduce_once(const u32* v) {
        mont_t r, s;
#pragma unroll
        for (int j = 0; j < N; j++) r.l[j] = v[j];
        s.l[0] = ptx::sub_cc(r.l[0], P::mod(0));
#pragma unroll
        for (int j = 1; j < N; j++) s.l[j] = ptx::subc_cc(r.l[j], P::mod(j));
        u32 borrow = ptx::subc(0, 0);
        return borrow ? r : s;
    }
    __device__ __forceinline__ static mont_t mul_inl(const mont_t& a, const mont_t& b) {
        u32 even[N], odd[N];
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            mad_n_redc(even, odd, a.l, b.l[i], i == 0);
            mad_n_redc(odd, even, a.l, b.l[i + 1], false);
        }
        // even + odd / 2^32 (odd[0] is 0 after the last reduction)
        even[0] = ptx::add_cc(even[0], odd[1]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) even[j] = ptx::addc_cc(even[j], odd[j + 1]);
        even[N - 1] = ptx::addc(even[N - 1], 0);
        return reduce_once(even);
    }

    // Montgomery square a^2 * R^-1 mod p. Inlined for fields with
    // P::inline_mul (Fr), one out-of-line copy otherwise (Fq), as for products.
    // 222 multiply-adds for Fq against the product's 288 (more adds to double
    // the cross products): on the H200 the G1 MSM of 2^24 spent 95.3 ms instead
    // of 98.1 in its accumulation and 8.8 instead of 9.8 in its bucket reduction.
    __device__ __forceinline__ mont_t sqr() const {
        if (P::inline_mul) return sqr_inl(*this);
        return sqr_call(*this);
    }
    __device__ __noinline__ static mont_t sqr_call(mont_t a) { return sqr_inl(a); }

    // The square: first the 2N-limb a^2 (each cross product a_i*a_j, i < j,
    // once; the sum doubled; the diagonal a_i^2 added), then its Montgomery
    // reduction, N steps instead of the product's 2N half steps: N(N-1)/2 +
    // N + N^2 wide multiply-adds instead of 2N^2 (Fq: 222 instead of 288).
    //
    // Cross products, row i (a_i times a_j, j > i), with the even/odd split of
    // mul_inl: products with i + j odd go to `x`, those with i + j even to `y`
    // (limb k of either array is limb k of the result), so the low and high
    // halves of each product land in adjacent limbs of one carry chain. Row i
    // adds into the limbs that the rows before it wrote (up to `top`); its
    // last product's high half, or the carry out of the chain, starts the
    // next limb. scripts/cuda/check_mont_mul.py runs this exact sequence.
    __device__ __forceinline__ static void sqr_row(u32* acc, const u32* a, int i, int j0, int top) {
#pragma unroll
        for (int j = j0; j < N; j += 2) {
            const int k = i + j;
            if (j == j0) acc[k] = ptx::mad_lo_cc(a[i], a[j], acc[k]);
            else if (k <= top) acc[k] = ptx::madc_lo_cc(a[i], a[j], acc[k]);
            else acc[k] = ptx::madc_lo_cc(a[i], a[j], 0);
            if (k + 1 <= top) acc[k + 1] = ptx::madc_hi_cc(a[i], a[j], acc[k + 1]);
            else acc[k + 1] = ptx::madc_hi(a[i], a[j], 0);  // the row's last product: no carry out
        }
        const int last = i + (j0 + ((N - 1 - j0) & ~1)) + 1;  // high limb of the last product
        if (last == top) acc[top + 1] = ptx::addc(0, 0);
    }
    // The 2N-limb square of a into t.
    __device__ __forceinline__ static void sqr_wide(u32* t, const u32* a) {
        u32 x[2 * N], y[2 * N];
        // Row 0 writes fresh limbs: x[1 .. N], y[2 .. N - 1].
#pragma unroll
        for (int j = 1; j < N; j += 2) {
            x[j] = ptx::mul_lo(a[0], a[j]);
            x[j + 1] = ptx::mul_hi(a[0], a[j]);
        }
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            y[j] = ptx::mul_lo(a[0], a[j]);
            y[j + 1] = ptx::mul_hi(a[0], a[j]);
        }
        // Row i leaves x written up to limb i + N, and y too from row 1 on.
#pragma unroll
        for (int i = 1; i < N - 1; i++) {
            sqr_row(x, a, i, i + 1, i - 1 + N);
            if (i + 2 < N) sqr_row(y, a, i, i + 2, i == 1 ? N - 1 : i - 1 + N);
        }
        // x: limbs 1 .. 2N-2, y: limbs 2 .. 2N-3. t = 2 (x + y) + sum a_i^2 2^(64i).
        t[1] = x[1];
        t[2] = ptx::add_cc(x[2], y[2]);
#pragma unroll
        for (int k = 3; k < 2 * N - 2; k++) t[k] = ptx::addc_cc(x[k], y[k]);
        t[2 * N - 2] = ptx::addc_cc(x[2 * N - 2], 0);
        t[2 * N - 1] = ptx::addc(0, 0);
        t[1] = ptx::add_cc(t[1], t[1]);
#pragma unroll
        for (int k = 2; k < 2 * N - 1; k++) t[k] = ptx::addc_cc(t[k], t[k]);
        t[2 * N - 1] = ptx::addc(t[2 * N - 1], t[2 * N - 1]);
        t[0] = ptx::mul_lo(a[0], a[0]);
        t[1] = ptx::mad_hi_cc(a[0], a[0], t[1]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) {
            t[2 * i] = ptx::madc_lo_cc(a[i], a[i], t[2 * i]);
            t[2 * i + 1] = ptx::madc_hi_cc(a[i], a[i], t[2 * i + 1]);
        }
        t[2 * N - 2] = ptx::madc_lo_cc(a[N - 1], a[N - 1], t[2 * N - 2]);
        t[2 * N - 1] = ptx::madc_hi(a[N - 1], a[N - 1], t[2 * N - 1]);
    }
    // Montgomery reduction of the square t (2N limbs, t < p * 2^(32N)): the
    // low half is reduced with mul_inl's even/odd accumulators (N steps of
    // m = limb * inv, += m * p, / 2^32), giving (t_lo + M p) / 2^(32N) <= p;
    // the high half is added after: (t + M p) / 2^(32N) < 2p. A step divides
    // by 2^32 by swapping the arrays as in mul_inl: the second limb of the one
    // that becomes `odd` (its first is 0) is added into the new `even`, and
    // the rest shifted down two limbs while m * (odd limbs of p) is added
    // (madc_n_rshift). m is computed from the same sum before the chain.
    __device__ __forceinline__ static void redc_step(u32* even, u32* odd) {
        u32 mod[N];
#pragma unroll
        for (int j = 0; j < N; j++) mod[j] = P::mod(j);
        const u32 m = (even[0] + odd[1]) * P::inv_word();  // before the chain: the flag is untouched
        even[0] = ptx::add_cc(even[0], odd[1]);
        madc_n_rshift(odd, mod + 1, m);
        cmad_n(even, mod, m);
        odd[N - 1] = ptx::addc(odd[N - 1], 0);
    }
    // Montgomery reduction of t (2N limbs, t < p * 2^(32N)) to t R^-1 mod p.
    __device__ __forceinline__ static mont_t redc_wide(const u32* t) {
        u32 even[N], odd[N], mod[N];
#pragma unroll
        for (int j = 0; j < N; j++) {
            even[j] = t[j];
            mod[j] = P::mod(j);
        }
        const u32 m = even[0] * P::inv_word();
        mul_n(odd, mod + 1, m);
        cmad_n(even, mod, m);
        odd[N - 1] = ptx::addc(odd[N - 1], 0);
#pragma unroll
        for (int k = 1; k < N - 1; k += 2) {
            redc_step(odd, even);
            redc_step(even, odd);
        }
        redc_step(odd, even);
        // even + odd / 2^32 (odd[0] is 0): the low half reduced, at most p
        even[0] = ptx::add_cc(even[0], odd[1]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) even[j] = ptx::addc_cc(even[j], odd[j + 1]);
        even[N - 1] = ptx::addc(even[N - 1], 0);
        // + the high half: below 2p
        even[0] = ptx::add_cc(even[0], t[N]);
#pragma unroll
        for (int j = 1; j < N - 1; j++) even[j] = ptx::addc_cc(even[j], t[N + j]);
        even[N - 1] = ptx::addc(even[N - 1], t[2 * N - 1]);
        return reduce_once(even);
    }
    __device__ __forceinline__ static mont_t sqr_inl(const mont_t& a) {
        u32 t[2 * N];
        sqr_wide(t, a.l);
        return redc_wide(t);
    }

    // a^(p - 2) = 1 / a (Fermat); zero stays zero. ~1.5 N-bit exponent's worth
    // of products: for one-off work (precomputed bases), not for hot loops.
    __device__ __noinline__ mont_t inverse() const {
        u32 e[N];
        u32 borrow = 2;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const u32 m = P::mod(i);
            e[i] = m - borrow;
            borrow = m < borrow ? 1u : 0u;
        }
        mont_t r = one();
#pragma unroll 1
        for (int i = N - 1; i >= 0; i--) {
#pragma unroll 1
            for (int b = 31; b >= 0; b--) {
                r = r.sqr();
                if ((e[i] >> b) & 1u) r = r * *this;
            }
        }
        return r;
    }

    // 1 / a by divsteps (safegcd.cuh: up to ~1100 branch-free steps on the
    // integer ALU, ~810 for a random element, and 4 products of 13-limb numbers
    // by 32-bit words every 30 steps, against the ~570 dependent products of
    // inverse()). The stored value is aR, whose
    // integer inverse is a^-1 R^-1; its Montgomery product with R^3 is a^-1 R.
    // Zero stays zero.
    __device__ __forceinline__ mont_t inverse_divsteps() const {
        mont_t t, r3;
        safegcd::inverse<typename P::divsteps>(l, t.l);
#pragma unroll
        for (int i = 0; i < N; i++) r3.l[i] = P::r3(i);
        return t * r3;
    }

    // Montgomery -> canonical (multiply by 1).
    __device__ __forceinline__ mont_t from_mont() const {
        mont_t one_plain = zero();
        one_plain.l[0] = 1;
        return *this * one_plain;
    }
};

#!/usr/bin/env python3
"""Runs the instruction sequences of mont_t::mul_inl (kernels/ff/mont.cuh: CIOS
with even/odd limb accumulators) and mont_t::sqr_inl (the 2N-limb square from
its cross products, doubled, plus the diagonal, then an even/odd Montgomery
reduction) on Python integers, emulating PTX's carry flag, and checks them
against a * b * R^-1 mod p for BLS12-381 Fq and Fr on edge cases and random
operands. The flag is emulated as PTX defines it (.cc instructions write it,
addc/subc/madc read it; subtraction's flag is the borrow); additionally a chain
may not read a flag that the previous chain already consumed, no nonzero carry
may be dropped (overwritten without being read) and no final addc/madc.hi may
overflow, so every carry the kernels rely on being 0 is checked. Limbs not
yet written are None in the emulation, so reading one fails.

Squaring is checked in parts too: the 2N-limb square (against a * a) on
operands up to 2^(32N) - 1, whose all-ones value maximizes every intermediate
sum (so no carry is lost for any operand), and the reduction on any t < p R.

usage: check_mont_mul.py [random products per field, default 5000]
"""
import random
import sys

W = 2**32
FQ = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
FR = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001


class Flag:
    # 0 or 1 while a chain runs; None once the chain's last instruction (one
    # without .cc) has read it: the next chain must start without reading it.
    c = None


cc = Flag()


def carry_in():
    assert cc.c is not None, "carry read across chains"
    return cc.c


def start():
    assert cc.c != 1, "nonzero carry dropped"


# One function per PTX instruction the kernel uses (ptx.cuh).
def mul_lo(a, b): return a * b % W
def mul_hi(a, b): return a * b >> 32
def mad_lo_cc(a, b, c): start(); v = a * b % W + c; cc.c = v >> 32; return v % W
def mad_hi_cc(a, b, c): start(); v = (a * b >> 32) + c; cc.c = v >> 32; return v % W
def madc_lo_cc(a, b, c): v = a * b % W + c + carry_in(); cc.c = v >> 32; return v % W
def madc_hi_cc(a, b, c): v = (a * b >> 32) + c + carry_in(); cc.c = v >> 32; return v % W
def add_cc(a, b): start(); v = a + b; cc.c = v >> 32; return v % W
def addc_cc(a, b): v = a + b + carry_in(); cc.c = v >> 32; return v % W
def sub_cc(a, b): start(); v = a - b; cc.c = int(v < 0); return v % W
def subc_cc(a, b): v = a - b - carry_in(); cc.c = int(v < 0); return v % W


def madc_hi(a, b, c):
    v = (a * b >> 32) + c + carry_in()
    assert v < W, "madc.hi overflow"
    cc.c = None
    return v


def addc(a, b):
    v = a + b + carry_in()
    assert v < W, "addc overflow"
    cc.c = None
    return v


def subc(a, b):  # subc(0, 0): 0, or all ones after a borrow
    v = a - b - carry_in()
    cc.c = None
    return v % W


def mul_n(acc, a, bi, n):
    for j in range(0, n, 2):
        acc[j], acc[j + 1] = mul_lo(a[j], bi), mul_hi(a[j], bi)


def cmad_n(acc, a, bi, n):
    acc[0] = mad_lo_cc(a[0], bi, acc[0])
    acc[1] = madc_hi_cc(a[0], bi, acc[1])
    for j in range(2, n, 2):
        acc[j] = madc_lo_cc(a[j], bi, acc[j])
        acc[j + 1] = madc_hi_cc(a[j], bi, acc[j + 1])


def madc_n_rshift(odd, a, bi, n):
    for j in range(0, n - 2, 2):
        odd[j] = madc_lo_cc(a[j], bi, odd[j + 2])
        odd[j + 1] = madc_hi_cc(a[j], bi, odd[j + 3])
    odd[n - 2] = madc_lo_cc(a[n - 2], bi, 0)
    odd[n - 1] = madc_hi(a[n - 2], bi, 0)


def mad_n_redc(even, odd, a, bi, mod, inv, n, first):
    if first:
        mul_n(odd, a[1:], bi, n)
        mul_n(even, a, bi, n)
    else:
        even[0] = add_cc(even[0], odd[1])
        madc_n_rshift(odd, a[1:], bi, n)
        cmad_n(even, a, bi, n)
        odd[n - 1] = addc(odd[n - 1], 0)
    m = even[0] * inv % W
    cmad_n(odd, mod[1:], m, n)
    assert cc.c == 0, "carry out of the odd reduction chain"
    cmad_n(even, mod, m, n)
    odd[n - 1] = addc(odd[n - 1], 0)


def limbs(x, n): return [(x >> (32 * i)) % W for i in range(n)]
def value(v): return sum(x << (32 * i) for i, x in enumerate(v))


def final_sub(r, mod, n):
    """r - p if that does not borrow, else r (the tail of mul_inl and sqr_inl)."""
    s = [sub_cc(r[0], mod[0])]
    for j in range(1, n):
        s.append(subc_cc(r[j], mod[j]))
    borrow = subc(0, 0)
    return r if borrow else s


def mont_mul(a, b, p, n):
    inv = -pow(p, -1, W) % W
    mod = limbs(p, n) + [0]
    A, B = limbs(a, n) + [0], limbs(b, n)
    even, odd = [0] * n, [0] * n
    for i in range(0, n, 2):
        mad_n_redc(even, odd, A, B[i], mod, inv, n, i == 0)
        mad_n_redc(odd, even, A, B[i + 1], mod, inv, n, False)
    even[0] = add_cc(even[0], odd[1])
    for j in range(1, n - 1):
        even[j] = addc_cc(even[j], odd[j + 1])
    even[n - 1] = addc(even[n - 1], 0)
    assert value(even) < 2 * p, "result not below 2p"
    return value(final_sub(even, mod, n))


# mont_t::sqr_inl, statement by statement (None: a limb not written yet).
def sqr_row(acc, a, i, j0, top, n):
    for j in range(j0, n, 2):
        k = i + j
        if j == j0:
            acc[k] = mad_lo_cc(a[i], a[j], acc[k])
        elif k <= top:
            acc[k] = madc_lo_cc(a[i], a[j], acc[k])
        else:
            acc[k] = madc_lo_cc(a[i], a[j], 0)
        if k + 1 <= top:
            acc[k + 1] = madc_hi_cc(a[i], a[j], acc[k + 1])
        else:
            acc[k + 1] = madc_hi(a[i], a[j], 0)
    last = i + (j0 + ((n - 1 - j0) & ~1)) + 1
    if last == top:
        acc[top + 1] = addc(0, 0)


def sqr_wide(a, n):
    x, y, t = [None] * (2 * n), [None] * (2 * n), [None] * (2 * n)
    for j in range(1, n, 2):
        x[j], x[j + 1] = mul_lo(a[0], a[j]), mul_hi(a[0], a[j])
    for j in range(2, n, 2):
        y[j], y[j + 1] = mul_lo(a[0], a[j]), mul_hi(a[0], a[j])
    for i in range(1, n - 1):
        sqr_row(x, a, i, i + 1, i - 1 + n, n)
        if i + 2 < n:
            sqr_row(y, a, i, i + 2, n - 1 if i == 1 else i - 1 + n, n)
    t[1] = x[1]
    t[2] = add_cc(x[2], y[2])
    for k in range(3, 2 * n - 2):
        t[k] = addc_cc(x[k], y[k])
    t[2 * n - 2] = addc_cc(x[2 * n - 2], 0)
    t[2 * n - 1] = addc(0, 0)
    t[1] = add_cc(t[1], t[1])
    for k in range(2, 2 * n - 1):
        t[k] = addc_cc(t[k], t[k])
    t[2 * n - 1] = addc(t[2 * n - 1], t[2 * n - 1])
    t[0] = mul_lo(a[0], a[0])
    t[1] = mad_hi_cc(a[0], a[0], t[1])
    for i in range(1, n - 1):
        t[2 * i] = madc_lo_cc(a[i], a[i], t[2 * i])
        t[2 * i + 1] = madc_hi_cc(a[i], a[i], t[2 * i + 1])
    t[2 * n - 2] = madc_lo_cc(a[n - 1], a[n - 1], t[2 * n - 2])
    t[2 * n - 1] = madc_hi(a[n - 1], a[n - 1], t[2 * n - 1])
    return t


def redc_step(even, odd, mod, inv, n):
    assert odd[0] == 0, "lowest limb not reduced"
    m = (even[0] + odd[1]) % W * inv % W
    even[0] = add_cc(even[0], odd[1])
    madc_n_rshift(odd, mod[1:], m, n)
    cmad_n(even, mod, m, n)
    odd[n - 1] = addc(odd[n - 1], 0)


def redc_wide(t, p, n):
    """sqr_inl after sqr_wide: t (2n limbs, t < p R) -> t R^-1 mod p."""
    inv = -pow(p, -1, W) % W
    mod = limbs(p, n)
    even, odd = t[:n], [None] * n
    m = even[0] * inv % W
    mul_n(odd, mod[1:], m, n)
    cmad_n(even, mod, m, n)
    odd[n - 1] = addc(odd[n - 1], 0)
    for k in range(1, n - 1, 2):
        redc_step(odd, even, mod, inv, n)
        redc_step(even, odd, mod, inv, n)
    redc_step(odd, even, mod, inv, n)
    assert odd[0] == 0, "lowest limb not reduced"
    even[0] = add_cc(even[0], odd[1])
    for j in range(1, n - 1):
        even[j] = addc_cc(even[j], odd[j + 1])
    even[n - 1] = addc(even[n - 1], 0)
    assert value(even) <= p, "reduced low half above p"
    even[0] = add_cc(even[0], t[n])
    for j in range(1, n - 1):
        even[j] = addc_cc(even[j], t[n + j])
    even[n - 1] = addc(even[n - 1], t[2 * n - 1])
    assert value(even) < 2 * p, "result not below 2p"
    return value(final_sub(even, mod, n))


def mont_sqr(a, p, n):
    t = sqr_wide(limbs(a, n), n)
    assert value(t) == a * a
    return redc_wide(t, p, n)


def patterned(rng, n):
    """An n-limb value whose limbs are mostly carry-prone: 0, 1, all ones, ..."""
    pick = (0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF)
    return value([rng.choice(pick) if rng.random() < 0.8 else rng.randrange(W) for _ in range(n)])


def below(rng, n, bound):
    while True:
        v = patterned(rng, n) if rng.random() < 0.5 else rng.randrange(bound)
        if v < bound:
            return v


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rng = random.Random()
    for name, p, n in (("Fq", FQ, 12), ("Fr", FR, 8)):
        R = 2**(32 * n)
        r_inv = pow(R, -1, p)
        edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, R % p]
        cases = [(a, b) for a in edge for b in edge]
        cases += [(rng.randrange(p), rng.randrange(p)) for _ in range(count)]
        for a, b in cases:
            got, want = mont_mul(a, b, p, n), a * b * r_inv % p
            if got != want:
                sys.exit(f"{name}: mont_mul({a:#x}, {b:#x}) = {got:#x}, expected {want:#x}")
        print(f"check_mont_mul: {name} ok ({len(cases)} products)")

        # The 2N-limb square, on any n-limb operand (all ones is the worst case
        # for every intermediate sum).
        wide = [0, 1, 2, R - 1, R - 2, R // 2, R // 2 - 1, R // 2 + 1, p - 1, p, p + 1, 2 * p - 1]
        wide += [R - 2**k for k in range(0, 32 * n, 7)] + [2**k - 1 for k in range(1, 32 * n + 1, 5)]
        wide += [value([v] * n) for v in (1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE)]
        wide += [patterned(rng, n) for _ in range(count)] + [rng.randrange(R) for _ in range(count)]
        for a in wide:
            t = value(sqr_wide(limbs(a, n), n))
            if t != a * a:
                sys.exit(f"{name}: sqr_wide({a:#x}) = {t:#x}, expected {a * a:#x}")
        print(f"check_mont_mul: {name} 2N-limb square ok ({len(wide)} operands below 2^{32 * n})")

        # The reduction on any t < p R.
        top = p * R
        ts = [0, 1, top - 1, top - 2, (p - 1)**2, R - 1, R, R * (p - 1), R * R // 2 % top, p, p * (R - 1)]
        ts += [top - 2**k for k in range(0, 64 * n - 1, 11)]
        ts += [below(rng, 2 * n, top) for _ in range(count)]
        for t in ts:
            got, want = redc_wide(limbs(t, 2 * n), p, n), t * r_inv % p
            if got != want:
                sys.exit(f"{name}: redc({t:#x}) = {got:#x}, expected {want:#x}")
        print(f"check_mont_mul: {name} reduction ok ({len(ts)} values below p R)")

        # The Montgomery square, against the formula and the emulated product.
        sq = edge + [(p + 1) // 2, R * R % p, pow(R, 3, p), p - R % p, 2**(32 * n - 32) % p]
        sq += [p - 2**k for k in range(1, p.bit_length() - 1, 13)] + [2**k for k in range(p.bit_length() - 1)]
        sq += [below(rng, n, p) for _ in range(count)] + [rng.randrange(p) for _ in range(count)]
        for a in sq:
            got, want = mont_sqr(a, p, n), a * a * r_inv % p
            if got != want:
                sys.exit(f"{name}: mont_sqr({a:#x}) = {got:#x}, expected {want:#x}")
            if a in edge or rng.random() < 0.1:
                assert mont_mul(a, a, p, n) == got
        print(f"check_mont_mul: {name} squares ok ({len(sq)} squares)")


if __name__ == "__main__":
    main()

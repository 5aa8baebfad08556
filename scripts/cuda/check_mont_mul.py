#!/usr/bin/env python3
"""Runs the instruction sequence of mont_t::mul_inl (kernels/ff/mont.cuh: CIOS
with even/odd limb accumulators) on Python integers, emulating PTX's carry flag,
and checks it against a * b * R^-1 mod p for BLS12-381 Fq and Fr on edge cases
and random operands. It also checks the claims the kernel relies on: the carry
dropped after the odd reduction chain is 0 and no final addc overflows.

usage: check_mont_mul.py [random products per field, default 5000]
"""
import random
import sys

W = 2**32
FQ = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
FR = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001


class Flag:
    c = 0


cc = Flag()


# One function per PTX instruction the kernel uses (ptx.cuh).
def mul_lo(a, b): return a * b % W
def mul_hi(a, b): return a * b >> 32
def mad_lo_cc(a, b, c): v = a * b % W + c; cc.c = v >> 32; return v % W
def madc_lo_cc(a, b, c): v = a * b % W + c + cc.c; cc.c = v >> 32; return v % W
def madc_hi_cc(a, b, c): v = (a * b >> 32) + c + cc.c; cc.c = v >> 32; return v % W
def add_cc(a, b): v = a + b; cc.c = v >> 32; return v % W
def addc_cc(a, b): v = a + b + cc.c; cc.c = v >> 32; return v % W


def madc_hi(a, b, c):
    v = (a * b >> 32) + c + cc.c
    assert v < W, "madc.hi overflow"
    return v


def addc(a, b):
    v = a + b + cc.c
    assert v < W, "addc overflow"
    return v


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
    r = sum(v << (32 * i) for i, v in enumerate(even))
    assert r < 2 * p, "result not below 2p"
    return r - p if r >= p else r


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rng = random.Random()
    for name, p, n in (("Fq", FQ, 12), ("Fr", FR, 8)):
        r_inv = pow(2**(32 * n), -1, p)
        edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, 2**(32 * n) % p]
        cases = [(a, b) for a in edge for b in edge]
        cases += [(rng.randrange(p), rng.randrange(p)) for _ in range(count)]
        for a, b in cases:
            got, want = mont_mul(a, b, p, n), a * b * r_inv % p
            if got != want:
                sys.exit(f"{name}: mont_mul({a:#x}, {b:#x}) = {got:#x}, expected {want:#x}")
        print(f"check_mont_mul: {name} ok ({len(cases)} products)")


if __name__ == "__main__":
    main()

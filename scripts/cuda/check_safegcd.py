#!/usr/bin/env python3
"""Checks kernels/ff/safegcd.cuh, the divsteps inversion of the CUDA kernels, on
the host: compiles the header itself (host and device code are the same source)
with the machine's C++ compiler, inverts edge cases and random elements of Fq
and Fr, and compares with Python's pow(x, -1, p). Also reports, from a Python
model of the same divsteps, the most divsteps any input needed against the
fixed number the kernels run (the proven bound, rounded up to batches of 30).

usage: check_safegcd.py [random values per field, default 20000]
"""
import os
import random
import subprocess
import sys
import tempfile

FQ = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
FR = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
FIELDS = (("fq", FQ, 12, 37), ("fr", FR, 8, 25))

HARNESS = r"""
#include <cstdio>
#include <cstring>
#include "ff/safegcd.cuh"

template <class Q>
static int run(const char* hex) {
    safegcd::w32 x[Q::N32] = {0}, y[Q::N32];
    // hex, most significant digit first
    int n = (int)strlen(hex);
    for (int i = 0; i < n; i++) {
        char ch = hex[n - 1 - i];
        unsigned d = ch <= '9' ? ch - '0' : (ch | 32) - 'a' + 10;
        x[i / 8] |= (safegcd::w32)d << (4 * (i % 8));
    }
    int batches = 0;
    bool ok = safegcd::inverse<Q>(x, y, &batches);
    printf("%d %d ", ok ? 1 : 0, batches);
    for (int i = Q::N32 - 1; i >= 0; i--) printf("%08x", y[i]);
    printf("\n");
    return 0;
}

int main() {
    char field[8], hex[256];
    while (scanf("%7s %255s", field, hex) == 2) {
        if (field[1] == 'q') run<fq_safegcd>(hex);
        else run<fr_safegcd>(hex);
    }
    return 0;
}
"""


def divsteps_needed(p, x):
    """Divsteps (delta = 1) until g = 0 for f = p, g = x."""
    delta, f, g, n = 1, p, x, 0
    while g != 0:
        if delta > 0 and g & 1:
            delta, f, g = 1 - delta, g, (g - f) // 2
        elif g & 1:
            delta, f, g = 1 + delta, f, (g + f) // 2
        else:
            delta, f, g = 1 + delta, f, g // 2
        n += 1
    return n


def inputs(rng, p, count):
    bits = p.bit_length()
    xs = [0, 1, 2, 3, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, 2**(bits - 1) % p, 2**(bits - 2) - 1]
    xs += [2**k for k in range(bits - 1)] + [2**k - 1 for k in range(1, bits)]
    xs += [p - 2**k for k in range(1, bits - 1, 3)]
    xs += [pow(3, k, p) for k in range(1, 200)]
    xs += [rng.randrange(p) for _ in range(count)]
    # mostly ones or mostly zeros in binary: long runs of equal divsteps
    for _ in range(count // 10):
        v = 0
        for k in range(bits - 1):
            if rng.random() < 0.03:
                v |= 1 << k
        xs.append(v % p)
        xs.append((p - 1 - v) % p)
    return xs


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rng = random.Random()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cxx = os.environ.get("CXX", "g++")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "safegcd.cpp"), os.path.join(tmp, "safegcd")
        with open(src, "w") as f:
            f.write(HARNESS)
        subprocess.run([cxx, "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsanitize=undefined",
                        "-fno-sanitize-recover=all", "-I", os.path.join(repo, "kernels"), src, "-o", exe],
                       check=True)
        for name, p, n32, iters in FIELDS:
            xs = inputs(rng, p, count)
            feed = "".join(f"{name} {x:x}\n" for x in xs)
            out = subprocess.run([exe], input=feed, capture_output=True, text=True, check=True).stdout.split("\n")
            worst, batch_counts = 0, []
            for x, line in zip(xs, out):
                ok, batches, hexv = line.split()
                batch_counts.append(int(batches))
                got = int(hexv, 16)
                want = pow(x, -1, p) if x else 0
                if ok != "1" or got != want:
                    sys.exit(f"check_safegcd: {name}: inverse({x:#x}) = {got:#x} (g = 0: {ok}), expected {want:#x}")
            for x in xs[: 2000]:
                worst = max(worst, divsteps_needed(p, x))
            # the uniform random elements come right after the structured ones
            structured = len(xs) - count - 2 * (count // 10)
            rand = batch_counts[structured:structured + count]
            print(f"check_safegcd: {name} ok ({len(xs)} inverses; most divsteps needed by the first 2000: "
                  f"{worst}, the bound allows {30 * iters}; batches of 30 run: mean {sum(rand) / len(rand):.1f} over "
                  f"the random ones, max {max(batch_counts)} of {iters} over all)")


if __name__ == "__main__":
    main()

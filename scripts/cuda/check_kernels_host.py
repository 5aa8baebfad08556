#!/usr/bin/env python3
"""Runs CUDA kernels of crossgroth on the host and checks them against Python.

The kernels' headers compile with the host's C++ compiler through
scripts/cuda/emu/cuda_emu.h (CUDA's keywords, one thread after another; the
PTX carry-chain instructions emulated in kernels/ff/ptx.cuh), so the very
source the GPU runs is checked here, in CI, without a GPU. What runs:

- mont_t's products, squares, sums, differences, zero tests and comparisons
  in Fq and Fr as the kernels compile them: extremes, operands with halves
  near all ones, random;
- fq_inverse_batch, both methods (divsteps, Fermat), on Montgomery-form
  elements: 0, 1, p - 1, R, powers of two, random;
- the G1 and G2 MSM accumulations (the XYZZ kernels) with the levels after
  them, on sorted bucket entries whose sums Python computes in affine coordinates: uniform buckets, one hot bucket, runs of a
  repeated point (doublings), P next to -P (the identity), identity bases,
  empty buckets, and chunks that end inside a run;
- the whole device part of a G1 MSM as backends/cuda/src/msm/ launches it in
  one pass (scalar preparation, signed digits, the scatter, accumulation,
  levels, bucket reduction, window sums, the sum of the scalars equal to 1,
  tables of precomputed copies), folded as the host folds it and compared with
  Python's sum of s_i P_i: plain windows, a density, tables of 3 and 32 copies,
  scalars 0, 1, r - 1, all 1, all 0 but one. The offsets scan is a plain
  prefix sum there;
- the offsets scan's kernels themselves (tiles, block barriers, warp
  shuffles: each block's threads as OS threads), against prefix sums;
- the NTT: the twiddles kernel and the radix-4 passes (shared memory, block
  barriers, the first pass's bit-reversed gather, the last one's n^-1 or coset
  scale) as ntt.rs plans them, forward and inverse, against a Python FFT.
- the witness kernels (kernels/synthesis/spmv.cuh) as matrices.rs launches
  them: fr_spmv on CSR matrices as the recorder writes them (input and aux
  columns, coefficients +1, -1 and from the table, empty rows, a column twice,
  padding rows to m, blocks that do not divide m), every output against
  Python's sums; fr_first_unsatisfied (0xffffffff when every row holds, else
  the least failing row).

The harnesses are built with AddressSanitizer and UBSan: a kernel that reads or
writes past a buffer sized as msm/ (or matrices.rs) sizes it fails here as
memcheck would fail it on the GPU.

usage: check_kernels_host.py [--quick]
"""
import os
import random
import subprocess
import sys
import tempfile

P = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
R = 2**384 % P
GX = 0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB
GY = 0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1
R_FR = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
AUX_COLUMN = 0x80000000  # SPMV_AUX_COLUMN in kernels/synthesis/spmv.cuh


class Fq:
    """Fq's operations on ints, for the curve arithmetic below."""
    zero = 0
    add = staticmethod(lambda a, b: (a + b) % P)
    sub = staticmethod(lambda a, b: (a - b) % P)
    mul = staticmethod(lambda a, b: a * b % P)
    inv = staticmethod(lambda a: pow(a, -1, P))
    small = staticmethod(lambda k: k % P)


class Fq2:
    """Fq2 = Fq[u] / (u^2 + 1) on (c0, c1) pairs."""
    zero = (0, 0)
    add = staticmethod(lambda a, b: ((a[0] + b[0]) % P, (a[1] + b[1]) % P))
    sub = staticmethod(lambda a, b: ((a[0] - b[0]) % P, (a[1] - b[1]) % P))
    mul = staticmethod(lambda a, b: ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P))
    small = staticmethod(lambda k: (k % P, 0))

    @staticmethod
    def inv(a):
        t = pow(a[0] * a[0] + a[1] * a[1], -1, P)
        return (a[0] * t % P, -a[1] * t % P)


def ec_add(F, a, b):
    """Affine addition on y^2 = x^3 + b over F (None is the identity)."""
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if F.add(y1, y2) == F.zero:
            return None
        lam = F.mul(F.mul(F.small(3), F.mul(x1, x1)), F.inv(F.add(y1, y1)))
    else:
        lam = F.mul(F.sub(y2, y1), F.inv(F.sub(x2, x1)))
    x3 = F.sub(F.sub(F.mul(lam, lam), x1), x2)
    return (x3, F.sub(F.mul(lam, F.sub(x1, x3)), y1))


def ec_neg(F, a):
    return None if a is None else (a[0], F.sub(F.zero, a[1]))


def ec_mul(F, k, a):
    r = None
    while k:
        if k & 1:
            r = ec_add(F, r, a)
        a = ec_add(F, a, a)
        k >>= 1
    return r


def add(a, b):
    return ec_add(Fq, a, b)


def mul(k, a):
    return ec_mul(Fq, k, a)


# G2: y^2 = x^3 + 4 (1 + u) over Fq2; elements (c0, c1).
G2X = (0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
       0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E)
G2Y = (0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
       0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE)


def on_g2_curve(pt):
    x, y = pt
    return Fq2.mul(y, y) == Fq2.add(Fq2.mul(Fq2.mul(x, x), x), (4, 4))


class Curve:
    """A curve's point operations over its field F."""
    F = Fq

    @classmethod
    def add(cls, a, b):
        return ec_add(cls.F, a, b)

    @classmethod
    def neg(cls, a):
        return ec_neg(cls.F, a)

    @classmethod
    def mul(cls, k, a):
        return ec_mul(cls.F, k, a)

    @classmethod
    def from_xyzz(cls, words):
        X, Y, ZZ, ZZZ = (cls.parse(w) for w in words)
        if ZZ == cls.F.zero:
            return None
        # Montgomery factors cancel in the ratios x = X / ZZ, y = Y / ZZZ
        return (cls.F.mul(X, cls.F.inv(ZZ)), cls.F.mul(Y, cls.F.inv(ZZZ)))


class G1Curve(Curve):
    name, F, gen = "G1", Fq, (GX, GY)

    @staticmethod
    def coord_limbs(v):
        return limbs(v * R % P)

    @staticmethod
    def parse(w):
        return int(w, 16)


class G2Curve(Curve):
    name, F, gen = "G2", Fq2, (G2X, G2Y)

    @staticmethod
    def coord_limbs(v):
        return limbs(v[0] * R % P) + " " + limbs(v[1] * R % P)

    @staticmethod
    def parse(w):
        v = int(w, 16)  # 24 limbs, most significant first: c1 then c0
        return (v % 2**384, v >> 384)


def limbs(v):
    return " ".join("%x" % ((v >> (32 * i)) & 0xFFFFFFFF) for i in range(12))


def make_bases(rng, n, curve=G1Curve):
    """A random walk of points, with identities and repeats among them."""
    add = curve.add
    p = curve.mul(rng.randrange(1, 2**64), curve.gen)
    step = curve.mul(rng.randrange(1, 2**64), curve.gen)
    bases = []
    for i in range(n):
        if i % 37 == 5:
            bases.append(None)  # an identity base
        elif i % 29 == 3 and bases and bases[-1] is not None:
            bases.append(bases[-1])  # the same point twice
        else:
            p = add(p, step)
            bases.append(p)
    return bases


def cases(rng, nbases, quick):
    """(name, nb, entries): entries (key, base, negate) sorted by key."""
    scale = 1 if quick else 4
    out = []
    nb = 64
    e = [(rng.randrange(nb), rng.randrange(nbases), rng.random() < 0.5) for _ in range(600 * scale)]
    out.append(("uniform", nb, e))
    e = [(7 if rng.random() < 0.7 else rng.randrange(nb), rng.randrange(nbases), rng.random() < 0.3)
         for _ in range(700 * scale)]
    out.append(("hot bucket", nb, e))
    e = []
    for key in range(0, nb, 2):  # odd buckets stay empty
        b = rng.randrange(nbases)
        pattern = rng.choice([[(b, 0), (b, 0)], [(b, 0), (b, 1)], [(b, 0), (b, 0), (b, 1)],
                              [(b, 1), (b, 1), (b, 1), (b, 0)], [(b, 0)] * 5])
        e += [(key, bb, s) for bb, s in pattern]
        e += [(key, rng.randrange(nbases), rng.random() < 0.5) for _ in range(rng.randrange(0, 4))]
    out.append(("doublings, P and -P", nb, e))
    e = [(rng.randrange(4), rng.randrange(nbases), False) for _ in range(150 * scale)]
    out.append(("four buckets", 4, e))
    e = [(rng.randrange(512), rng.randrange(nbases), rng.random() < 0.5) for _ in range(40)]
    out.append(("sparse", 512, e))
    out.append(("single entry", 8, [(3, 1, False)]))
    return [(name, nb, sorted(e, key=lambda t: t[0])) for name, nb, e in out]


def expected(bases, nb, entries, curve=G1Curve):
    sums = [None] * nb
    for key, b, s in entries:
        pt = bases[b]
        sums[key] = curve.add(sums[key], curve.neg(pt) if s else pt)
    return sums


def from_jacobian(line):
    """blst's Jacobian (x = X / Z^2, y = Y / Z^3) in Montgomery form, as affine."""
    X, Y, Z = (int(w, 16) for w in line.split())
    if Z == 0:
        return None
    zi = pow(Z, -1, P)
    # X_m / Z_m^2 = (X / Z^2) / R, Y_m / Z_m^3 = (Y / Z^3) / R^2
    return (X * zi * zi * R % P, Y * zi * zi * zi * R * R % P)


def msm_cases(rng, quick):
    """(name, c, copies, scalars, density bits or None)."""
    n = 70 if quick else 160
    def scalars():
        v = [rng.randrange(R_FR) for _ in range(n)]
        for i, x in enumerate([0, 1, R_FR - 1, 2, 1, 0, (R_FR - 1) // 2]):
            v[rng.randrange(n)] = x
        return v
    dens = [rng.random() < 0.7 for _ in range(n)]
    return [
        ("plain, c = 4", 4, 1, scalars(), None),
        ("plain, c = 8, density", 8, 1, scalars(), dens),
        ("table of 3 copies, c = 5", 5, 3, scalars(), None),
        ("table of 32 copies (one bucket set), c = 8", 8, 32, scalars(), dens),
        ("all scalars 1", 6, 1, [1] * n, None),
        ("mostly bits, density", 6, 1,
         [rng.choice([0, 1, 1, rng.randrange(R_FR)]) if rng.random() < 0.2 else rng.choice([0, 1]) for _ in range(n)],
         dens),
        ("all scalars 0 but one", 6, 4, [0] * (n - 1) + [R_FR - 1], None),
    ]


def check_msm(exe, rng, bases, quick):
    for name, c, copies, scalars, dens in msm_cases(rng, quick):
        n = len(scalars)
        text = f"{n}\n" + "".join(
            "0 " * 24 + "\n" if b is None else f"{limbs(b[0] * R % P)} {limbs(b[1] * R % P)}\n" for b in bases[:n])
        mont = [x * 2**256 % R_FR for x in scalars]
        text += "".join(" ".join("%x" % ((m >> (32 * i)) & 0xFFFFFFFF) for i in range(8)) + "\n" for m in mont)
        if dens is None:
            text += "density 0\n"
            terms = list(zip(scalars, bases))
        else:
            words = [sum(1 << j for j in range(64) if 64 * w + j < n and dens[64 * w + j])
                     for w in range((n + 63) // 64)]
            text += "density 1\n" + " ".join("%x" % w for w in words) + "\n"
            included = [x for x, d in zip(scalars, dens) if d]
            terms = list(zip(included, bases))
        want = None
        for x, b in terms:
            want = add(want, mul(x, b))
        for l0, l1, passes in ((8, 4, 1), (64, 8, 1), (16, 4, 1), (8, 4, 3)):
            out = subprocess.run([exe, str(c), str(copies), str(l0), str(l1), str(passes)], input=text,
                                 capture_output=True, text=True, check=True).stdout.strip().split("\n")
            counted = tuple(map(int, out[0].split()))
            included = [x for x, _ in terms]
            expect_counts = (sum(1 for x in included if x not in (0, 1)), included.count(1))
            if counted != expect_counts:
                sys.exit(f"check_kernels_host: G1 MSM, {name}: general and one scalars counted {counted}, "
                         f"expected {expect_counts}")
            sets = [from_jacobian(line) for line in out[1:]]
            got = sets[-1]  # the scalars equal to 1
            for k, sk in enumerate(sets[:-1]):
                got = add(got, mul(pow(2, c * k, R_FR), sk))
            if got != want:
                sys.exit(f"check_kernels_host: G1 MSM, {name}, L={l0}/{l1}, {passes} passes: {got}, "
                         f"expected {want}")
        print(f"check_kernels_host: G1 MSM, {name} ({n} terms): classification, digit "
              "counts, scatter, accumulation, levels, bucket reduction, window sums, ones, in one pass and in three" + (", table" if copies > 1 else "") +
              ": equals Python's")


def check_fq_inverse(exe, rng, quick):
    """fq_inverse_batch (both methods) on Montgomery-form elements."""
    xs = [0, 1, 2, P - 1, P - 2, R, P - R, (P - 1) // 2] + [2**k for k in range(0, 381, 5)]
    xs += [rng.randrange(P) for _ in range(50 if quick else 400)]
    feed = "".join(limbs(x) + "\n" for x in xs)
    for method in ("divsteps", "fermat"):
        out = subprocess.run([exe, method], input=feed, capture_output=True, text=True,
                             check=True).stdout.split()
        for x, line in zip(xs, out):
            # x is the Montgomery form of a = x / R; 1 / a in that form is R^2 / x
            want = 0 if x == 0 else pow(x, -1, P) * R * R % P
            if int(line, 16) != want:
                sys.exit(f"check_kernels_host: fq_inverse_batch {method}: 1 / {x:#x} = {line}, expected {want:#x}")
        print(f"check_kernels_host: fq_inverse_batch ({method}): {len(xs)} Montgomery-form inverses equal Python's")


# -fno-strict-aliasing: the kernels copy points as uint4 vectors (load16 /
# store16), which the host compiler's type-based alias analysis may reorder (g++
# -O2 did: wrong sums); nvcc's code is unaffected. AddressSanitizer and UBSan:
# an index past a buffer the harness sized as msm/ sizes it, or undefined
# arithmetic, fails the check (a host memcheck of the kernels). Warnings off:
# the kernels are device code, linted by nvcc, not g++.
FLAGS = ["-O1", "-fno-strict-aliasing", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
         "-std=c++20", "-pthread", "-w"]
# For the harnesses that run a block's threads as OS threads (barriers): without
# AddressSanitizer, whose thread start-up made them ~50 times slower.
BARRIER_FLAGS = [f for f in FLAGS if f != "-fsanitize=address,undefined"] + ["-fsanitize=undefined"]


def check_mont_mul(exe, rng, quick):
    """mont_t's product, square, sum, difference, is_zero and equality in Fq and
    Fr: extremes, operands whose halves are near all ones, random."""
    for name, p, n in (("fq", P, 12), ("fr", R_FR, 8)):
        r = 2 ** (32 * n) % p
        half = 2 ** (16 * n)
        edge = [0, 1, 2, p - 1, p - 2, r, p - r, (p - 1) // 2, half - 1, half, half + 1, p - half, half * half // 4]
        edge += [p - 1 - (half - 1) * k for k in (1, 2)] + [(half - 1) * (half // 8) + half - 1]
        edge = [x % p for x in edge]
        pairs = [(x, y) for x in edge for y in edge]
        pairs += [(rng.randrange(p), rng.randrange(p)) for _ in range(300 if quick else 20000)]
        # both halves near all ones
        top = p // half
        pairs += [(rng.randrange(top - 2**20, top) * half + half - 1 - rng.randrange(2**20),
                   rng.randrange(top - 2**20, top) * half + half - 1 - rng.randrange(2**20)) for _ in range(200)]

        def words(v):
            return " ".join("%x" % ((v >> (32 * i)) & 0xFFFFFFFF) for i in range(n))
        feed = "".join(f"{words(x)} {words(y)}\n" for x, y in pairs)
        out = subprocess.run([exe, name], input=feed, capture_output=True, text=True, check=True).stdout.split("\n")
        rinv = pow(r, -1, p)
        for (x, y), line in zip(pairs, out):
            f = line.split()
            got = [int(v, 16) for v in f[:4]]
            want = [x * y * rinv % p, x * x * rinv % p, (x + y) % p, (x - y) % p]
            if got != want or f[4] != str(int(x == 0)) or f[5] != str(int(x == y)):
                sys.exit(f"check_kernels_host: {name} {x:#x}, {y:#x}: product, square, sum, difference, "
                         f"is_zero, equal = {line}; expected {[hex(w) for w in want]}")
        print(f"check_kernels_host: {name}: {len(pairs)} pairs' products, squares, sums, differences, zero "
              "tests and comparisons equal Python's")


def check_scan(exe, rng, quick):
    """The bucket-offsets scan: tiles of 4096 counts, one block over the tile
    sums, each tile's scan; sizes around the tile and the block."""
    sizes = [1, 7, 1023, 4096, 4097] + ([] if quick else [3 * 4096 + 17, 40000])
    for nb in sizes:
        counts = [rng.choice([0, 0, 1, 3, rng.randrange(1000)]) for _ in range(nb)]
        out = subprocess.run([exe], input=f"{nb}\n" + " ".join(map(str, counts)) + "\n", capture_output=True,
                             text=True, check=True).stdout.split("\n")
        offsets, cursor = [int(v) for v in out[0].split()], [int(v) for v in out[1].split()]
        want, acc = [], 0
        for c in counts:
            want.append(acc)
            acc += c
        if offsets != want + [acc] or cursor != want:
            sys.exit(f"check_kernels_host: bucket-offsets scan of {nb} counts differs from the prefix sums")
    print(f"check_kernels_host: the bucket-offsets scan (tiles, block barriers, warp shuffles) equals the prefix "
          f"sums at {', '.join(map(str, sizes))} buckets")


def fft(values, w):
    """Natural order in and out: X_k = sum_j x_j w^(jk) over Fr."""
    n = len(values)
    if n == 1:
        return list(values)
    even, odd = fft(values[0::2], w * w % R_FR), fft(values[1::2], w * w % R_FR)
    out, t = [0] * n, 1
    for k in range(n // 2):
        o = t * odd[k] % R_FR
        out[k], out[k + n // 2] = (even[k] + o) % R_FR, (even[k] - o) % R_FR
        t = t * w % R_FR
    return out


def check_ntt(exe, rng, quick):
    """The radix-4 NTT passes and the twiddles kernel, forward and inverse."""
    mont = 2**256 % R_FR
    fr_limbs = lambda v: " ".join("%x" % ((v * mont % R_FR >> (32 * i)) & 0xFFFFFFFF) for i in range(8))
    root = pow(7, (R_FR - 1) >> 32, R_FR)  # ROOT_OF_UNITY: the generator 7 to the odd part of r - 1
    logs = [1, 2, 5, 7, 10, 11] + ([] if quick else [13])
    for log_n in logs:
        n = 1 << log_n
        values = [rng.randrange(R_FR) for _ in range(n)]
        values[0], values[-1] = 0, R_FR - 1
        w = pow(root, 2**(32 - log_n), R_FR)
        for inverse in (0, 1):
            base = pow(w, -1, R_FR) if inverse else w
            count = max(n // 2, 1)
            bits = (count - 1).bit_length()
            lo_bits = (bits + 1) // 2
            lo = [pow(base, j, R_FR) for j in range(1 << lo_bits)]
            hi = [pow(base, j << lo_bits, R_FR) for j in range(max(-(-count // (1 << lo_bits)), 1))]
            scale = pow(n, -1, R_FR) if inverse else 1
            text = "".join(fr_limbs(v) + "\n" for v in values + lo) + f"{len(hi)}\n"
            text += "".join(fr_limbs(v) + "\n" for v in hi) + fr_limbs(scale) + "\n"
            out = subprocess.run([exe, str(log_n), str(inverse), str(lo_bits)], input=text, capture_output=True,
                                 text=True, check=True).stdout.split()
            got = [int(v, 16) * pow(mont, -1, R_FR) % R_FR for v in out]
            want = [v * scale % R_FR for v in fft(values, base)]
            if got != want:
                sys.exit(f"check_kernels_host: NTT 2^{log_n} ({'inverse' if inverse else 'forward'}) differs")
        # the coset scale of compute_h: the last pass multiplies position p by
        # c g^p, through the tables slo[p mod 2^sbits] and shi[p >> sbits]
        g, cst = 7, rng.randrange(1, R_FR)
        sbits = (log_n + 1) // 2
        slo = [cst * pow(g, j, R_FR) % R_FR for j in range(1 << sbits)]
        shi = [pow(g, j << sbits, R_FR) for j in range(max(n >> sbits, 1))]
        count = max(n // 2, 1)
        bits = (count - 1).bit_length()
        lo_bits = (bits + 1) // 2
        lo = [pow(w, j, R_FR) for j in range(1 << lo_bits)]
        hi = [pow(w, j << lo_bits, R_FR) for j in range(max(-(-count // (1 << lo_bits)), 1))]
        text = "".join(fr_limbs(v) + "\n" for v in values + lo) + f"{len(hi)}\n"
        text += "".join(fr_limbs(v) + "\n" for v in hi) + fr_limbs(1) + "\n"
        text += "".join(fr_limbs(v) + "\n" for v in slo) + f"{len(shi)}\n" + "".join(fr_limbs(v) + "\n" for v in shi)
        out = subprocess.run([exe, str(log_n), "0", str(lo_bits), str(sbits)], input=text, capture_output=True,
                             text=True, check=True).stdout.split()
        got = [int(v, 16) * pow(mont, -1, R_FR) % R_FR for v in out]
        want = [v * cst * pow(g, p, R_FR) % R_FR for p, v in enumerate(fft(values, w))]
        if got != want:
            sys.exit(f"check_kernels_host: NTT 2^{log_n} with the coset scale differs")
    print(f"check_kernels_host: NTT (twiddles, radix-4 passes in shared memory, bit reversal, n^-1, the coset "
          f"scale): forward and inverse equal Python's at 2^{', 2^'.join(map(str, logs))}")


def spmv_matrix(rng, rows, inputs, aux, ntable):
    """A CSR matrix as src/synthesis/recorded.rs records it: (row_start, col,
    coeff), col with SPMV_AUX_COLUMN set for an aux variable; rows of 0 to 7
    terms, some empty, some naming a column twice (x - x among them), the
    coefficient indices 0 (+1), 1 (-1) and the others; a few long rows (up to
    100 terms: a kernel warp reads its rows' terms 32 at a time)."""
    row_start, col, coeff = [0], [], []
    for _ in range(rows):
        kind = rng.random()
        if kind < 0.04:
            for _ in range(rng.randrange(20, 101)):
                col.append(AUX_COLUMN | rng.randrange(aux) if aux and rng.random() < 0.8 else rng.randrange(inputs))
                coeff.append(rng.choice([0, 1, rng.randrange(ntable)]))
        elif kind < 0.1:
            pass  # an empty row
        elif kind < 0.2:
            c = rng.choice([rng.randrange(inputs), AUX_COLUMN | rng.randrange(aux)] if aux else [rng.randrange(inputs)])
            col += [c, c]
            coeff += rng.choice([[0, 1], [1, 0], [0, 0], [1, 1], [0, rng.randrange(ntable)],
                                 [rng.randrange(min(2, ntable - 1), ntable), rng.randrange(ntable)]])
        else:
            for _ in range(rng.randrange(1, 8)):
                col.append(AUX_COLUMN | rng.randrange(aux) if aux and rng.random() < 0.8 else rng.randrange(inputs))
                coeff.append(rng.choice([0, 0, 1, rng.randrange(ntable)]))
        row_start.append(len(col))
    return row_start, col, coeff


def check_spmv(exe, rng, quick):
    """fr_spmv on CSR matrices and fr_first_unsatisfied, launched as
    backends/cuda/src/matrices.rs launches them (blocks of 256, and 96, which
    divides no m)."""
    mont = 2**256 % R_FR
    fr_limbs = lambda v: " ".join("%x" % ((v * mont % R_FR >> (32 * i)) & 0xFFFFFFFF) for i in range(8))
    def run(args, text, what):
        r = subprocess.run([exe, *args], input=text, capture_output=True, text=True)
        if r.returncode != 0:  # AddressSanitizer's or UBSan's report, shown without the shadow map
            report = r.stderr.split("Shadow bytes around")[0][-4000:]
            sys.exit(f"{report}\ncheck_kernels_host: {what}: the harness failed (exit {r.returncode})")
        return r.stdout
    special = [0, 1, R_FR - 1, 2, R_FR - 2]
    values = lambda k: [rng.choice(special) if rng.random() < 0.3 else rng.randrange(R_FR) for _ in range(k)]
    # (name, m, rows, inputs, aux, table length)
    shapes = [
        ("rows < m", 1024 if not quick else 512, 1000 if not quick else 300, 5, 300, 9),
        ("rows = m", 256, 256, 3, 100, 4),
        ("m < block", 64, 37, 2, 40, 2),
        ("inputs only", 128, 90, 20, 0, 6),
        ("no rows", 16, 0, 1, 5, 2),
        ("one row, one input", 1, 1, 1, 0, 2),
    ]
    for name, m, rows, inputs, aux, ntable in shapes:
        table = [1, R_FR - 1] + [rng.choice([2, R_FR - 2, (R_FR - 1) // 2, rng.randrange(1, R_FR)])
                                 for _ in range(ntable - 2)]
        row_start, col, coeff = spmv_matrix(rng, rows, inputs, aux, ntable)
        inp, auxv = [1] + values(inputs - 1), values(aux)  # input 0 is the constant one
        want = [0] * m
        for r in range(rows):
            acc = 0
            for t in range(row_start[r], row_start[r + 1]):
                c = col[t]
                v = auxv[c & ~AUX_COLUMN] if c & AUX_COLUMN else inp[c]
                acc += table[coeff[t]] * v
            want[r] = acc % R_FR
        text = f"{rows} {inputs} {aux} {len(col)} {ntable}\n" + " ".join(map(str, row_start)) + "\n"
        text += " ".join("%x" % c for c in col) + "\n" + " ".join(map(str, coeff)) + "\n"
        text += "".join(fr_limbs(v) + "\n" for v in table + inp + auxv)
        for block in (256, 96):
            out = run(["spmv", str(m), str(block)], text, f"fr_spmv, {name}, block {block}").split()
            if len(out) != m:
                sys.exit(f"check_kernels_host: fr_spmv, {name}: {len(out)} outputs, expected {m}")
            for i, (g, w) in enumerate(zip(out, want)):
                if int(g, 16) != w * mont % R_FR:  # fully reduced: the Montgomery form exactly
                    terms = " + ".join(
                        (f"aux[{col[t] & ~AUX_COLUMN}]" if col[t] & AUX_COLUMN else f"input[{col[t]}]")
                        + f" * table[{coeff[t]}]" for t in range(row_start[i], row_start[i + 1])) or "no terms"
                    sys.exit(f"check_kernels_host: fr_spmv, {name}, block {block}: out[{i}] = "
                             f"{int(g, 16) * pow(mont, -1, R_FR) % R_FR:#x}, expected {w:#x} "
                             f"({'a padding row' if i >= rows else terms})")
        print(f"check_kernels_host: fr_spmv, {name}: {rows} rows, {len(col)} terms, m = {m}, blocks of 256 and "
              f"96: equals Python's sums")
    # fr_first_unsatisfied: c = a b except on the chosen rows
    nrows = 700 if not quick else 300
    for name, rows, bad in [("all rows hold", nrows, []), ("the first fails", nrows, [0]),
                            ("the last fails", nrows, [nrows - 1]),
                            ("several fail", nrows, sorted(rng.sample(range(50, nrows), 6))),
                            ("one past the first block fails", nrows, [rng.randrange(256, nrows)]),
                            ("a single row fails", 1, [0]), ("no rows", 0, [])]:
        a, b = values(rows), values(rows)
        c = [x * y % R_FR for x, y in zip(a, b)]
        for i in bad:
            c[i] = (c[i] + rng.choice([1, R_FR - 1, rng.randrange(1, R_FR)])) % R_FR
        text = "".join(fr_limbs(v) + "\n" for v in a + b + c)
        want = min(bad, default=0xFFFFFFFF)
        for block in (256, 96):
            got = int(run(["first", str(rows), str(block)], text, f"fr_first_unsatisfied, {name}, block {block}"), 16)
            if got != want:
                sys.exit(f"check_kernels_host: fr_first_unsatisfied, {name} (rows {bad} fail), block {block}: "
                         f"{got:#x}, expected {want:#x}")
    print("check_kernels_host: fr_first_unsatisfied: 0xffffffff when every row holds, else the least failing "
          "row (the first, the last, several), blocks of 256 and 96")


def main():
    quick = "--quick" in sys.argv
    rng = random.Random()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cxx = os.environ.get("CXX", "g++")

    def build(tmp, name, flags=FLAGS):
        """Compiles scripts/cuda/emu/<name>.cpp with the kernels' headers; returns the executable."""
        exe = os.path.join(tmp, name)
        subprocess.run([cxx, *flags,
                        "-I", os.path.join(repo, "kernels"), "-I", os.path.join(repo, "scripts/cuda/emu"),
                        os.path.join(repo, f"scripts/cuda/emu/{name}.cpp"), "-o", exe], check=True)
        return exe

    assert on_g2_curve((G2X, G2Y)), "G2 generator"
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp, "msm_accumulate")
        runs = 0
        for curve in (G1Curve, G2Curve):
            bases = make_bases(rng, 97 if curve is G1Curve else 41, curve)
            words = 24 if curve is G1Curve else 48
            base_text = f"{len(bases)}\n" + "".join(
                "0 " * words + "\n" if b is None else f"{curve.coord_limbs(b[0])} {curve.coord_limbs(b[1])}\n"
                for b in bases)
            for name, nb, entries in cases(rng, len(bases), quick or curve is G2Curve):
                want = expected(bases, nb, entries, curve)
                feed = base_text + f"{nb} {len(entries)}\n" + "".join(f"{k} {b} {int(s)}\n" for k, b, s in entries)
                for l0, l1 in ((8, 4), (3, 2), (64, 8), (128, 8)):
                    out = subprocess.run([exe, curve.name.lower(), str(l0), str(l1)], input=feed,
                                         capture_output=True, text=True, check=True).stdout.strip().split("\n")
                    got = [curve.from_xyzz(line.split()) for line in out]
                    for key in range(nb):
                        if got[key] != want[key]:
                            sys.exit(f"check_kernels_host: {curve.name} L={l0}/{l1}, {name}: bucket "
                                     f"{key} is {got[key]}, expected {want[key]}")
                    runs += 1
                print(f"check_kernels_host: {curve.name}, {name}: {len(entries)} entries in {nb} buckets: the "
                      "XYZZ accumulation with its levels equals Python's sums")
        check_mont_mul(build(tmp, "mont_mul"), rng, quick)
        check_fq_inverse(build(tmp, "fq_inverse"), rng, quick)
        check_scan(build(tmp, "scan", BARRIER_FLAGS), rng, quick)
        check_ntt(build(tmp, "ntt", BARRIER_FLAGS), rng, quick)
        check_spmv(build(tmp, "spmv"), rng, quick)
        check_msm(build(tmp, "msm_host"), rng, make_bases(rng, 200), quick)
        print(f"check_kernels_host: ok ({runs} accumulation runs, {len(msm_cases(rng, quick)) * 4} MSMs)")


if __name__ == "__main__":
    main()

"""What the two WGSL field generators share: the BLS12-381 moduli and the
product-scanning Montgomery multiplication (gen-ff.py: SHADER_INT64 code;
gen-ff-portable.py: portable u32 code)."""

MODULI = {
    "fq": 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
    "fr": 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
}
WORDS = {"fq": 12, "fr": 8}


def product_scan(o, n, W, pl, pinv, a, b, m, acc_t, lit, lo32):
    """Emits the body of a Montgomery product over n limbs of W bits: column by
    column, the reduction interleaved, the result limbs in r0 .. r{n-1} (< 2p).
    a(j), b(j), m(j): expressions of the operands' limbs and of the reduction
    factors, cast to the accumulator type acc_t; lit: its literal suffix; lo32:
    the accumulator's low 32 bits."""
    mask = (1 << W) - 1
    o(f"  var t: {acc_t} = 0{lit};")
    for i in range(2 * n - 1):
        terms = [f"{a(j)} * {b(i - j)}" for j in range(max(0, i - n + 1), min(i, n - 1) + 1)]
        for j in range(max(0, i - n + 1), min(i - 1, n - 1) + 1):
            if pl[i - j] != 0:
                terms.append(f"{m(j)} * {pl[i - j]}{lit}")
        o(f"  t += {' + '.join(terms)};")
        if i < n:
            o(f"  let m{i} = ({lo32} * {pinv}u) & {mask}u;")
            if pl[0] != 0:
                o(f"  t += {m(i)} * {pl[0]}{lit};")
            o(f"  t = t >> {W}u;")
        else:
            o(f"  let r{i - n} = {lo32} & {mask}u; t = t >> {W}u;")
    o(f"  let r{n - 1} = {lo32};")

#!/usr/bin/env python3
"""Static instruction counts of kernels in a cubin, by pipe, without a GPU.

    scripts/cuda/sass_ops.py [--cubin FILE] [--top N] FUNCTION...

Disassembles the cubin (default kernels/crossgroth.sm_90.cubin; a variant's
from scripts/device/build-variants.sh works too) with nvdisasm and counts each
named function's instructions: by opcode (the N most frequent) and by the pipe
that executes them (the multiplier's IMAD pipe, FP64, the integer ALU, memory,
the rest). FUNCTION is a kernel name (g1_msm_accumulate) or an out-of-line
device function as nvdisasm names it
('$g1_msm_ones$_ZN6mont_tI9fq_paramsE8mul_callES1_S1_': one Fq product).

Counts are of the code, not of what runs: a loop's body counts once. They are
what decides between two variants of a formula whose cost is one pipe's
instructions (the MSM's accumulation is bound by the IMAD pipe).

nvdisasm comes from NVIDIA's PyPI wheel (nvidia-cuda-nvdisasm, pinned below),
installed once under $CROSSGROTH_CUDA_TOOLS (default target/cuda-tools).
"""
import collections
import os
import re
import subprocess
import sys

NVDISASM_WHEEL = "nvidia-cuda-nvdisasm==13.2.51"

PIPES = [
    ("imad", re.compile(r"^IMAD")),
    ("fp64", re.compile(r"^(DFMA|DADD|DMUL|DSETP|DMNMX)")),
    ("alu", re.compile(r"^(IADD3|LOP3|SEL|FSEL|SHF|ISETP|LEA|IABS|PRMT|FLO|POPC|BREV|MOV|CS2R|P2R|R2P|VIADD|IMNMX)")),
    ("memory", re.compile(r"^(LD|ST|ATOM|RED|LDS|STS|LDL|STL|LDG|STG|LDC|ULDC)")),
]


def nvdisasm(repo):
    tools = os.environ.get("CROSSGROTH_CUDA_TOOLS", os.path.join(repo, "target", "cuda-tools"))
    where = os.path.join(tools, "nvdisasm")
    exe = os.path.join(where, "nvidia", "cu13", "bin", "nvdisasm")
    if not os.path.exists(exe):
        print(f"sass_ops: installing {NVDISASM_WHEEL} into {where}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--no-deps", "--target", where, NVDISASM_WHEEL], check=True)
        os.chmod(exe, 0o755)
    return exe


def functions(sass):
    """Function name -> its instruction lines."""
    out, name = {}, None
    for line in sass.split("\n"):
        m = re.match(r"\s*(?:\.text\.)?([$\w.]+):\s*$", line)
        if m and not m.group(1).startswith(".L"):
            name = m.group(1)
            out.setdefault(name, [])
            continue
        if name is not None and re.search(r"/\*[0-9a-f]{4,}\*/", line):
            out[name].append(line)
    return out


def opcodes(lines):
    c = collections.Counter()
    for line in lines:
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if m:
            c[m.group(1)] += 1
    return c


def pipe_of(op):
    for name, pattern in PIPES:
        if pattern.match(op):
            return name
    return "other"


def main(argv):
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cubin, top, names = os.path.join(repo, "kernels", "crossgroth.sm_90.cubin"), 12, []
    args = iter(argv)
    for a in args:
        if a == "--cubin":
            cubin = next(args)
        elif a == "--top":
            top = int(next(args))
        else:
            names.append(a)
    if not names:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sass = subprocess.run([nvdisasm(repo), cubin], capture_output=True, text=True, check=True).stdout
    funcs = functions(sass)
    status = 0
    for name in names:
        if name not in funcs:
            print(f"sass_ops: no function {name} in {cubin}", file=sys.stderr)
            status = 1
            continue
        ops = opcodes(funcs[name])
        by_pipe = collections.Counter()
        for op, n in ops.items():
            by_pipe[pipe_of(op)] += n
        total = sum(ops.values())
        print(f"{name}: {total} instructions; " +
              ", ".join(f"{p} {by_pipe[p]}" for p in ("imad", "fp64", "alu", "memory", "other")))
        for op, n in ops.most_common(top):
            print(f"  {op:<24} {n}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

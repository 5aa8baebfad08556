#!/usr/bin/env python3
"""Compile one CUDA C translation unit to PTX with NVRTC (loaded with ctypes).

usage: nvrtc_ptx.py LIBNVRTC SOURCE OUTPUT [nvrtc options...]

NVRTC comes from the pinned PyPI wheel nvidia-cuda-nvrtc-cu12 (installed by
build-ptx.sh); the PyPI -cu12 nvcc wheels ship no nvcc driver, only ptxas.
"""
import ctypes
import os
import sys


def main():
    lib_path, src_path, out_path = sys.argv[1:4]
    opts = sys.argv[4:]
    lib = ctypes.CDLL(lib_path)
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(rc, what):
        if rc != 0:
            raise SystemExit("%s failed: %s" % (what, lib.nvrtcGetErrorString(rc).decode()))

    with open(src_path, "rb") as f:
        src = f.read()
    prog = ctypes.c_void_p()
    # The program name is a bare file name so no absolute path reaches the PTX.
    check(lib.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(src_path).encode(), 0, None, None),
          "nvrtcCreateProgram")
    c_opts = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), c_opts)
    log_size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(log_size))
    log = ctypes.create_string_buffer(log_size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if log.value.strip():
        sys.stderr.write(log.value.decode(errors="replace") + "\n")
    check(rc, "nvrtcCompileProgram")
    size = ctypes.c_size_t()
    check(lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
    ptx = ctypes.create_string_buffer(size.value)
    check(lib.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
    with open(out_path, "wb") as f:
        f.write(ptx.value)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))


if __name__ == "__main__":
    main()

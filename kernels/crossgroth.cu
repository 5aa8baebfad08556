// The single translation unit compiled to kernels/crossgroth.ptx by
// scripts/cuda/build-ptx.sh. Every kernel is extern "C" so the host finds it
// by name.
#include "ff/bls12_381.cuh"
#include "ff/fp2.cuh"
#include "ec/curves.cuh"
#include "msm/pippenger.cuh"
#include "ntt/ntt.cuh"

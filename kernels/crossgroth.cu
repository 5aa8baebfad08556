// The single translation unit compiled to kernels/crossgroth.ptx by
// scripts/cuda/build-ptx.sh. Every kernel is extern "C" so the host finds it
// by name.
#include "ff/bls12_381.cuh"
#include "ff/fp2.cuh"
#include "ff/kernels.cuh"
#include "ec/curves.cuh"
#include "msm/pippenger.cuh"
#include "ntt/ntt.cuh"
#include "setup/fixed_base.cuh"
#include "synthesis/spmv.cuh"

// Executes a trap: the launch fails with a sticky error that leaves the CUDA
// context unusable. Only for tests of what the host does then
// (CudaBackend::inject_fault_for_tests).
extern "C" __global__ void fault_for_tests() { __trap(); }

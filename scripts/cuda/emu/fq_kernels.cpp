// Host runs of the kernels over Fq elements alone (kernels/ff/kernels.cuh), for
// scripts/cuda/check_kernels_host.py. Fq elements (Montgomery form, 12 hex u32
// limbs each, one a line) on stdin, the results on stdout in the same form:
//
//   fq_kernels fermat|divsteps        fq_inverse_batch: each element's inverse
//   fq_kernels probe ROUNDS LIMBS F   fq_pipe_probe (F = 0) or
//                                     fq_pipe_probe_fp64_F on groups of four
//                                     elements (ROUNDS rounds of Fq products, the
//                                     last F of each group on the FP64 pipe, and
//                                     LIMBS FP64 limb products a round)
//   fq_kernels f64mul                 fq_f64 products of the pairs of lines
//                                     (operands anywhere below 2p), fully
//                                     reduced
#include "cuda_emu.h"
#include "crossgroth.cu"

#include <string>
#include <vector>

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool probe = mode == "probe" && argc == 5;
    if (!probe && !(argc == 2 && (mode == "fermat" || mode == "divsteps" || mode == "f64mul"))) {
        fprintf(stderr, "usage: fq_kernels fermat|divsteps < elements\n"
                        "       fq_kernels probe ROUNDS LIMB_PRODUCTS F < elements (a multiple of 4)\n"
                        "       fq_kernels f64mul < pairs of elements\n");
        return 2;
    }
    std::vector<fq_t> v;
    for (;;) {
        fq_t x;
        int got = 0;
        for (int i = 0; i < 12; i++) got += scanf("%x", &x.l[i]);
        if (got != 12) break;
        v.push_back(x);
    }
    const u32 n = (u32)v.size();
    if (mode == "f64mul") {
        for (size_t i = 0; i + 1 < v.size(); i += 2) {
            const fq_t r = (fq_f64::from(v[i]) * fq_f64::from(v[i + 1])).to_fq();
            for (int j = 11; j >= 0; j--) printf("%08x", r.l[j]);
            printf("\n");
        }
        return 0;
    }
    if (probe) {
        const u32 threads = n / 4, rounds = (u32)atoi(argv[2]), limbs = (u32)atoi(argv[3]);
        void (*const kernels[])(fq_t*, u32, u32, u32, u32) = {fq_pipe_probe, fq_pipe_probe_fp64_1, fq_pipe_probe_fp64_2,
                                                             fq_pipe_probe_fp64_3, fq_pipe_probe_fp64_4};
        const int f = atoi(argv[4]);
        if (f < 0 || f > 4) {
            fprintf(stderr, "fq_kernels probe: F is 0 to 4\n");
            return 2;
        }
        emu_launch(threads, 128, [&] { kernels[f](v.data(), threads, rounds, 1, limbs); });
    } else {
        const u32 method = mode == "divsteps" ? 1 : 0;
        emu_launch(n, 128, [&] { fq_inverse_batch(v.data(), n, method); });
    }
    for (const auto& x : v) {
        for (int i = 11; i >= 0; i--) printf("%08x", x.l[i]);
        printf("\n");
    }
    return 0;
}

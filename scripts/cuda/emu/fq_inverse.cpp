// Host run of fq_inverse_batch (kernels/ff/kernels.cuh), for
// scripts/cuda/check_kernels_host.py: Fq elements (Montgomery form, 12 hex u32
// limbs each, one a line) on stdin, their inverses by the method named
// (fermat or divsteps) on stdout, in the same form.
#include "cuda_emu.h"
#include "crossgroth.cu"

#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: fq_inverse fermat|divsteps < elements\n");
        return 2;
    }
    const u32 method = std::string(argv[1]) == "divsteps" ? 1 : 0;
    std::vector<fq_t> v;
    for (;;) {
        fq_t x;
        int got = 0;
        for (int i = 0; i < 12; i++) got += scanf("%x", &x.l[i]);
        if (got != 12) break;
        v.push_back(x);
    }
    const u32 n = (u32)v.size();
    emu_launch(n, 128, [&] { fq_inverse_batch(v.data(), n, method); });
    for (const auto& x : v) {
        for (int i = 11; i >= 0; i--) printf("%08x", x.l[i]);
        printf("\n");
    }
    return 0;
}

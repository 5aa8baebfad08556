// Host run of mont_t's products (kernels/ff/mont.cuh), for
// scripts/cuda/check_kernels_host.py: pairs of elements of the field named
// (fq or fr; Montgomery form, hex limbs, least significant first) on stdin;
// for each pair a, b on stdout: a * b (mul_inl), a^2, a + b and a - b as hex
// numbers, then a.is_zero() and a == b as 0 or 1.
#include "cuda_emu.h"
#include "crossgroth.cu"

#include <string>

template <class F>
static bool read(F& x) {
    for (int i = 0; i < F::N; i++)
        if (scanf("%x", &x.l[i]) != 1) return false;
    return true;
}

template <class F>
static void print(const F& x) {
    for (int i = F::N - 1; i >= 0; i--) printf("%08x", x.l[i]);
}

template <class F>
static int run() {
    F a, b;
    while (read(a) && read(b)) {
        print(F::mul_inl(a, b));
        printf(" ");
        print(F::sqr_inl(a));
        printf(" ");
        print(a + b);
        printf(" ");
        print(a - b);
        printf(" %d %d\n", a.is_zero() ? 1 : 0, a == b ? 1 : 0);
    }
    return 0;
}

int main(int argc, char** argv) {
    const std::string field = argc == 2 ? argv[1] : "";
    if (field == "fq") return run<fq_t>();
    if (field == "fr") return run<fr_t>();
    fprintf(stderr, "usage: mont_mul fq|fr < pairs\n");
    return 2;
}

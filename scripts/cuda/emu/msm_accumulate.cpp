// Host run of the MSM accumulation kernels, G1 and G2 (kernels/msm/pippenger.cuh),
// for scripts/cuda/check_kernels_host.py: reads bases and sorted (bucket,
// base | sign) entries on stdin, runs the XYZZ accumulation and the levels
// after it as msm/ launches them, and prints every bucket (X Y ZZ ZZZ, Montgomery form, hex
// limbs, most significant first).
//
//   msm_accumulate <g1|g2> L0 L1 < input
//   input: nbases, then per base x then y as hex u32 limbs, little endian (G1:
//          12 each; G2: 24 each, c0 then c1); nb nentries, then per entry:
//          key base negate (sorted by key)
#include <string>

#include "accumulate.h"

// Words of a coordinate: 12 (Fq) or 24 (Fq2: c0 then c1), as 32-bit limbs.
template <class F>
static u32* words(F& f) {
    return reinterpret_cast<u32*>(&f);
}

template <class A, class X, class F>
static int run(u32 L0, u32 L1) {
    const int W = sizeof(F) / 4;
    unsigned nbases = 0;
    if (scanf("%u", &nbases) != 1) return 2;
    std::vector<A> bases(nbases);
    for (auto& b : bases) {
        for (int i = 0; i < W; i++)
            if (scanf("%x", &words(b.x)[i]) != 1) return 2;
        for (int i = 0; i < W; i++)
            if (scanf("%x", &words(b.y)[i]) != 1) return 2;
    }
    unsigned nb = 0, n = 0;
    if (scanf("%u %u", &nb, &n) != 2) return 2;
    std::vector<u64> entries(n ? n : 1);
    std::vector<u32> offsets(nb + 1, 0);
    for (unsigned e = 0; e < n; e++) {
        unsigned key, base, neg;
        if (scanf("%u %u %u", &key, &base, &neg) != 3) return 2;
        entries[e] = ((u64)key << 32) | base | (neg ? 0x80000000u : 0u);
        offsets[key + 1]++;
    }
    for (unsigned k = 0; k < nb; k++) offsets[k + 1] += offsets[k];
    std::vector<X> buckets(nb, X::inf());
    emu_accumulate(bases.data(), entries.data(), offsets.data(), nb, n, L0, L1, buckets.data());
    for (auto& b : buckets) {
        F* f[4] = {&b.X, &b.Y, &b.ZZ, &b.ZZZ};
        for (int c = 0; c < 4; c++) {
            for (int i = W - 1; i >= 0; i--) printf("%08x", words(*f[c])[i]);
            printf(c < 3 ? " " : "\n");
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: msm_accumulate <g1|g2> L0 L1 < input\n");
        return 2;
    }
    const std::string curve = argv[1];
    const u32 L0 = (u32)atoi(argv[2]), L1 = (u32)atoi(argv[3]);
    if (curve == "g2") return run<g2_affine_t, g2_xyzz_t, fq2_t>(L0, L1);
    return run<g1_affine_t, g1_xyzz_t, fq_t>(L0, L1);
}

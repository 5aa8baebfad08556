// Host run of the G1 MSM accumulation kernels (kernels/msm/pippenger.cuh and
// accumulate_affine.cuh), for scripts/cuda/check_kernels_host.py: reads bases
// and sorted (bucket, base | sign) entries on stdin, runs the accumulation
// named on the command line and the levels after it as msm.rs launches them,
// and prints every bucket (X Y ZZ ZZZ, Montgomery form, hex limbs).
//
//   msm_accumulate <xyzz|affine4|affine8|affine16|affine_s4|affine_s8> L0 L1 < input
//   input: nbases, then per base 24 hex u32 limbs (x then y, little endian);
//          nb nentries, then per entry: key base negate (sorted by key)
#include "accumulate.h"

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: msm_accumulate <xyzz|affine4|affine8|affine16|affine_s4|affine_s8> L0 L1 < input\n");
        return 2;
    }
    const std::string kind = argv[1];
    const u32 L0 = (u32)atoi(argv[2]), L1 = (u32)atoi(argv[3]);
    unsigned nbases = 0;
    if (scanf("%u", &nbases) != 1) return 2;
    std::vector<g1_affine_t> bases(nbases);
    for (auto& b : bases) {
        for (int i = 0; i < 12; i++)
            if (scanf("%x", &b.x.l[i]) != 1) return 2;
        for (int i = 0; i < 12; i++)
            if (scanf("%x", &b.y.l[i]) != 1) return 2;
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
    std::vector<g1_xyzz_t> buckets(nb, g1_xyzz_t::inf());
    if (!emu_accumulate(kind, bases.data(), entries.data(), offsets.data(), nb, n, L0, L1, buckets.data())) {
        fprintf(stderr, "unknown kernel %s\n", kind.c_str());
        return 2;
    }
    for (const auto& b : buckets) {
        const fq_t* f[4] = {&b.X, &b.Y, &b.ZZ, &b.ZZZ};
        for (int c = 0; c < 4; c++) {
            for (int i = 11; i >= 0; i--) printf("%08x", f[c]->l[i]);
            printf(c < 3 ? " " : "\n");
        }
    }
    return 0;
}

// Host run of the G1 MSM accumulation kernels (kernels/msm/pippenger.cuh and
// accumulate_affine.cuh), for scripts/cuda/check_kernels_host.py: reads bases
// and sorted (bucket, base | sign) entries on stdin, runs the accumulation
// named on the command line and the levels after it as msm.rs launches them,
// and prints every bucket (X Y ZZ ZZZ, Montgomery form, hex limbs).
//
//   msm_accumulate <xyzz|affine4|affine8|affine16|affine_s4|affine_s8> L0 L1 < input
//   input: nbases, then per base 24 hex u32 limbs (x then y, little endian);
//          nb nentries, then per entry: key base negate (sorted by key)
#include "cuda_emu.h"
#include "crossgroth.cu"
#include "msm/accumulate_affine.cuh"

#include <string>
#include <vector>

template <int K>
static void launch_affine(unsigned chunks, const g1_affine_t* bases, const u64* entries, const u32* offsets, u32 nb,
                          u32 L, g1_xyzz_t* buckets, g1_xyzz_t* heads) {
    emu_launch((chunks + K - 1) / K, 128, [&] {
        msm_accumulate_affine_local<g1_affine_t, g1_xyzz_t, fq_t, K>(bases, entries, offsets, nb, L, buckets, heads);
    });
}
template <int K>
static void launch_affine_shared(unsigned chunks, const g1_affine_t* bases, const u64* entries, const u32* offsets,
                                 u32 nb, u32 L, g1_xyzz_t* buckets, g1_xyzz_t* heads) {
    emu_launch((chunks + K - 1) / K, 32, [&] {
        msm_accumulate_affine_shared<g1_affine_t, g1_xyzz_t, fq_t, K, 32>(bases, entries, offsets, nb, L, buckets,
                                                                          heads);
    });
}

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
    const unsigned chunks = n ? (n + L0 - 1) / L0 : 1;
    std::vector<g1_xyzz_t> heads(chunks), heads2(chunks);
    const g1_affine_t* B = bases.data();
    const u64* E = entries.data();
    const u32* O = offsets.data();
    g1_xyzz_t* Bk = buckets.data();
    if (n) {
        if (kind == "xyzz")
            emu_launch(chunks, 128, [&] { msm_accumulate_impl(B, E, O, nb, L0, Bk, heads.data()); });
        else if (kind == "affine4")
            launch_affine<4>(chunks, B, E, O, nb, L0, Bk, heads.data());
        else if (kind == "affine8")
            launch_affine<8>(chunks, B, E, O, nb, L0, Bk, heads.data());
        else if (kind == "affine16")
            launch_affine<16>(chunks, B, E, O, nb, L0, Bk, heads.data());
        else if (kind == "affine_s4")
            launch_affine_shared<4>(chunks, B, E, O, nb, L0, Bk, heads.data());
        else if (kind == "affine_s8")
            launch_affine_shared<8>(chunks, B, E, O, nb, L0, Bk, heads.data());
        else {
            fprintf(stderr, "unknown kernel %s\n", kind.c_str());
            return 2;
        }
        // the levels, as backends/cuda/src/msm.rs launches them
        u64 prev_max = n, prev_l = L0;
        for (u32 level = 1; prev_max > prev_l; level++) {
            const u64 cur_max = (prev_max + prev_l - 1) / prev_l;
            const unsigned threads = (unsigned)((cur_max + L1 - 1) / L1);
            g1_xyzz_t* in = level % 2 ? heads.data() : heads2.data();
            g1_xyzz_t* out = level % 2 ? heads2.data() : heads.data();
            emu_launch(threads, 128, [&] { msm_accumulate_level_impl(in, E, O, nb, L0, L1, level, Bk, out); });
            prev_max = cur_max;
            prev_l = L1;
        }
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

// Host run of the whole device part of a G1 MSM (kernels/msm/pippenger.cuh),
// launched as backends/cuda/src/msm/ launches it, in one pass or several, for
// scripts/cuda/check_kernels_host.py. The offsets scan (block barriers, warp
// shuffles: not emulated) is a plain prefix sum here.
//
//   msm_host c copies L0 L1 passes < input
//   input: n, then per base 24 hex u32 limbs (x, y; Montgomery form), then per
//          scalar 8 hex u32 limbs (Montgomery form, as the prover keeps it),
//          then "density 0" or "density 1" and ceil(n / 64) hex u64 words
//   output: the counts of general scalars and of scalars equal to 1, then one
//           line per bucket set and one for the scalars equal to 1:
//           Jacobian X Y Z (Montgomery form), hex limbs, most significant first
#include "accumulate.h"

static void print_fq(const fq_t& v) {
    for (int i = 11; i >= 0; i--) printf("%08x", v.l[i]);
}

// The window-sum tree of msm/: groups x len partial sums down to one per
// group, fan_in at a time, then Jacobian.
static void sum_to_jacobian(std::vector<g1_xyzz_t> a, u32 groups, u32 len, std::vector<g1_jacobian_t>& out) {
    const u32 fan_in = 4;
    while (len > 1) {
        const u32 f = len < fan_in ? len : fan_in;
        const u32 len2 = (len + f - 1) / f;
        std::vector<g1_xyzz_t> b((size_t)groups * len2);
        emu_launch(groups * len2, 64, [&] { msm_sum_groups_impl(a.data(), groups, len, f, b.data(), len2); });
        a.swap(b);
        len = len2;
    }
    out.resize(groups);
    emu_launch(groups, 64, [&] { msm_to_jacobian_impl(a.data(), groups, out.data()); });
}

int main(int argc, char** argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: msm_host c copies L0 L1 passes < input\n");
        return 2;
    }
    const u32 c = (u32)atoi(argv[1]), F = (u32)atoi(argv[2]), L0 = (u32)atoi(argv[3]), L1 = (u32)atoi(argv[4]);
    const u32 P = (u32)atoi(argv[5]) ? (u32)atoi(argv[5]) : 1;
    unsigned n = 0;
    if (scanf("%u", &n) != 1 || n == 0) return 2;
    std::vector<g1_affine_t> bases(n);
    for (auto& b : bases) {
        for (int i = 0; i < 12; i++)
            if (scanf("%x", &b.x.l[i]) != 1) return 2;
        for (int i = 0; i < 12; i++)
            if (scanf("%x", &b.y.l[i]) != 1) return 2;
    }
    std::vector<fr_t> scalars(n);
    for (auto& s : scalars)
        for (int i = 0; i < 8; i++)
            if (scanf("%x", &s.l[i]) != 1) return 2;
    unsigned has_density = 0;
    if (scanf(" density %u", &has_density) != 1) return 2;
    const unsigned words = (n + 63) / 64;
    std::vector<u64> density(words, 0);
    std::vector<u32> prefix(words, 0);
    if (has_density) {
        u32 acc = 0;
        for (unsigned i = 0; i < words; i++) {
            if (scanf("%llx", &density[i]) != 1) return 2;
            prefix[i] = acc;
            acc += __builtin_popcountll(density[i]);
        }
    }
    // The plan: windows, bucket sets, the table's stride (WindowPlan).
    const u32 nwin = (256 + c - 1) / c;
    const u32 wset = F > 1 ? (nwin + F - 1) / F : nwin;
    const u32 K = 1u << (c - 1), nb = wset * K;
    // The bases as the MSM reads them: F copies of each, 2^(c wset k) times it.
    std::vector<g1_affine_t> table((size_t)n * F);
    if (F > 1) {
        std::vector<g1_xyzz_t> tmp((size_t)n * (F - 1));
        std::vector<fq_t> tmp_prod((size_t)n * (F - 1));
        const u32 shift = c * wset;
        emu_launch(n, 128, [&] {
            msm_precompute_impl(bases.data(), n, F, shift, table.data(), tmp.data(), tmp_prod.data());
        });
    } else {
        table = bases;
    }
    // Passes over ranges of multiples of 64 scalars, as msm/ cuts them: each
    // classifies its range (appending to the same list of ones), sorts it and
    // accumulates it; passes after the first into empty buckets, then merged.
    const u32 per = ((n + P - 1) / P + 63) / 64 * 64;
    std::vector<u32> bidx(n), counts(nb), offsets(nb + 1), cursor(nb), one_bases(n), counters(2, 0);
    std::vector<g1_xyzz_t> buckets(nb, g1_xyzz_t::inf());
    for (u32 lo = 0; lo < n; lo += per) {
        const u32 m = n - lo < per ? n - lo : per;
        std::vector<fr_t> canon(m);
        u32* bidx_pass = bidx.data() + lo;
        // blocks of 64 threads, so that several blocks append to the lists
        emu_launch_threads(m, 64, [&] {
            msm_classify(scalars.data() + lo, m, has_density ? density.data() + lo / 64 : nullptr,
                         has_density ? prefix.data() + lo / 64 : nullptr, lo, canon.data(), bidx_pass,
                         one_bases.data(), counters.data());
        });
        std::fill(counts.begin(), counts.end(), 0u);
        emu_launch(m, 256, [&] { msm_count_digits(canon.data(), bidx_pass, m, c, nwin, wset, counts.data()); });
        offsets[0] = 0;
        for (u32 k = 0; k < nb; k++) offsets[k + 1] = offsets[k] + counts[k];
        for (u32 k = 0; k < nb; k++) cursor[k] = offsets[k];
        const u32 total = offsets[nb];
        std::vector<u64> entries(total ? total : 1);
        // blocks of 32 (the device's are 256), so that a few hundred terms
        // reach every scalar slot of a thread and several blocks
        emu_launch((m + MSM_SCATTER_SCALARS - 1) / MSM_SCATTER_SCALARS, 32, [&] {
            msm_scatter(canon.data(), bidx_pass, m, c, 0, nwin, wset, F, cursor.data(), entries.data());
        });
        if (lo == 0) {
            emu_accumulate(table.data(), entries.data(), offsets.data(), nb, total, L0, L1, buckets.data());
        } else {
            std::vector<g1_xyzz_t> pass_buckets(nb, g1_xyzz_t::inf());
            emu_accumulate(table.data(), entries.data(), offsets.data(), nb, total, L0, L1, pass_buckets.data());
            emu_launch(nb, 128, [&] { msm_bucket_merge_impl(buckets.data(), pass_buckets.data(), nb); });
        }
    }
    const u32 seg = K < 32 ? K : 32, nseg = K / seg;
    std::vector<g1_xyzz_t> segs((size_t)wset * nseg);
    emu_launch(wset * nseg, 64, [&] { msm_bucket_reduce_impl(buckets.data(), K, wset, seg, segs.data()); });
    std::vector<g1_jacobian_t> sets, ones;
    sum_to_jacobian(segs, wset, nseg, sets);
    // fewer threads than ones, so that threads add several
    const u32 t = counters[1] / 3 + 1;
    std::vector<g1_xyzz_t> part(t);
    emu_launch(t, 64, [&] { msm_ones_impl(table.data(), F, one_bases.data(), &counters[1], part.data(), t); });
    sum_to_jacobian(part, 1, t, ones);
    sets.push_back(ones[0]);
    printf("%u %u\n", counters[0], counters[1]);
    for (const auto& j : sets) {
        print_fq(j.x);
        printf(" ");
        print_fq(j.y);
        printf(" ");
        print_fq(j.z);
        printf("\n");
    }
    return 0;
}

// Host run of a crossgroth-cuda NTT (kernels/ntt/ntt.cuh): the twiddles kernel,
// then the passes as backends/cuda/src/ntt.rs plans and launches them (radix-4,
// the default), for scripts/cuda/check_kernels_host.py. The passes use shared
// memory and block barriers: emu_launch_threads.
//
//   ntt log_n inverse lo_bits [sbits] < input
//   input: 2^log_n values, then the twiddle tables lo (2^lo_bits) and hi, then
//          the output scale c (n^-1 for an inverse, else 1): Fr in Montgomery
//          form, 8 hex u32 limbs each (little endian), hi's length first; with
//          sbits, then the coset scale's tables slo (2^sbits) and shi (its
//          length first): the last pass multiplies position p by
//          slo[p mod 2^sbits] shi[p >> sbits] (scale mode 2, compute_h's coset)
//   output: the 2^log_n transformed values, one a line, most significant first
#include "cuda_emu.h"
#include "crossgroth.cu"

#include <vector>

struct Pass {
    u32 s0, k, g;
};

// ntt.rs's plan(): passes of at most NTT_BLOCK_LOG - 1 stages, equal sizes.
static std::vector<Pass> plan(u32 log_n) {
    std::vector<Pass> passes;
    if (log_n == 0) return passes;
    const u32 max_pass = NTT_BLOCK_LOG - 1;
    const u32 npass = log_n <= NTT_BLOCK_LOG ? 1 : (log_n + max_pass - 1) / max_pass;
    u32 s0 = 0;
    for (u32 i = 0; i < npass; i++) {
        const u32 k = log_n / npass + (i < log_n % npass ? 1 : 0);
        const u32 room = i == 0 ? log_n - k : s0;
        const u32 g = NTT_BLOCK_LOG - k < room ? NTT_BLOCK_LOG - k : room;
        passes.push_back({s0, k, g});
        s0 += k;
    }
    return passes;
}

static bool read_fr(fr_t& v) {
    for (int i = 0; i < 8; i++)
        if (scanf("%x", &v.l[i]) != 1) return false;
    return true;
}

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: ntt log_n inverse lo_bits [sbits] < input\n");
        return 2;
    }
    const u32 log_n = (u32)atoi(argv[1]), inverse = (u32)atoi(argv[2]), lo_bits = (u32)atoi(argv[3]);
    const bool coset = argc == 5;
    const u32 sbits = coset ? (u32)atoi(argv[4]) : 0;
    const u32 n = 1u << log_n, count = n > 1 ? n / 2 : 1;
    std::vector<fr_t> data(n), out(n), tw(count);
    for (auto& v : data)
        if (!read_fr(v)) return 2;
    std::vector<fr_t> lo(1u << lo_bits);
    for (auto& v : lo)
        if (!read_fr(v)) return 2;
    unsigned hi_len = 0;
    if (scanf("%u", &hi_len) != 1) return 2;
    std::vector<fr_t> hi(hi_len);
    for (auto& v : hi)
        if (!read_fr(v)) return 2;
    fr_t c;
    if (!read_fr(c)) return 2;
    std::vector<fr_t> slo(coset ? 1u << sbits : 0), shi;
    if (coset) {
        for (auto& v : slo)
            if (!read_fr(v)) return 2;
        unsigned shi_len = 0;
        if (scanf("%u", &shi_len) != 1) return 2;
        shi.resize(shi_len);
        for (auto& v : shi)
            if (!read_fr(v)) return 2;
    }
    emu_launch(count, 256, [&] { ntt_twiddles(tw.data(), lo.data(), hi.data(), lo_bits, count); });
    const std::vector<Pass> passes = plan(log_n);
    for (size_t i = 0; i < passes.size(); i++) {
        const Pass p = passes[i];
        const u32 first = i == 0, last = i + 1 == passes.size();
        const u32 log_e = p.g + p.k;
        const u32 block = log_e >= 7 ? 1u << (log_e - 2) : 32;  // NttKernel::Radix4.launch
        const u32 grid = n >> log_e;
        const u32 mode = !last ? 0 : coset ? 2 : inverse ? 1 : 0;
        const fr_t* src = first ? data.data() : out.data();
        emu_launch_threads(grid * block, block, [&] {
            ntt_pass4(src, out.data(), tw.data(), log_n, p.s0, p.k, p.g, first, mode, c, slo.data(), shi.data(),
                      sbits);
        });
    }
    const std::vector<fr_t>& result = passes.empty() ? data : out;
    for (const auto& v : result) {
        for (int i = 7; i >= 0; i--) printf("%08x", v.l[i]);
        printf("\n");
    }
    return 0;
}

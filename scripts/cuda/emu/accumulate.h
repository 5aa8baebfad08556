// The MSM accumulation and the levels after it, as backends/cuda/src/msm.rs
// launches them, on the host (cuda_emu.h): one helper for both harnesses.
#pragma once
#include <string>
#include <vector>

#include "cuda_emu.h"
#include "crossgroth.cu"

// Runs accumulation `kind` (xyzz, affine4|8|16 with the chains' state in the
// thread's arrays, affine_s4|s8 in shared memory) over `total` sorted entries,
// then the levels; the sums end in `buckets`. False for an unknown kind. A, X,
// F: the curve's affine and XYZZ points and its coordinates' field.
template <class A, class X, class F>
inline bool emu_accumulate(const std::string& kind, const A* bases, const u64* entries, const u32* offsets, u32 nb,
                           u32 total, u32 L0, u32 L1, X* buckets) {
    if (total == 0) return kind == "xyzz" || kind.rfind("affine", 0) == 0;
    const u32 chunks = (total + L0 - 1) / L0;
    std::vector<X> heads(chunks), heads2(chunks);
    X* h = heads.data();
    auto local = [&](auto chains) {
        constexpr int K = decltype(chains)::value;
        emu_launch((chunks + K - 1) / K, 128, [&] {
            msm_accumulate_affine_local<A, X, F, K>(bases, entries, offsets, nb, L0, buckets, h);
        });
    };
    auto shared = [&](auto chains) {
        constexpr int K = decltype(chains)::value;
        emu_launch((chunks + K - 1) / K, 32, [&] {
            msm_accumulate_affine_shared<A, X, F, K, 32>(bases, entries, offsets, nb, L0, buckets, h);
        });
    };
    if (kind == "xyzz")
        emu_launch(chunks, 128, [&] { msm_accumulate_impl(bases, entries, offsets, nb, L0, buckets, h); });
    else if (kind == "affine4") local(std::integral_constant<int, 4>());
    else if (kind == "affine8") local(std::integral_constant<int, 8>());
    else if (kind == "affine16") local(std::integral_constant<int, 16>());
    else if (kind == "affine_s4") shared(std::integral_constant<int, 4>());
    else if (kind == "affine_s8") shared(std::integral_constant<int, 8>());
    else return false;
    u64 prev_max = total, prev_l = L0;
    for (u32 level = 1; prev_max > prev_l; level++) {
        const u64 cur_max = (prev_max + prev_l - 1) / prev_l;
        X* in = level % 2 ? heads.data() : heads2.data();
        X* out = level % 2 ? heads2.data() : heads.data();
        emu_launch((u32)((cur_max + L1 - 1) / L1), 128, [&] {
            msm_accumulate_level_impl(in, entries, offsets, nb, L0, L1, level, buckets, out);
        });
        prev_max = cur_max;
        prev_l = L1;
    }
    return true;
}

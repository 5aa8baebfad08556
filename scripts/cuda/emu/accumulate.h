// The MSM accumulation and the levels after it, as backends/cuda/src/msm/
// launches them, on the host (cuda_emu.h): one helper for both harnesses.
#pragma once
#include <vector>

#include "cuda_emu.h"
#include "crossgroth.cu"

// Runs the XYZZ accumulation over `total` sorted entries, then the levels;
// the sums end in `buckets`. A, X: the curve's affine and XYZZ points.
template <class A, class X>
inline void emu_accumulate(const A* bases, const u64* entries, const u32* offsets, u32 nb, u32 total, u32 L0, u32 L1,
                           X* buckets) {
    if (total == 0) return;
    const u32 chunks = (total + L0 - 1) / L0;
    std::vector<X> heads(chunks), heads2(chunks);
    X* h = heads.data();
    emu_launch(chunks, 128, [&] { msm_accumulate_impl(bases, entries, offsets, nb, L0, buckets, h); });
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
}

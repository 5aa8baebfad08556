// Host run of the MSM's bucket-offsets scan (msm_scan_tiles, msm_scan,
// msm_scan_apply in kernels/msm/pippenger.cuh), launched as
// backends/cuda/src/msm/ launches them, for scripts/cuda/check_kernels_host.py:
// bucket counts on stdin (nb, then nb decimal counts), the offsets (nb + 1)
// and the cursor (nb) on stdout. The kernels use block barriers and warp
// shuffles: emu_launch_threads.
#include "cuda_emu.h"
#include "crossgroth.cu"

#include <vector>

int main() {
    unsigned nb = 0;
    if (scanf("%u", &nb) != 1 || nb == 0) return 2;
    std::vector<u32> counts(nb), offsets(nb + 1, 0xdeadbeefu), cursor(nb, 0xdeadbeefu);
    for (auto& c : counts)
        if (scanf("%u", &c) != 1) return 2;
    const u32 tiles = (nb + MSM_SCAN_TILE - 1) / MSM_SCAN_TILE;
    std::vector<u32> tile_sums(tiles), tile_offsets(tiles + 1), tile_cursor(tiles);
    emu_launch_threads(tiles * 1024, 1024, [&] { msm_scan_tiles(counts.data(), nb, tile_sums.data()); });
    emu_launch_threads(1024, 1024, [&] { msm_scan(tile_sums.data(), tiles, tile_offsets.data(), tile_cursor.data()); });
    emu_launch_threads(tiles * 1024, 1024, [&] {
        msm_scan_apply(counts.data(), nb, tile_offsets.data(), offsets.data(), cursor.data());
    });
    for (u32 v : offsets) printf("%u ", v);
    printf("\n");
    for (u32 v : cursor) printf("%u ", v);
    printf("\n");
    return 0;
}

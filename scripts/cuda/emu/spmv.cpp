// Host run of the witness kernels of kernels/synthesis/spmv.cuh, launched as
// backends/cuda/src/matrices.rs launches them, for
// scripts/cuda/check_kernels_host.py: fr_spmv as evaluate_matrices does (one
// warp a group of 32 outputs, m rounded up to whole warps, blocks of 256, its
// threads run at once for the warp shuffles) and fr_first_unsatisfied as
// first_unsatisfied does (rows threads, blocks of 256, *first set to
// 0xffffffff first). The block size is an argument, so that one that does not
// divide m can be run too. Buffers are sized as matrices.rs sizes them (an
// empty col or coeff as one entry, as upload_csr uploads it), except a, b, c
// of first_unsatisfied, sized at rows (not m) so that a read past the rows
// fails too.
//
//   spmv spmv m block < input
//   input: rows inputs aux terms ntable (decimal); row_start (rows + 1,
//          decimal); col (terms, hex: bit 31 set for an aux variable); coeff
//          (terms, decimal); then Fr values: the table (ntable), input
//          (inputs), aux (aux)
//   output: out[0..m], one a line, most significant limb first
//
//   spmv first rows block < input
//   input: a, b, c (rows Fr values each)
//   output: *first after the kernel, in hex
//
// Fr values are in Montgomery form, 8 hex u32 limbs each, little endian.
#include "cuda_emu.h"
#include "crossgroth.cu"

#include <string>
#include <vector>

static bool read_fr(fr_t& v) {
    for (int i = 0; i < 8; i++)
        if (scanf("%x", &v.l[i]) != 1) return false;
    return true;
}

static bool read_frs(std::vector<fr_t>& v) {
    for (auto& x : v)
        if (!read_fr(x)) return false;
    return true;
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: spmv spmv m block < input | spmv first rows block < input\n");
        return 2;
    }
    const std::string mode = argv[1];
    const u32 n = (u32)atoi(argv[2]), block = (u32)atoi(argv[3]);
    if (mode == "spmv") {
        const u32 m = n;
        unsigned rows, inputs, aux, terms, ntable;
        if (scanf("%u %u %u %u %u", &rows, &inputs, &aux, &terms, &ntable) != 5 || rows > m) return 2;
        std::vector<u32> row_start(rows + 1), col(terms ? terms : 1), coeff(terms ? terms : 1);
        for (auto& s : row_start)
            if (scanf("%u", &s) != 1) return 2;
        for (u32 t = 0; t < terms; t++)
            if (scanf("%x", &col[t]) != 1) return 2;
        for (u32 t = 0; t < terms; t++)
            if (scanf("%u", &coeff[t]) != 1) return 2;
        std::vector<fr_t> table(ntable), input(inputs), aux_v(aux), out(m);
        if (!read_frs(table) || !read_frs(input) || !read_frs(aux_v)) return 2;
        for (auto& v : out) memset(v.l, 0xa5, sizeof v.l);  // every output must be written
        emu_launch_threads((m + 31) / 32 * 32, block, [&] {
            fr_spmv(out.data(), row_start.data(), col.data(), coeff.data(), table.data(), input.data(),
                    aux_v.data(), rows, m);
        });
        for (const auto& v : out) {
            for (int i = 7; i >= 0; i--) printf("%08x", v.l[i]);
            printf("\n");
        }
    } else if (mode == "first") {
        const u32 rows = n;
        std::vector<fr_t> a(rows), b(rows), c(rows);
        if (!read_frs(a) || !read_frs(b) || !read_frs(c)) return 2;
        std::vector<u32> first(1, 0xffffffffu);
        if (rows > 0)  // launch! launches nothing for no threads
            emu_launch(rows, block, [&] { fr_first_unsatisfied(a.data(), b.data(), c.data(), rows, first.data()); });
        printf("%x\n", first[0]);
    } else {
        fprintf(stderr, "spmv: unknown mode %s\n", argv[1]);
        return 2;
    }
    return 0;
}

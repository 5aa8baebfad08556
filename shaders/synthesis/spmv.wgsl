// a, b or c of a proof from its witness and one of the circuit's recorded
// constraint matrices (src/synthesis/recorded.rs), so that only the witness
// crosses the bus; the cuda twin is kernels/synthesis/spmv.cuh.
//
// A matrix is in compressed sparse rows: column `col` names an aux variable
// when its top bit is set and an input otherwise; `coeff` indexes the shape's
// table of distinct coefficients, whose entries 0 and 1 are +1 and -1 (a sum
// or a difference, no product). The table is in the device's Montgomery form
// and the witness in blst's, so that fr_mul(value, entry) is the product in
// blst's form: a, b and c come out as stage_abc writes them.
//
// The host cuts a matrix into pieces of rows and the aux into parts, each
// within one binding (backends/wgpu/src/matrices.rs), and runs this kernel
// once a piece and part.

const SPMV_AUX_COLUMN: u32 = 0x80000000u;

// One invocation a row of a piece: B1 the output chunk, B2 the piece's row
// starts (rebased to B3), B3 its terms (column, coefficient index), B4 the
// coefficient table followed by the inputs, B5 one part of the aux.
// prm(0) rows in the piece, prm(1) the piece's first element in B1, prm(2)
// the table's length, prm(3) / prm(4) the part's first aux index and length,
// prm(5) 1 on the piece's first pass. The first pass adds the input terms and
// writes the row's sum; each pass adds the terms whose aux variable is in its
// part, later ones onto what the earlier passes wrote.
@compute @workgroup_size(64)
fn fr_spmv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= prm(0)) { return; }
  let first = prm(5) != 0u;
  let inputs_at = 8u * prm(2);
  var acc = fr_zero();
  let end = B2[i + 1u];
  for (var t = B2[i]; t < end; t++) {
    let c = B3[2u * t];
    var v: Fr;
    if ((c & SPMV_AUX_COLUMN) != 0u) {
      // wraps to a large index below the part, so one comparison suffices
      let j = (c & ~SPMV_AUX_COLUMN) - prm(3);
      if (j >= prm(4)) { continue; }
      v = fr_ld_B5(8u * j);
    } else {
      if (!first) { continue; }
      v = fr_ld_B4(inputs_at + 8u * c);
    }
    let k = B3[2u * t + 1u];
    if (k == 0u) {
      acc = fr_add(acc, v);
    } else if (k == 1u) {
      acc = fr_sub(acc, v);
    } else {
      acc = fr_add(acc, fr_mul(v, fr_ld_B4(8u * k)));
    }
  }
  let o = 8u * (prm(1) + i);
  if (first) {
    fr_st_B1(o, acc);
  } else {
    fr_st_B1(o, fr_add(fr_ld_B1(o), acc));
  }
}

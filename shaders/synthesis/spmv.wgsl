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

// The least row of this workgroup's where a * b != c, for the host to name a
// witness that does not satisfy the circuit (the cuda twin's
// fr_first_unsatisfied).
var<workgroup> spmv_unsatisfied: atomic<u32>;

// One invocation a row of one chunk: B1, B2, B3 the chunk of a, b and c, B4
// one word a workgroup at prm(2) + its linear index: the least global row
// (prm(1) + i) it finds unsatisfied, or 0xffffffff. prm(0) rows to check
// (the padding past them is not). a, b and c are in blst's form (x 2^256), so
// fr_mul(a, b) carries 2^512 and c is brought to the same by fr_mul with
// K = prm(8..16), the words of 2^256 mod r.
@compute @workgroup_size(64)
fn fr_first_unsatisfied(
  @builtin(global_invocation_id) gid: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
) {
  if (lid == 0u) { atomicStore(&spmv_unsatisfied, 0xffffffffu); }
  // Both barriers are reached by every invocation: no return before them.
  workgroupBarrier();
  let i = linear_id(gid, nwg);
  if (i < prm(0)) {
    let o = 8u * i;
    let ab = fr_mul(fr_ld_B1(o), fr_ld_B2(o));
    let cc = fr_mul(fr_ld_B3(o), fr_const());
    if (!fr_eq(ab, cc)) { atomicMin(&spmv_unsatisfied, prm(1) + i); }
  }
  workgroupBarrier();
  let w = wid.x + wid.y * nwg.x;
  // A 2D dispatch may round the workgroups up: the extra ones hold no rows
  // and have no word of their own.
  if (lid == 0u && w < (prm(0) + 63u) / 64u) {
    B4[prm(2) + w] = atomicLoad(&spmv_unsatisfied);
  }
}

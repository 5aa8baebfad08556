// Fixed-base multiplication for parameter generation (per curve, over
// ec/xyzz.wgsl and msm/pippenger.wgsl's loads and stores): every query point
// of a Groth16 setup is k G for one generator G and a scalar k a variable or
// domain element, so a setup is many products by one point.
//
// G comes as the host's table of 8-bit windows, table[w 256 + b] = b 2^(8w) G
// in affine form (32 windows of 256 entries), so a product is at most 32
// mixed additions into an XYZZ accumulator, one invocation a scalar. The host
// normalises the results with one batched inversion, so they are bit for bit
// what adding the same entries on the host and normalising gives.

// B1 table entries [lo, hi) (lo = prm(1), hi = prm(2), device form), B2 the
// n = prm(0) scalars in canonical form (8 words, little-endian: window w
// takes byte w), B4 the XYZZ products. Where the table is larger than one
// binding, each dispatch holds a piece of it and, with prm(3) = 1, adds its
// entries to the accumulators that the previous pieces left in B4.
@compute @workgroup_size(64)
fn fixed_base_mul(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= prm(0)) { return; }
  let lo = prm(1);
  let hi = prm(2);
  var acc = xyzz_zero();
  if (prm(3) != 0u) { acc = xyzz_ld_B4(i); }
  // Only the windows the piece has entries of; a loop the driver cannot
  // unroll, so that xyzz_add is inlined once.
  for (var w = lo / 256u; w < rt_bound((hi - 1u) / 256u + 1u); w++) {
    let b = (B2[8u * i + w / 4u] >> (8u * (w % 4u))) & 0xffu;
    let e = w * 256u + b;
    if (b == 0u || e < lo || e >= hi) { continue; }
    let p = base_ld(e - lo);
    // The table of the identity holds only identities.
    if (aff_is_zero(p)) { continue; }
    acc = xyzz_add(acc, Xyzz(p.x, p.y, f_one(), f_one()), true);
  }
  xyzz_st_B4(i, acc);
}

// Pippenger, step 1: signed window digits, then a counting sort of the
// non-trivial scalars into buckets, per window (atomics). No field arithmetic.
//
// Digits are signed: d in (-2^(c-1), 2^(c-1)], so a window needs only
// nb = 2^(c-1) buckets, bucket k holding the points with |d| = k + 1 (a
// negative digit adds the negated point).
//
// B1: canonical scalars, 8 LE u32 words each (converted on the device);
// B2: the base index of each scalar; B3: 2 * nwin * nb atomic counters
// (counts, then cursors); B4: sorted entries, nwin segments of n, each a base
// index with bit 31 set when the point is to be negated; B5: the batch's
// digits, nwin segments of n (bucket | sign << 31, or NO_DIGIT).
// Parameters: prm(0) = n scalars, prm(1) = c (window bits, <= 16),
// prm(2) = nb = 2^(c-1) buckets, prm(3) = first window of this batch,
// prm(4) = nwin windows in this batch, prm(5) = the rank of the first base
// of the bases' chunk (B2 holds ranks over all the bases; B4 gets them less
// this, so the host need not rebase each chunk's ranks); prm(6) = 1 where the
// ranks are consecutive (a dense vector's), scalar i's base then being
// prm(7) + i in the chunk and B2 unread; prm(8) = s > 0 where the scalars are
// s runs of strided ranks (a vector the device holds in the NTT's transposed
// layout): B2 then holds s pairs (first position, its base in the chunk),
// ascending, and a run's bases step by prm(6).

struct Params { v: array<vec4<u32>, 8> }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> B1: array<u32>;
@group(0) @binding(2) var<storage, read_write> B2: array<u32>;
@group(0) @binding(3) var<storage, read_write> B3: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> B4: array<u32>;
@group(0) @binding(5) var<storage, read_write> B5: array<u32>;

fn prm(i: u32) -> u32 { return P.v[i >> 2u][i & 3u]; }

fn linear_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

const NO_DIGIT: u32 = 0xffffffffu;
const NEGATE: u32 = 0x80000000u;

// Bits [w c, w c + c) of scalar i (bits past 255 read as zero).
fn raw_bits(i: u32, w: u32) -> u32 {
  let c = prm(1);
  let off = w * c;
  let wi = off >> 5u;
  let sh = off & 31u;
  if (wi >= 8u) { return 0u; }
  var v = B1[8u * i + wi] >> sh;
  if (sh + c > 32u && wi + 1u < 8u) {
    v = v | (B1[8u * i + wi + 1u] << (32u - sh));
  }
  return v & ((1u << c) - 1u);
}

// Windows 0 .. first + nwin of scalar i, carrying from each to the next; the
// batch's windows are stored in B5.
@compute @workgroup_size(64)
fn msm_digits(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  let n = prm(0);
  if (i >= n) { return; }
  let c = prm(1);
  let half = 1u << (c - 1u);
  let w0 = prm(3);
  var carry = 0u;
  for (var w = 0u; w < w0 + prm(4); w++) {
    let v = raw_bits(i, w) + carry;
    var e = NO_DIGIT;
    if (v > half) {
      // d = v - 2^c < 0 (or 0 when v = 2^c), and 1 carries into window w + 1
      carry = 1u;
      let m = (1u << c) - v;
      if (m != 0u) { e = (m - 1u) | NEGATE; }
    } else {
      carry = 0u;
      if (v != 0u) { e = v - 1u; }
    }
    if (w >= w0) { B5[(w - w0) * n + i] = e; }
  }
}

@compute @workgroup_size(64)
fn msm_hist(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  let n = prm(0);
  if (i >= n) { return; }
  let nb = prm(2);
  for (var w = 0u; w < prm(4); w++) {
    let e = B5[w * n + i];
    if (e != NO_DIGIT) {
      atomicAdd(&B3[w * nb + (e & ~NEGATE)], 1u);
    }
  }
}

// One invocation per window: cursors <- exclusive prefix sums of the counts.
@compute @workgroup_size(64)
fn msm_scan(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = linear_id(gid, nwg);
  if (w >= prm(4)) { return; }
  let nb = prm(2);
  let cur = prm(4) * nb;
  var run = 0u;
  for (var d = 0u; d < nb; d++) {
    let c = atomicLoad(&B3[w * nb + d]);
    atomicStore(&B3[cur + w * nb + d], run);
    run += c;
  }
}

// After this, cursor[w][d] = end of bucket d's segment; count[w][d] its size.
@compute @workgroup_size(64)
fn msm_scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= prm(0)) { return; }
  let n = prm(0);
  let nb = prm(2);
  let cur = prm(4) * nb;
  var base = prm(7) + i;
  if (prm(8) != 0u) {
    // the last run that starts at or before i
    var lo = 0u;
    var hi = prm(8);
    while (hi - lo > 1u) {
      let mid = (lo + hi) >> 1u;
      if (B2[2u * mid] <= i) { lo = mid; } else { hi = mid; }
    }
    base = B2[2u * lo + 1u] + (i - B2[2u * lo]) * prm(6);
  } else if (prm(6) == 0u) {
    base = B2[i] - prm(5);
  }
  for (var w = 0u; w < prm(4); w++) {
    let e = B5[w * n + i];
    if (e != NO_DIGIT) {
      let pos = atomicAdd(&B3[cur + w * nb + (e & ~NEGATE)], 1u);
      B4[w * n + pos] = base | (e & NEGATE);
    }
  }
}

// Pippenger, step 1: sort the non-trivial scalars into buckets, per window
// (a counting sort with atomics). No field arithmetic here.
//
// B1: canonical scalars, 8 LE u32 words each (converted on the device);
// B2: the base index of each scalar; B3: 2 * nwin * nb atomic counters
// (counts, then cursors); B4: sorted base indices, nwin segments of n.
// Parameters: prm(0) = n scalars, prm(1) = c (window bits, <= 16),
// prm(2) = nb = 2^c buckets, prm(3) = first window of this batch,
// prm(4) = nwin windows in this batch.

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

fn digit(i: u32, w: u32) -> u32 {
  let c = prm(1);
  let off = w * c;
  let wi = off >> 5u;
  let sh = off & 31u;
  var v = B1[8u * i + wi] >> sh;
  if (sh + c > 32u && wi + 1u < 8u) {
    v = v | (B1[8u * i + wi + 1u] << (32u - sh));
  }
  return v & (prm(2) - 1u);
}

@compute @workgroup_size(64)
fn msm_hist(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= prm(0)) { return; }
  let nb = prm(2);
  for (var w = 0u; w < prm(4); w++) {
    let d = digit(i, prm(3) + w);
    if (d != 0u) {
      atomicAdd(&B3[w * nb + d], 1u);
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
  let base = B2[i];
  for (var w = 0u; w < prm(4); w++) {
    let d = digit(i, prm(3) + w);
    if (d != 0u) {
      let pos = atomicAdd(&B3[cur + w * nb + d], 1u);
      B4[w * n + pos] = base;
    }
  }
}

// Bindings shared by every crossgroth compute kernel (one explicit layout for
// all pipelines): binding 0 a uniform block of 32 u32 parameters, bindings
// 1..5 storage buffers of packed u32. Each dispatch binds its own buffers, so
// one kernel can run on any buffer. Workgroups are 64 wide and dispatched in
// 2D when there are more than 65535 of them; `linear_id` flattens that.

struct Params { v: array<vec4<u32>, 8> }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> B1: array<u32>;
@group(0) @binding(2) var<storage, read_write> B2: array<u32>;
@group(0) @binding(3) var<storage, read_write> B3: array<u32>;
@group(0) @binding(4) var<storage, read_write> B4: array<u32>;
@group(0) @binding(5) var<storage, read_write> B5: array<u32>;

fn prm(i: u32) -> u32 { return P.v[i >> 2u][i & 3u]; }

// n, in a form the compiler cannot fold (prm(31) is always 0): a loop bound
// that keeps a loop around one big inlined call from being unrolled.
fn rt_bound(n: u32) -> u32 { return min(n, n + prm(31)); }

fn linear_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

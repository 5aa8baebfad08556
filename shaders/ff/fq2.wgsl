// Fq2 = Fq[u] / (u^2 + 1), on top of ff/fq.wgsl.

struct Fq2 { c0: Fq, c1: Fq }

fn fq2_zero() -> Fq2 { return Fq2(fq_zero(), fq_zero()); }
fn fq2_one() -> Fq2 { return Fq2(fq_one(), fq_zero()); }
fn fq2_is_zero(a: Fq2) -> bool { return fq_is_zero(a.c0) && fq_is_zero(a.c1); }
fn fq2_add(a: Fq2, b: Fq2) -> Fq2 { return Fq2(fq_add(a.c0, b.c0), fq_add(a.c1, b.c1)); }
fn fq2_sub(a: Fq2, b: Fq2) -> Fq2 { return Fq2(fq_sub(a.c0, b.c0), fq_sub(a.c1, b.c1)); }
fn fq2_dbl(a: Fq2) -> Fq2 { return Fq2(fq_dbl(a.c0), fq_dbl(a.c1)); }
fn fq2_neg(a: Fq2) -> Fq2 { return Fq2(fq_neg(a.c0), fq_neg(a.c1)); }

// Karatsuba: 3 base-field multiplications, made in a loop around a single
// fq_mul call: drivers inline every call, and three inlined copies of the
// portable (30-limb) multiplication in every G2 multiplication made the
// kernels too large (NVIDIA's Vulkan driver lost the device compiling them).
// The bound comes from `rt_bound` so that the loop is not unrolled.
fn fq2_mul(a: Fq2, b: Fq2) -> Fq2 {
  var t0: Fq;
  var t1: Fq;
  var t2: Fq;
  for (var i = 0u; i < rt_bound(3u); i++) {
    var x: Fq;
    var y: Fq;
    switch i {
      case 0u: { x = a.c0; y = b.c0; }
      case 1u: { x = a.c1; y = b.c1; }
      default: { x = fq_add(a.c0, a.c1); y = fq_add(b.c0, b.c1); }
    }
    let c = fq_mul(x, y);
    switch i {
      case 0u: { t0 = c; }
      case 1u: { t1 = c; }
      default: { t2 = c; }
    }
  }
  return Fq2(fq_sub(t0, t1), fq_sub(fq_sub(t2, t0), t1));
}

fn fq2_sqr(a: Fq2) -> Fq2 { return fq2_mul(a, a); }

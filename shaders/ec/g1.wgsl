// G1: coordinates in Fq (12 words in buffers). Binds the generic point code
// (ec/xyzz.wgsl) to the field.

alias F = Fq;
const FW: u32 = 12u;
fn f_zero() -> F { return fq_zero(); }
fn f_one() -> F { return fq_one(); }
fn f_is_zero(a: F) -> bool { return fq_is_zero(a); }
fn f_add(a: F, b: F) -> F { return fq_add(a, b); }
fn f_sub(a: F, b: F) -> F { return fq_sub(a, b); }
fn f_dbl(a: F) -> F { return fq_dbl(a); }
fn f_neg(a: F) -> F { return fq_neg(a); }
fn f_mul(a: F, b: F) -> F { return fq_mul(a, b); }
fn f_sqr(a: F) -> F { return fq_sqr(a); }

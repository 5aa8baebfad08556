// G2: coordinates in Fq2 (24 words in buffers: c0 then c1, blst's layout).

alias F = Fq2;
const FW: u32 = 24u;
fn f_zero() -> F { return fq2_zero(); }
fn f_one() -> F { return fq2_one(); }
fn f_is_zero(a: F) -> bool { return fq2_is_zero(a); }
fn f_add(a: F, b: F) -> F { return fq2_add(a, b); }
fn f_sub(a: F, b: F) -> F { return fq2_sub(a, b); }
fn f_dbl(a: F) -> F { return fq2_dbl(a); }
fn f_neg(a: F) -> F { return fq2_neg(a); }
fn f_mul(a: F, b: F) -> F { return fq2_mul(a, b); }
fn f_sqr(a: F) -> F { return fq2_sqr(a); }

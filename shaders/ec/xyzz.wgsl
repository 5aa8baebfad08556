// Short Weierstrass points (y^2 = x^3 + b, a = 0) in XYZZ coordinates:
// (X, Y, ZZ, ZZZ) represents (X / ZZ, Y / ZZZ) with ZZ^3 = ZZZ^2; ZZ = 0 is
// the identity. Formulas: hyperelliptic.org EFD, "xyzz" (add-2008-s and
// dbl-2008-s-1 sharing their multiplications), exceptional cases handled. Generic over
// the field F bound by ec/g1.wgsl or ec/g2.wgsl.

struct Aff { x: F, y: F }
struct Xyzz { x: F, y: F, zz: F, zzz: F }

fn xyzz_zero() -> Xyzz { return Xyzz(f_zero(), f_zero(), f_zero(), f_zero()); }
fn xyzz_is_zero(p: Xyzz) -> bool { return f_is_zero(p.zz); }
// blst encodes the affine identity as x = y = 0 (not a curve point).
fn aff_is_zero(q: Aff) -> bool { return f_is_zero(q.x) && f_is_zero(q.y); }

// p + q for any p, q (doubling and inverses included). add-2008-s, whose
// multiplications also serve dbl-2008-s-1 when p = q: U1 = X1, S1 = Y1,
// P = 2 Y1, R = 3 X1^2, ZZ2 = ZZZ2 = 1 and no PPP in X3. The multiplications
// run in a loop with a single f_mul call, so drivers that inline every call
// (all of them) compile one field multiplication per kernel, not fifteen:
// this is what keeps pipeline creation in seconds.
fn xyzz_add(p: Xyzz, q: Xyzz) -> Xyzz {
  if (xyzz_is_zero(p)) { return q; }
  if (xyzz_is_zero(q)) { return p; }
  var u1: F; var u2: F; var s1: F; var s2: F;
  var p0: F; var r: F; var pp: F; var ppp: F; var qq: F;
  var x3: F; var y3: F; var zz3: F; var zzz3: F;
  var zz2 = q.zz;
  var zzz2 = q.zzz;
  var dbl = false;
  for (var i = 0u; i < rt_bound(15u); i++) {
    if (i == 4u && !dbl) { continue; }
    var a: F;
    var b: F;
    switch i {
      case 0u: { a = p.x; b = q.zz; }
      case 1u: { a = q.x; b = p.zz; }
      case 2u: { a = p.y; b = q.zzz; }
      case 3u: { a = q.y; b = p.zzz; }
      case 4u: { a = p.x; b = p.x; }
      case 5u: { a = p0; b = p0; }
      case 6u: { a = p0; b = pp; }
      case 7u: { a = u1; b = pp; }
      case 8u: { a = r; b = r; }
      case 9u: { a = r; b = f_sub(qq, x3); }
      case 10u: { a = s1; b = ppp; }
      case 11u: { a = p.zz; b = zz2; }
      case 12u: { a = zz3; b = pp; }
      case 13u: { a = p.zzz; b = zzz2; }
      default: { a = zzz3; b = ppp; }
    }
    let c = f_mul(a, b);
    switch i {
      case 0u: { u1 = c; }
      case 1u: { u2 = c; }
      case 2u: { s1 = c; }
      case 3u: {
        s2 = c;
        p0 = f_sub(u2, u1);
        r = f_sub(s2, s1);
        if (f_is_zero(p0)) {
          if (!f_is_zero(r)) { return xyzz_zero(); }
          dbl = true;
          u1 = p.x;
          s1 = p.y;
          p0 = f_dbl(p.y);
          zz2 = f_one();
          zzz2 = f_one();
        }
      }
      case 4u: { r = f_add(f_dbl(c), c); }
      case 5u: { pp = c; }
      case 6u: { ppp = c; }
      case 7u: { qq = c; }
      case 8u: {
        x3 = f_sub(f_sub(c, qq), qq);
        if (!dbl) { x3 = f_sub(x3, ppp); }
      }
      case 9u: { y3 = c; }
      case 10u: { y3 = f_sub(y3, c); }
      case 11u: { zz3 = c; }
      case 12u: { zz3 = c; }
      case 13u: { zzz3 = c; }
      default: { zzz3 = c; }
    }
  }
  return Xyzz(x3, y3, zz3, zzz3);
}

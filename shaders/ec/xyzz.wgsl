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
// P = 2 Y1, R = 3 X1^2, ZZ2 = ZZZ2 = 1 and no PPP in X3. With q_aff the
// caller promises q.zz = q.zzz = 1 (madd-2008-s): the four multiplications
// by ZZ2 and ZZZ2 are skipped, as they are when doubling.
//
// The multiplications run in a loop with a single f_mul call, so drivers
// that inline every call (all of them) compile one field multiplication per
// kernel, not fifteen: this is what keeps pipeline creation in seconds. Every
// variable below is live across the whole loop, so there are as few as the
// formulas allow (p's coordinates are overwritten in place, P becomes PPP,
// U1 becomes Q): nine field values besides q, where each one that does not fit
// in registers spills around the multiplication.
fn xyzz_add(p: Xyzz, q: Xyzz, q_aff: bool) -> Xyzz {
  if (xyzz_is_zero(p)) { return q; }
  if (xyzz_is_zero(q)) { return p; }
  var x = p.x;
  var y = p.y;
  var zz = p.zz;
  var zzz = p.zzz;
  var u1 = x;  // U1, then Q
  var s1 = y;  // S1
  var pv: F;   // U2, then P, then PPP
  var r: F;    // R
  var pp: F;   // PP
  var dbl = false;
  for (var i = 0u; i < rt_bound(15u); i++) {
    if ((i == 0u || i == 2u) && q_aff) { continue; }
    if (i == 4u && !dbl) { continue; }
    if ((i == 11u || i == 13u) && (q_aff || dbl)) { continue; }
    var a: F;
    var b: F;
    switch i {
      case 0u: { a = x; b = q.zz; }
      case 1u: { a = q.x; b = zz; }
      case 2u: { a = y; b = q.zzz; }
      case 3u: { a = q.y; b = zzz; }
      case 4u: { a = x; b = x; }
      case 5u: { a = pv; b = pv; }
      case 6u: { a = pv; b = pp; }
      case 7u: { a = u1; b = pp; }
      case 8u: { a = r; b = r; }
      case 9u: { a = r; b = f_sub(u1, x); }
      case 10u: { a = s1; b = pv; }
      case 11u: { a = zz; b = q.zz; }
      case 12u: { a = zz; b = pp; }
      case 13u: { a = zzz; b = q.zzz; }
      default: { a = zzz; b = pv; }
    }
    let c = f_mul(a, b);
    switch i {
      case 0u: { u1 = c; }                      // U1 = X1 ZZ2
      case 1u: { pv = c; }                      // U2 = X2 ZZ1
      case 2u: { s1 = c; }                      // S1 = Y1 ZZZ2
      case 3u: {                                // S2 = Y2 ZZZ1
        pv = f_sub(pv, u1);                     // P = U2 - U1
        r = f_sub(c, s1);                       // R = S2 - S1
        if (f_is_zero(pv)) {
          if (!f_is_zero(r)) { return xyzz_zero(); }
          dbl = true;
          u1 = x;
          s1 = y;
          pv = f_dbl(y);
        }
      }
      case 4u: { r = f_add(f_dbl(c), c); }     // doubling: R = 3 X1^2
      case 5u: { pp = c; }                      // PP = P^2
      case 6u: { pv = c; }                      // PPP = P PP
      case 7u: { u1 = c; }                      // Q = U1 PP
      case 8u: {                                // X3 = R^2 - PPP - 2 Q
        x = f_sub(f_sub(c, u1), u1);
        if (!dbl) { x = f_sub(x, pv); }
      }
      case 9u: { y = c; }                       // R (Q - X3)
      case 10u: { y = f_sub(y, c); }            // Y3 = R (Q - X3) - S1 PPP
      case 11u: { zz = c; }                     // ZZ1 ZZ2
      case 12u: { zz = c; }                     // ZZ3 = ZZ1 ZZ2 PP
      case 13u: { zzz = c; }                    // ZZZ1 ZZZ2
      default: { zzz = c; }                     // ZZZ3 = ZZZ1 ZZZ2 PPP
    }
  }
  return Xyzz(x, y, zz, zzz);
}

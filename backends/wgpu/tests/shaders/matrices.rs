//! a, b and c computed on the device from a witness and resident constraint
//! matrices (`upload_matrices`, `abc_from_witness`), checked through their H
//! against `compute_h` of the host's sparse products on the same backend:
//! with the default binding limit on every field path, and with a lowered
//! one, where the rows fall into several output chunks and pieces and the
//! aux into several parts. Bad matrices, tables, witnesses and domains are
//! errors that name the problem. `first_unsatisfied` on those a, b and c
//! names the least row the host finds with a·b ≠ c, on random shapes, shapes
//! whose first rows hold and shapes that every row satisfies.

use std::ops::Range;

use blst::blst_fr;
use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::{CsrMatrix, Options, WgpuDevice, WgpuError, WgpuMatrices, AUX_COLUMN};
use rand::Rng;

use crate::devices::{backends, on_each_backend, options, path};

/// The lowered limit: 128 Fr elements or 512 terms a buffer.
const LIMIT: u64 = 4096;

/// How a row picks its columns.
#[derive(Clone, Copy, PartialEq)]
enum Cols {
    /// Inputs and aux variables anywhere.
    Anywhere,
    /// Aux variables near the row's share of the aux (few aux parts a piece).
    Near,
    /// Inputs only (a piece without aux terms).
    InputsOnly,
}

#[derive(Clone)]
struct Csr {
    row_start: Vec<usize>,
    col: Vec<u32>,
    coeff: Vec<u32>,
}

impl Csr {
    fn view(&self) -> CsrMatrix<'_> {
        CsrMatrix {
            row_start: &self.row_start,
            col: &self.col,
            coeff: &self.coeff,
        }
    }
}

/// A circuit shape: its matrices, coefficient table and variable counts.
struct Shape {
    abc: [Csr; 3],
    table: Vec<blst_fr>,
    inputs: usize,
    aux: usize,
}

impl Shape {
    fn views(&self) -> [CsrMatrix<'_>; 3] {
        [self.abc[0].view(), self.abc[1].view(), self.abc[2].view()]
    }

    fn upload(&self, b: &WgpuDevice) -> Result<WgpuMatrices, WgpuError> {
        b.upload_matrices(self.views(), &self.table, self.inputs, self.aux)
    }
}

/// A random matrix of `rows` rows: 0..4 terms a row, `dense` rows with 24;
/// `cols(row)` says where a row's columns lie. Coefficients +1, −1 and
/// general entries, about a third each.
/// A device on `b`'s field path whose bindings hold LIMIT bytes, so that
/// small matrices and witnesses are cut into pieces and parts.
fn limited_like(b: &WgpuDevice) -> WgpuDevice {
    WgpuDevice::with_options(Options {
        allow_int64: b.uses_int64(),
        max_binding_bytes: Some(LIMIT),
        ..options()
    })
    .unwrap()
}

fn random_matrix(
    r: &mut impl Rng,
    rows: usize,
    (inputs, aux, table): (usize, usize, usize),
    dense: Range<usize>,
    cols: impl Fn(usize) -> Cols,
) -> Csr {
    let mut m = Csr {
        row_start: vec![0],
        col: Vec::new(),
        coeff: Vec::new(),
    };
    for row in 0..rows {
        let n = if dense.contains(&row) {
            24
        } else {
            r.gen_range(0..5)
        };
        for _ in 0..n {
            let kind = cols(row);
            let input = aux == 0 || kind == Cols::InputsOnly || (inputs > 0 && r.gen_ratio(1, 4));
            let c = if input {
                r.gen_range(0..inputs) as u32
            } else if kind == Cols::Near {
                let at = row * aux / rows.max(1) + r.gen_range(0..8);
                AUX_COLUMN | at.min(aux - 1) as u32
            } else {
                AUX_COLUMN | r.gen_range(0..aux) as u32
            };
            m.col.push(c);
            m.coeff.push(match r.gen_range(0..3) {
                0 => 0,
                1 => 1,
                _ => r.gen_range(2..table) as u32,
            });
        }
        m.row_start.push(m.col.len());
    }
    m
}

/// A shape of `rows` rows: A with a dense stretch, B with a stretch of rows
/// on inputs only, C with its aux columns near the diagonal.
fn random_shape(r: &mut impl Rng, rows: usize, inputs: usize, aux: usize) -> Shape {
    let mut table = vec![fr_one(), fr_minus_one()];
    table.extend((0..6).map(|_| fr_random(r)));
    let dims = (inputs, aux, table.len());
    let stretch = rows / 3..rows / 3 + 300;
    let a = random_matrix(r, rows, dims, rows / 8..rows / 8 + 20, |_| Cols::Anywhere);
    let b = random_matrix(r, rows, dims, 0..0, |row| {
        if stretch.contains(&row) && inputs > 0 {
            Cols::InputsOnly
        } else {
            Cols::Anywhere
        }
    });
    let c = random_matrix(r, rows, dims, 0..0, |_| Cols::Near);
    Shape {
        abc: [a, b, c],
        table,
        inputs,
        aux,
    }
}

/// One matrix times the witness on the host (blst).
fn host_spmv(m: &Csr, table: &[blst_fr], input: &[blst_fr], aux: &[blst_fr]) -> Vec<blst_fr> {
    m.row_start
        .windows(2)
        .map(|w| {
            (w[0]..w[1]).fold(fr_zero(), |acc, t| {
                let c = m.col[t];
                let v = if c & AUX_COLUMN != 0 {
                    aux[(c & !AUX_COLUMN) as usize]
                } else {
                    input[c as usize]
                };
                match m.coeff[t] {
                    0 => fr_add(&acc, &v),
                    1 => fr_sub(&acc, &v),
                    k => fr_add(&acc, &fr_mul(&v, &table[k as usize])),
                }
            })
        })
        .collect()
}

/// H from a, b and c computed on `b` from a fresh random witness and `m`
/// (the matrices of `s` on `b`) equals H from the host's a, b and c.
fn check_witness(
    b: &WgpuDevice,
    s: &Shape,
    m: &WgpuMatrices,
    r: &mut impl Rng,
    log_m: u32,
    what: &str,
) {
    let input = random_scalars(r, s.inputs);
    let aux = random_scalars(r, s.aux);
    let [a, bb, c] = [0, 1, 2].map(|k| host_spmv(&s.abc[k], &s.table, &input, &aux));
    let want = b.compute_h(&a, &bb, &c, log_m).unwrap();
    let staged = b.abc_from_witness(m, &input, &aux, log_m).unwrap();
    let h = b.compute_h_staged(staged).unwrap();
    let mut got = vec![fr_zero(); h.len()];
    b.read_h(&h, &mut got).unwrap();
    assert!(
        fr_slices_eq(&got, &want),
        "{what}: H from a, b, c of the device's products differs from the host's"
    );
    eprintln!("{what}: ok ({m:?}, 2^{log_m})");
}

/// Shapes of (rows, inputs, aux, log_m): the main one (a few thousand rows,
/// padded), rows filling the domain, no aux, no inputs, no rows.
const SHAPES: [(usize, usize, usize, u32); 5] = [
    (2500, 5, 2000, 12),
    (64, 3, 50, 6),
    (40, 4, 0, 7),
    (300, 0, 200, 10),
    (0, 2, 3, 1),
];

#[test]
fn abc_from_witness_matches_the_host() {
    on_each_backend("abc_from_witness_matches_the_host", |b| {
        let mut r = rng("abc_from_witness_matches_the_host");
        for (rows, inputs, aux, log_m) in SHAPES {
            let s = random_shape(&mut r, rows, inputs, aux);
            let m = s.upload(b).unwrap();
            assert_eq!(m.rows(), rows);
            assert_eq!(m.variables(), (inputs, aux));
            let what = format!("{rows} rows, {inputs} inputs, {aux} aux");
            // a second witness on the same matrices
            for _ in 0..2 {
                check_witness(b, &s, &m, &mut r, log_m, &what);
            }
        }
    });
}

#[test]
fn abc_from_witness_in_pieces_and_parts() {
    // One field path: the pieces and parts are host code, the same on both.
    let Some(b) = backends().first() else { return };
    let l = limited_like(b);
    eprintln!(
        "--- abc_from_witness_in_pieces_and_parts on the {} path",
        path(b)
    );
    let mut r = rng("abc_from_witness_in_pieces_and_parts");
    let (rows, inputs, aux) = (2500, 5, 2000);
    let s = random_shape(&mut r, rows, inputs, aux);
    let m = s.upload(&l).unwrap();
    // 20 pieces of 128 rows a matrix, A's dense stretch halved
    assert!(m.pieces() > 60, "{m:?}: A's dense rows were not halved");
    assert!(
        m.bytes() >= WgpuDevice::matrices_bytes(rows, s.abc.iter().map(|c| c.col.len()).sum(), 8)
    );
    for log_m in [12, 13] {
        check_witness(&l, &s, &m, &mut r, log_m, "limit 4096");
    }
    // matrices belong to the backend that uploaded them
    let input = random_scalars(&mut r, inputs);
    let aux_v = random_scalars(&mut r, aux);
    expect(
        b.abc_from_witness(&m, &input, &aux_v, 12),
        "another wgpu backend",
    );
    // what cannot fit one binding of 4096 bytes: a row of 513 terms, a table
    // and inputs of 129 elements
    let mut big = random_shape(&mut r, 10, 3, 20);
    let row = &mut big.abc[2];
    row.col = vec![AUX_COLUMN; 513];
    row.coeff = vec![0; 513];
    row.row_start = [vec![0; 10], vec![513]].concat();
    expect_oom(big.upload(&l), "the 513 terms of row 9");
    let mut wide = random_shape(&mut r, 10, 3, 20);
    wide.table.extend((0..118).map(|_| fr_random(&mut r)));
    expect_oom(wide.upload(&l), "126 coefficients and 3 inputs");
}

#[test]
fn bad_matrices_and_witnesses_are_errors() {
    let Some(b) = backends().first() else { return };
    let mut r = rng("bad_matrices_and_witnesses_are_errors");
    let (rows, inputs, aux) = (50, 3, 40);
    let fresh = |r: &mut rand::rngs::StdRng| random_shape(r, rows, inputs, aux);
    let mut s = fresh(&mut r);
    s.abc[0].col[0] = AUX_COLUMN | aux as u32;
    expect(s.upload(b), "matrix A: term 0 names a variable past");
    let mut s = fresh(&mut r);
    s.abc[1].col[3] = inputs as u32;
    expect(s.upload(b), "matrix B: term 3 names a variable past");
    let mut s = fresh(&mut r);
    s.abc[2].coeff[5] = s.table.len() as u32;
    expect(s.upload(b), "matrix C: term 5 names coefficient 8 of 8");
    let mut s = fresh(&mut r);
    s.abc[1].row_start.pop();
    expect(s.upload(b), "different row counts");
    let mut s = fresh(&mut r);
    *s.abc[0].row_start.last_mut().unwrap() += 1;
    expect(s.upload(b), "matrix A: row starts do not describe");
    let mut s = fresh(&mut r);
    s.table.swap(0, 1);
    expect(s.upload(b), "+1 and -1");

    let s = fresh(&mut r);
    let m = s.upload(b).unwrap();
    let (input, aux_v) = (random_scalars(&mut r, inputs), random_scalars(&mut r, aux));
    let short = &input[..2];
    expect(
        b.abc_from_witness(&m, short, &aux_v, 6),
        "a witness of 2 inputs and 40 aux",
    );
    expect(
        b.abc_from_witness(&m, &input, &aux_v[1..], 6),
        "a witness of 3 inputs and 39 aux",
    );
    for log_m in [0, 5, 29] {
        expect(
            b.abc_from_witness(&m, &input, &aux_v, log_m),
            &format!("50 rows in a 2^{log_m} domain"),
        );
    }
    // and the good witness still goes through
    check_witness(b, &s, &m, &mut r, 6, "after the errors");
}

/// Removes the terms of `rows` from `m` (an empty row is 0 in a, b and c,
/// and 0·0 = 0 holds).
fn clear_rows(m: &mut Csr, rows: Range<usize>) {
    let (lo, hi) = (m.row_start[rows.start], m.row_start[rows.end]);
    m.col.drain(lo..hi);
    m.coeff.drain(lo..hi);
    for (i, s) in m.row_start.iter_mut().enumerate().skip(rows.start + 1) {
        *s = if i <= rows.end { lo } else { *s - (hi - lo) };
    }
}

/// Adds a term (column, coefficient index) at the end of row `row` of `m`.
fn add_term(m: &mut Csr, row: usize, col: u32, coeff: u32) {
    let at = m.row_start[row + 1];
    m.col.insert(at, col);
    m.coeff.insert(at, coeff);
    for s in &mut m.row_start[row + 1..] {
        *s += 1;
    }
}

/// A shape every row of which holds for a witness whose input 0 is 1: A's
/// rows are that input (coefficient +1), C is B.
fn satisfied_shape(r: &mut impl Rng, rows: usize, inputs: usize, aux: usize) -> Shape {
    let mut s = random_shape(r, rows, inputs, aux);
    s.abc[0] = Csr {
        row_start: (0..=rows).collect(),
        col: vec![0; rows],
        coeff: vec![0; rows],
    };
    s.abc[2] = s.abc[1].clone();
    s
}

/// A random witness of `s`, its input 0 being 1 (see [`satisfied_shape`]).
fn witness(r: &mut impl Rng, s: &Shape) -> (Vec<blst_fr>, Vec<blst_fr>) {
    let mut input = random_scalars(r, s.inputs);
    if let Some(one) = input.first_mut() {
        *one = fr_one();
    }
    (input, random_scalars(r, s.aux))
}

/// The least row `i < rows` with a[i]·b[i] ≠ c[i] (rows past a vector's end
/// are 0, as the device pads them).
fn host_first_unsatisfied(
    a: &[blst_fr],
    b: &[blst_fr],
    c: &[blst_fr],
    rows: usize,
) -> Option<usize> {
    let at = |v: &[blst_fr], i: usize| v.get(i).copied().unwrap_or_else(fr_zero);
    (0..rows).find(|&i| fr_mul(&at(a, i), &at(b, i)).l != at(c, i).l)
}

/// `first_unsatisfied` of a, b and c computed on `b` from a witness of `s`
/// equals the host's, over all the rows and over fewer; H from the same
/// StagedAbc afterwards equals the host's. Returns the row.
fn check_rows(
    b: &WgpuDevice,
    s: &Shape,
    m: &WgpuMatrices,
    r: &mut impl Rng,
    log_m: u32,
    what: &str,
) -> Option<usize> {
    let (input, aux) = witness(r, s);
    let [a, bb, c] = [0, 1, 2].map(|k| host_spmv(&s.abc[k], &s.table, &input, &aux));
    let rows = m.rows();
    let want = host_first_unsatisfied(&a, &bb, &c, rows);
    let staged = b.abc_from_witness(m, &input, &aux, log_m).unwrap();
    let got = b.first_unsatisfied(&staged, rows).unwrap();
    assert_eq!(got, want, "{what}: the first unsatisfied row");
    // the padding holds, and rows before the first unsatisfied one hold
    assert_eq!(b.first_unsatisfied(&staged, 1 << log_m).unwrap(), want);
    assert_eq!(b.first_unsatisfied(&staged, 0).unwrap(), None);
    if let Some(k) = want {
        assert_eq!(b.first_unsatisfied(&staged, k).unwrap(), None, "{what}");
        assert_eq!(b.first_unsatisfied(&staged, k + 1).unwrap(), Some(k));
    }
    // the check leaves a, b and c for H
    let h = b.compute_h_staged(staged).unwrap();
    let mut got_h = vec![fr_zero(); h.len()];
    b.read_h(&h, &mut got_h).unwrap();
    let want_h = b.compute_h(&a, &bb, &c, log_m).unwrap();
    assert!(
        fr_slices_eq(&got_h, &want_h),
        "{what}: H after first_unsatisfied differs from the host's"
    );
    eprintln!("{what}: first unsatisfied row {want:?} ({m:?}, 2^{log_m})");
    want
}

/// Random shapes (row 0 fails), shapes whose first `k` rows are empty (the
/// first failure at k or just after), shapes that every row satisfies, and
/// the same with two rows broken.
fn check_unsatisfied_shapes(
    b: &WgpuDevice,
    r: &mut rand::rngs::StdRng,
    (rows, inputs, aux, log_m): (usize, usize, usize, u32),
    broken: [usize; 2],
    what: &str,
) {
    let s = random_shape(r, rows, inputs, aux);
    let got = check_rows(b, &s, &s.upload(b).unwrap(), r, log_m, what);
    assert!(rows == 0 || got.is_some(), "{what}: random rows all hold");
    if rows == 0 {
        return;
    }
    let k = rows * 2 / 7;
    let mut s = random_shape(r, rows, inputs, aux);
    for m in &mut s.abc {
        clear_rows(m, 0..k);
    }
    let what_k = format!("{what}, first {k} rows empty");
    let got = check_rows(b, &s, &s.upload(b).unwrap(), r, log_m, &what_k);
    assert!(got >= Some(k), "{what_k}: {got:?}");
    if inputs == 0 {
        return;
    }
    let mut s = satisfied_shape(r, rows, inputs, aux);
    let what_s = format!("{what}, satisfied");
    let got = check_rows(b, &s, &s.upload(b).unwrap(), r, log_m, &what_s);
    assert_eq!(got, None, "{what_s}");
    // c = b + 1 on two rows
    for row in broken {
        add_term(&mut s.abc[2], row, 0, 0);
    }
    let what_b = format!("{what}, rows {broken:?} broken");
    let got = check_rows(b, &s, &s.upload(b).unwrap(), r, log_m, &what_b);
    assert_eq!(got, Some(broken[0]), "{what_b}");
}

#[test]
fn first_unsatisfied_matches_the_host() {
    on_each_backend("first_unsatisfied_matches_the_host", |b| {
        let mut r = rng("first_unsatisfied_matches_the_host");
        for shape in SHAPES {
            let (rows, inputs, aux, _) = shape;
            let what = format!("{rows} rows, {inputs} inputs, {aux} aux");
            let broken = [rows / 2, rows - rows / 5];
            check_unsatisfied_shapes(b, &mut r, shape, broken, &what);
        }
    });
}

#[test]
fn first_unsatisfied_in_chunks() {
    let Some(b) = backends().first() else { return };
    let l = limited_like(b);
    eprintln!("--- first_unsatisfied_in_chunks on the {} path", path(b));
    let mut r = rng("first_unsatisfied_in_chunks");
    // chunks of 128 rows, two workgroups each: row 1000 is in chunk 7's
    // second workgroup, 2400 in chunk 18
    check_unsatisfied_shapes(&l, &mut r, (2500, 5, 2000, 12), [1000, 2400], "limit 4096");

    // More workgroups than one output buffer of 4096 bytes holds (1024
    // chunks, 2048 words): a, b and c staged from the host, c = a·b but for
    // rows in the second output and one in the padding past `rows`.
    let log_m = 17;
    let n = 1usize << log_m;
    let rows = n - 100;
    let a = random_scalars(&mut r, n);
    let bv = random_scalars(&mut r, n);
    let mut c: Vec<blst_fr> = a.iter().zip(&bv).map(|(x, y)| fr_mul(x, y)).collect();
    for row in [70_000, 120_000, n - 50] {
        c[row] = fr_add(&c[row], &fr_one());
    }
    let staged = l.stage_abc(&a, &bv, &c, log_m).unwrap();
    for (upto, want) in [
        (rows, Some(70_000)),
        (70_000, None),
        (70_001, Some(70_000)),
        (n, Some(70_000)),
    ] {
        assert_eq!(
            l.first_unsatisfied(&staged, upto).unwrap(),
            want,
            "2^{log_m}, {upto} rows"
        );
        assert_eq!(host_first_unsatisfied(&a, &bv, &c, upto), want);
    }
    c[70_000] = fr_mul(&a[70_000], &bv[70_000]);
    c[120_000] = fr_mul(&a[120_000], &bv[120_000]);
    let staged = l.stage_abc(&a, &bv, &c, log_m).unwrap();
    assert_eq!(l.first_unsatisfied(&staged, rows).unwrap(), None);
    assert_eq!(l.first_unsatisfied(&staged, n).unwrap(), Some(n - 50));

    // a StagedAbc belongs to the backend that staged it; rows fit its domain
    expect(b.first_unsatisfied(&staged, 10), "another wgpu backend");
    expect(
        l.first_unsatisfied(&staged, n + 1),
        "131073 rows in a 2^17 domain",
    );
    eprintln!("first_unsatisfied in chunks: ok");
}

/// An InvalidInput error whose message contains `text`.
fn expect<T: std::fmt::Debug>(res: Result<T, WgpuError>, text: &str) {
    match res {
        Err(WgpuError::InvalidInput(msg)) if msg.contains(text) => eprintln!("refused: {msg}"),
        other => panic!("expected an InvalidInput error naming {text:?}, got {other:?}"),
    }
}

/// An OutOfMemory error whose message contains `text`.
fn expect_oom<T: std::fmt::Debug>(res: Result<T, WgpuError>, text: &str) {
    match res {
        Err(WgpuError::OutOfMemory(msg)) if msg.contains(text) => eprintln!("refused: {msg}"),
        other => panic!("expected an OutOfMemory error naming {text:?}, got {other:?}"),
    }
}

//! A circuit's constraint matrices resident on the device, and a proof's a, b
//! and c computed there from its witness (shaders/synthesis/spmv.wgsl), as
//! crossgroth-cuda does.
//!
//! With the matrices resident, a proof sends only its witness to the device
//! (a third of what a, b and c weigh) and the host never holds the three
//! evaluation vectors, which at Filecoin scale are most of a partition's
//! memory. A shader binds whole buffers of at most one binding, so each
//! matrix is held in pieces of rows and the aux goes up in parts: the kernel
//! runs once a piece and part.

use std::ops::Range;
use std::time::Instant;

use blst::blst_fr;

use crate::device::{job, WgpuDevice};
use crate::error::WgpuError;
use crate::gpu::{params, Step};
use crate::host;
use crate::ntt::StagedAbc;
use crate::shaders::Module;

pub use crossgroth_gpu_host::{CsrMatrix, AUX_COLUMN};

/// An aligned range of a matrix's rows in buffers of its own, each within
/// one binding.
struct Piece {
    first: u32,
    rows: u32,
    /// The piece's rows + 1 row starts, rebased so that they index `terms`.
    row_start: wgpu::Buffer,
    /// Two words a term: its column and its coefficient index.
    terms: wgpu::Buffer,
    /// The least and greatest aux variable its terms name, so that the
    /// passes over aux parts it does not use are skipped.
    aux: Option<(u32, u32)>,
}

/// The A, B and C matrices of one circuit shape and their coefficient table
/// (in the device's Montgomery form), on the device of the backend that
/// uploaded them ([`WgpuDevice::upload_matrices`]). Dropping it frees the
/// device memory.
pub struct WgpuMatrices {
    matrices: [Vec<Piece>; 3],
    table: wgpu::Buffer,
    table_len: usize,
    rows: usize,
    inputs: usize,
    aux: usize,
    bytes: u64,
    owner: u64,
}

impl WgpuMatrices {
    /// Constraint rows (input rows included).
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Device bytes the matrices hold.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// The input and aux variables a witness of this shape has.
    pub fn variables(&self) -> (usize, usize) {
        (self.inputs, self.aux)
    }
    /// The pieces the three matrices are held in, together (one a matrix
    /// where each fits one binding).
    pub fn pieces(&self) -> usize {
        self.matrices.iter().map(Vec::len).sum()
    }

    /// Refuses a witness of another shape or a domain that cannot hold the
    /// rows.
    fn check_witness(
        &self,
        input: &[blst_fr],
        aux: &[blst_fr],
        log_m: u32,
    ) -> Result<(), WgpuError> {
        if input.len() != self.inputs || aux.len() != self.aux {
            return Err(WgpuError::InvalidInput(format!(
                "abc_from_witness: a witness of {} inputs and {} aux for matrices of {} and {}",
                input.len(),
                aux.len(),
                self.inputs,
                self.aux
            )));
        }
        if log_m == 0 || log_m > 28 || self.rows > 1usize << log_m {
            return Err(WgpuError::InvalidInput(format!(
                "abc_from_witness: {} rows in a 2^{log_m} domain (1 <= log_m <= 28)",
                self.rows
            )));
        }
        Ok(())
    }
}

impl std::fmt::Debug for WgpuMatrices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "WgpuMatrices({} rows in {} pieces, {} inputs, {} aux)",
            self.rows,
            self.pieces(),
            self.inputs,
            self.aux
        )
    }
}

/// One part of a witness's aux on the device: variables `first..first + len`.
struct AuxPart {
    first: u32,
    len: u32,
    buf: wgpu::Buffer,
}

/// A witness on the device for one computation of a, b and c.
struct Witness {
    parts: Vec<AuxPart>,
    /// The coefficient table (copied from the matrices') then the inputs: the
    /// kernel reads both from one buffer.
    table_and_inputs: wgpu::Buffer,
    inputs: wgpu::Buffer,
}

impl WgpuDevice {
    /// Device bytes [`Self::upload_matrices`] takes for matrices of `rows`
    /// rows each, `nonzeros` terms in all and `coefficients` distinct
    /// coefficients, a few bytes a piece aside (a row start and the rounding
    /// of its buffers to 16 bytes).
    pub fn matrices_bytes(rows: usize, nonzeros: usize, coefficients: usize) -> u64 {
        crossgroth_gpu_host::matrices_bytes(rows, nonzeros, coefficients) as u64
    }

    /// Uploads A, B and C (see [`CsrMatrix`]) for witnesses of `inputs` input
    /// and `aux` aux variables. Every column and coefficient index is checked
    /// here, before anything is allocated, so that the kernel never reads
    /// past a buffer.
    pub fn upload_matrices(
        &self,
        abc: [CsrMatrix<'_>; 3],
        table: &[blst_fr],
        inputs: usize,
        aux: usize,
    ) -> Result<WgpuMatrices, WgpuError> {
        let rows = crossgroth_gpu_host::check_matrices(&abc, table.len(), inputs, aux)
            .map_err(WgpuError::InvalidInput)?;
        check_table(table)?;
        // The kernel reads the table and the inputs from one buffer.
        let binding = self.ctx.binding;
        if (table.len() + inputs) as u64 * 32 > binding {
            return Err(WgpuError::OutOfMemory(format!(
                "{} coefficients and {inputs} inputs take more than the storage binding \
                 limit of {binding} bytes",
                table.len()
            )));
        }
        let mut ranges = Vec::with_capacity(3);
        for (name, m) in ["A", "B", "C"].into_iter().zip(&abc) {
            ranges.push(piece_ranges(m.row_start, binding, name)?);
        }
        let mut matrices: [Vec<Piece>; 3] = Default::default();
        for ((pieces, m), ranges) in matrices.iter_mut().zip(&abc).zip(ranges) {
            for r in ranges {
                pieces.push(self.upload_piece(m, r)?);
            }
        }
        let words: Vec<u32> = table
            .iter()
            .flat_map(|t| self.ctx.radix.fr_dev(t))
            .collect();
        let table_buf = self.ctx.upload(&words, 0, "coefficient table")?;
        let buffers = matrices
            .iter()
            .flatten()
            .flat_map(|p| [&p.row_start, &p.terms]);
        let bytes = buffers.chain([&table_buf]).map(|b| b.size()).sum();
        let nonzeros: usize = abc.iter().map(|m| m.col.len()).sum();
        log::info!(
            "wgpu: constraint matrices of {rows} rows and {nonzeros} terms resident \
             ({:.1} MiB)",
            bytes as f64 / (1u64 << 20) as f64
        );
        Ok(WgpuMatrices {
            matrices,
            table: table_buf,
            table_len: table.len(),
            rows,
            inputs,
            aux,
            bytes,
            owner: self.id,
        })
    }

    fn upload_piece(&self, m: &CsrMatrix<'_>, r: Range<usize>) -> Result<Piece, WgpuError> {
        let base = m.row_start[r.start];
        let starts: Vec<u32> = m.row_start[r.start..=r.end]
            .iter()
            .map(|&s| (s - base) as u32)
            .collect();
        let t = base..m.row_start[r.end];
        let (col, coeff) = (&m.col[t.clone()], &m.coeff[t]);
        let terms: Vec<u32> = col.iter().zip(coeff).flat_map(|(&c, &k)| [c, k]).collect();
        let aux = col
            .iter()
            .filter(|&&c| c & AUX_COLUMN != 0)
            .map(|&c| c & !AUX_COLUMN)
            .fold(None, |span: Option<(u32, u32)>, c| match span {
                None => Some((c, c)),
                Some((lo, hi)) => Some((lo.min(c), hi.max(c))),
            });
        Ok(Piece {
            first: r.start as u32,
            rows: r.len() as u32,
            row_start: self.ctx.upload(&starts, 0, "matrix row starts")?,
            terms: self.ctx.upload(&terms, 0, "matrix terms")?,
            aux,
        })
    }

    /// A proof's a, b and c (each zero-padded to 2^log_m) computed on the
    /// device from its witness and `m`, in the buffers
    /// [`Self::compute_h_staged`] takes: only the witness is sent, and a, b
    /// and c are never on the host.
    pub fn abc_from_witness(
        &self,
        m: &WgpuMatrices,
        input: &[blst_fr],
        aux: &[blst_fr],
        log_m: u32,
    ) -> Result<StagedAbc, WgpuError> {
        if m.owner != self.id {
            return Err(WgpuError::InvalidInput(
                "constraint matrices uploaded by another wgpu backend".into(),
            ));
        }
        m.check_witness(input, aux, log_m)?;
        let e = self.chunk_log(log_m, "abc_from_witness")?;
        let began = Instant::now();
        let w = Witness {
            parts: self.upload_aux(aux)?,
            table_and_inputs: self.ctx.storage(
                (m.table_len + m.inputs) as u64 * 32,
                "coefficient table and inputs",
            )?,
            inputs: self
                .ctx
                .upload(host::fr_as_words(input), 0, "witness inputs")?,
        };
        let vecs = ["a", "b", "c"]
            .iter()
            .map(|name| {
                (0..1usize << (log_m - e))
                    .map(|_| self.ctx.storage(32 << e, name))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        {
            let steps = spmv_steps(m, &w, &vecs, e);
            let _g = self.lock()?;
            self.ctx
                .run_steps("abc_from_witness", &steps, &[], &mut |_, _, _| {})?;
        }
        // The witness served only the products: its device memory goes now.
        drop(w);
        Ok(StagedAbc {
            vecs,
            log_m,
            e,
            owner: self.id,
            written: began.elapsed(),
        })
    }

    /// The least row `i < rows` of `abc` where a[i]·b[i] ≠ c[i], or `None`
    /// where every one holds: the check that a witness satisfies the
    /// circuit, made on the device so that a, b and c stay there. `abc` is
    /// left as it was, for [`Self::compute_h_staged`] to take afterwards.
    pub fn first_unsatisfied(
        &self,
        abc: &StagedAbc,
        rows: usize,
    ) -> Result<Option<usize>, WgpuError> {
        if abc.owner != self.id {
            return Err(WgpuError::InvalidInput(
                "first_unsatisfied: a, b and c staged by another wgpu backend".into(),
            ));
        }
        if rows > 1usize << abc.log_m {
            return Err(WgpuError::InvalidInput(format!(
                "first_unsatisfied: {rows} rows in a 2^{} domain",
                abc.log_m
            )));
        }
        let per = 1usize << abc.e;
        // (chunk, rows in it, its first word in its output, which output)
        let mut launches = Vec::new();
        // words each output holds; a new output where one binding is full
        let mut outputs: Vec<u64> = Vec::new();
        let per_output = (self.ctx.binding / 4).max(1);
        for (k, first) in (0..rows).step_by(per).enumerate() {
            let n = per.min(rows - first);
            let words = n.div_ceil(64) as u64;
            let last = outputs.len().wrapping_sub(1);
            match outputs.last_mut() {
                Some(used) if *used + words <= per_output => {
                    launches.push((k, n, *used, last));
                    *used += words;
                }
                _ => {
                    launches.push((k, n, 0, outputs.len()));
                    outputs.push(words);
                }
            }
        }
        let bufs = outputs
            .iter()
            .map(|&w| self.ctx.storage(w * 4, "first unsatisfied rows"))
            .collect::<Result<Vec<_>, _>>()?;
        let k_words = self.ctx.radix.fr_k_from_dev();
        let jobs: Vec<_> = launches
            .iter()
            .map(|&(k, n, at, out)| {
                let head = [n as u32, (k * per) as u32, at as u32];
                job(
                    Module::Fr,
                    "fr_first_unsatisfied",
                    params(&head, &k_words),
                    &[
                        (1, &abc.vecs[0][k]),
                        (2, &abc.vecs[1][k]),
                        (3, &abc.vecs[2][k]),
                        (4, &bufs[out]),
                    ],
                    n as u64,
                )
            })
            .collect();
        let reads: Vec<_> = bufs.iter().zip(&outputs).map(|(b, &w)| (b, 0, w)).collect();
        let words = {
            let _g = self.lock()?;
            self.ctx.run("first_unsatisfied", &jobs, &reads)?
        };
        // Rows fit u32 (at most 2^28), so the marker is never a row.
        Ok(words
            .iter()
            .flatten()
            .copied()
            .filter(|&w| w != u32::MAX)
            .min()
            .map(|w| w as usize))
    }

    /// The aux in parts of at most one binding each.
    fn upload_aux(&self, aux: &[blst_fr]) -> Result<Vec<AuxPart>, WgpuError> {
        let per = (self.ctx.binding / 32).max(1) as usize;
        aux.chunks(per)
            .enumerate()
            .map(|(i, part)| {
                Ok(AuxPart {
                    first: (i * per) as u32,
                    len: part.len() as u32,
                    buf: self.ctx.upload(host::fr_as_words(part), 0, "witness aux")?,
                })
            })
            .collect()
    }
}

/// The copies that put the table and the inputs in one buffer, then one
/// fr_spmv launch a piece and pass into a, b and c (`vecs`, chunks of 2^e).
fn spmv_steps<'a>(
    m: &'a WgpuMatrices,
    w: &'a Witness,
    vecs: &'a [Vec<wgpu::Buffer>],
    e: u32,
) -> Vec<Step<'a>> {
    let table_bytes = m.table_len as u64 * 32;
    let mut steps = vec![Step::Copy {
        src: &m.table,
        from: 0,
        dst: &w.table_and_inputs,
        at: 0,
        bytes: table_bytes,
    }];
    if m.inputs > 0 {
        steps.push(Step::Copy {
            src: &w.inputs,
            from: 0,
            dst: &w.table_and_inputs,
            at: table_bytes,
            bytes: m.inputs as u64 * 32,
        });
    }
    for (pieces, chunks) in m.matrices.iter().zip(vecs) {
        for piece in pieces {
            let out = &chunks[(piece.first >> e) as usize];
            let at = piece.first & ((1 << e) - 1);
            for (pass, part) in passes(piece, &w.parts).into_iter().enumerate() {
                let (first, len) = part.map_or((0, 0), |p| (p.first, p.len));
                let head = [
                    piece.rows,
                    at,
                    m.table_len as u32,
                    first,
                    len,
                    (pass == 0) as u32,
                ];
                let mut bufs = vec![
                    (1, out),
                    (2, &piece.row_start),
                    (3, &piece.terms),
                    (4, &w.table_and_inputs),
                ];
                bufs.extend(part.map(|p| (5, &p.buf)));
                steps.push(Step::Run(job(
                    Module::Fr,
                    "fr_spmv",
                    params(&head, &[]),
                    &bufs,
                    piece.rows as u64,
                )));
            }
        }
    }
    steps
}

/// The aux parts a piece's passes read, in order: those holding a variable
/// its terms name, or none (one pass without aux) where they name none.
fn passes<'a>(piece: &Piece, parts: &'a [AuxPart]) -> Vec<Option<&'a AuxPart>> {
    let mut used: Vec<Option<&AuxPart>> = match piece.aux {
        Some((lo, hi)) => parts
            .iter()
            .filter(|p| p.first <= hi && lo < p.first + p.len)
            .map(Some)
            .collect(),
        None => Vec::new(),
    };
    // The first pass writes every row's sum, so a piece has at least one.
    if used.is_empty() {
        used.push(None);
    }
    used
}

/// Refuses a coefficient table without +1 and −1 as its first entries: the
/// kernel adds and subtracts for those without reading them.
fn check_table(table: &[blst_fr]) -> Result<(), WgpuError> {
    let one = host::fr_from_u64(1);
    let minus_one = host::fr_sub(&blst_fr::default(), &one);
    match table {
        [p, m, ..] if p.l == one.l && m.l == minus_one.l => Ok(()),
        _ => Err(WgpuError::InvalidInput(
            "a coefficient table needs +1 and -1 as its first entries".into(),
        )),
    }
}

/// A matrix's pieces, in row order: aligned ranges of 2^q rows, q at most
/// the log2 of the elements one binding holds, so that no piece crosses an
/// output chunk (2^e elements, e as large or the whole domain), halved until
/// its terms and its row starts each fit one binding.
fn piece_ranges(
    row_start: &[usize],
    binding: u64,
    name: &str,
) -> Result<Vec<Range<usize>>, WgpuError> {
    let rows = row_start.len().saturating_sub(1);
    let per = binding / 32;
    if per == 0 {
        return Err(WgpuError::OutOfMemory(format!(
            "one element needs 32 bytes, over the storage binding limit of {binding} bytes"
        )));
    }
    let fits = |r: &Range<usize>| {
        let terms = (row_start[r.end] - row_start[r.start]) as u64;
        terms * 8 <= binding && (r.len() as u64 + 1) * 4 <= binding
    };
    let p = per.ilog2();
    let mut out = Vec::new();
    // (first row, log2 of the rows), the next piece last
    let mut todo: Vec<(usize, u32)> = (0..rows).step_by(1 << p).rev().map(|s| (s, p)).collect();
    while let Some((s, q)) = todo.pop() {
        let r = s..(s + (1 << q)).min(rows);
        if fits(&r) {
            out.push(r);
        } else if q == 0 {
            return Err(WgpuError::OutOfMemory(format!(
                "matrix {name}: the {} terms of row {s} take more than the storage binding \
                 limit of {binding} bytes",
                row_start[s + 1] - row_start[s]
            )));
        } else {
            let h = s + (1 << (q - 1));
            if h < rows {
                todo.push((h, q - 1));
            }
            todo.push((s, q - 1));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::piece_ranges;

    /// Row starts of rows with these term counts.
    fn starts(terms: &[usize]) -> Vec<usize> {
        let mut s = vec![0];
        for t in terms {
            s.push(s.last().unwrap() + t);
        }
        s
    }

    #[test]
    fn pieces_are_aligned_and_halved_where_their_terms_do_not_fit() {
        // 64 bytes: pieces of at most 2 rows and 8 terms
        let got = piece_ranges(&starts(&[1, 1, 8, 1, 1, 1, 1]), 64, "A").unwrap();
        assert_eq!(got, [0..2, 2..3, 3..4, 4..6, 6..7]);
        assert!(piece_ranges(&starts(&[1, 1, 9, 1]), 64, "A").is_err());
        assert_eq!(piece_ranges(&[0], 64, "A").unwrap(), []);
        assert!(piece_ranges(&starts(&[1]), 16, "A").is_err());
    }
}

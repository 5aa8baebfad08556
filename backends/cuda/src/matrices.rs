//! A circuit's constraint matrices resident on the device, and a, b, c of a
//! proof computed there from its witness (kernels/synthesis/spmv.cuh).
//!
//! With the matrices resident, a proof sends only its witness to the device
//! (input and aux: a third of what a, b and c weigh) and the host never holds
//! the three evaluation vectors, which at Filecoin scale are most of a
//! partition's memory.

use blst::blst_fr;
use cudarc::driver::CudaSlice;

use crate::profile::Profiler;
use crate::witness::WitnessPart;
use crate::{host, CudaDevice, CudaError};

pub use crossgroth_gpu_host::{CsrMatrix, AUX_COLUMN};

struct DeviceCsr {
    row_start: CudaSlice<u32>,
    col: CudaSlice<u32>,
    coeff: CudaSlice<u32>,
}

/// The A, B and C matrices of one circuit shape and their coefficient table,
/// on the device.
pub struct ConstraintMatrices {
    matrices: [DeviceCsr; 3],
    table: CudaSlice<u64>,
    rows: usize,
    inputs: usize,
    aux: usize,
    bytes: usize,
}

impl ConstraintMatrices {
    /// Constraint rows (input rows included).
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Device bytes the matrices hold.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
    /// The input and aux variables a witness of this shape has.
    pub(crate) fn variables(&self) -> (usize, usize) {
        (self.inputs, self.aux)
    }
    /// Refuses a domain of 2^log_m that cannot hold the rows.
    pub(crate) fn check_domain(&self, log_m: u32) -> Result<(), CudaError> {
        if log_m > 28 || self.rows > 1usize << log_m {
            return Err(CudaError::InvalidInput(format!(
                "{} rows in a 2^{log_m} domain",
                self.rows
            )));
        }
        Ok(())
    }
}

impl CudaDevice {
    /// Device bytes [`Self::upload_matrices`] takes for matrices of `rows` rows
    /// each, `nonzeros` terms in all and `coefficients` distinct coefficients.
    pub fn matrices_bytes(rows: usize, nonzeros: usize, coefficients: usize) -> usize {
        crossgroth_gpu_host::matrices_bytes(rows, nonzeros, coefficients)
    }

    /// Uploads A, B and C (see [`CsrMatrix`]) for witnesses of `inputs` input
    /// and `aux` aux variables. Every column and coefficient index is checked
    /// here, so that the kernels never read past a buffer.
    pub fn upload_matrices(
        &self,
        abc: [CsrMatrix<'_>; 3],
        table: &[blst_fr],
        inputs: usize,
        aux: usize,
    ) -> Result<ConstraintMatrices, CudaError> {
        let rows = crossgroth_gpu_host::check_matrices(&abc, table.len(), inputs, aux)
            .map_err(CudaError::InvalidInput)?;
        let _g = self.guard();
        let nonzeros = abc.iter().map(|m| m.col.len()).sum();
        let [a, b, c] = abc;
        let matrices = [
            self.upload_csr(a)?,
            self.upload_csr(b)?,
            self.upload_csr(c)?,
        ];
        let table_words = host::fr_as_u64s(table);
        let table = self.upload_u64(table_words, "coefficient table")?;
        self.sync("constraint matrices")?;
        let bytes = Self::matrices_bytes(rows, nonzeros, table_words.len() / 4);
        log::info!(
            "cuda: constraint matrices of {rows} rows and {nonzeros} terms resident ({:.1} MiB)",
            bytes as f64 / (1u64 << 20) as f64
        );
        Ok(ConstraintMatrices {
            matrices,
            table,
            rows,
            inputs,
            aux,
            bytes,
        })
    }

    /// One matrix [`crossgroth_gpu_host::check_matrices`] checked.
    fn upload_csr(&self, m: CsrMatrix<'_>) -> Result<DeviceCsr, CudaError> {
        let row_start: Vec<u32> = m.row_start.iter().map(|&s| s as u32).collect();
        let upload = |v: &[u32], what: &str| -> Result<CudaSlice<u32>, CudaError> {
            if v.is_empty() {
                return self.alloc_u32(1, what);
            }
            self.stream
                .clone_htod(v)
                .map_err(|e| CudaError::alloc(what, v.len() * 4, e))
        };
        Ok(DeviceCsr {
            row_start: upload(&row_start, "matrix row starts")?,
            col: upload(m.col, "matrix columns")?,
            coeff: upload(m.coeff, "matrix coefficients")?,
        })
    }

    /// H for a 2^log_m domain (as [`Self::compute_h`]) from a witness of the
    /// shape `matrices` were uploaded for, written to `out[..m − 1]`
    /// ([`Self::witness_h`] keeps it on the device instead). With
    /// `check`, the rows are checked first and the first with a·b ≠ c is
    /// returned instead (`out` untouched).
    pub fn compute_h_from_witness(
        &self,
        matrices: &ConstraintMatrices,
        input: &[blst_fr],
        aux: &[blst_fr],
        log_m: u32,
        check: bool,
        out: &mut [blst_fr],
    ) -> Result<Option<usize>, CudaError> {
        matrices.check_domain(log_m)?;
        let m = 1usize << log_m;
        if out.len() < m - 1 {
            return Err(CudaError::InvalidInput(format!(
                "compute_h_from_witness: {} outputs for H's {}",
                out.len(),
                m - 1
            )));
        }
        match self.witness_h(matrices, input, aux, log_m, check)? {
            Err(row) => Ok(Some(row)),
            Ok(kept) => {
                let _g = self.guard();
                let (h, len) = kept.part(WitnessPart::H);
                let out = host::fr_as_u64s_mut(&mut out[..len]);
                self.download_large(h, out, "compute_h_from_witness")?;
                Ok(None)
            }
        }
    }

    /// a, b, c (each zero-padded to m) from the witness: one sparse
    /// matrix-vector product a matrix.
    pub(crate) fn evaluate_matrices(
        &self,
        matrices: &ConstraintMatrices,
        d_input: &CudaSlice<u64>,
        d_aux: &CudaSlice<u64>,
        m: usize,
        prof: &mut Profiler<'_>,
    ) -> Result<[CudaSlice<u64>; 3], CudaError> {
        let (rows, m32) = (matrices.rows as u32, m as u32);
        let spmv = |csr: &DeviceCsr, name: &str| -> Result<CudaSlice<u64>, CudaError> {
            let mut d = self.alloc_u64(4 * m, name)?;
            // one warp a group of 32 rows (kernels/synthesis/spmv.cuh)
            launch!(self, self.k.fr_spmv, m.div_ceil(32) * 32, 256;
                &mut d, &csr.row_start, &csr.col, &csr.coeff, &matrices.table,
                d_input, d_aux, &rows, &m32);
            Ok(d)
        };
        let [a, b, c] = &matrices.matrices;
        let abc = [spmv(a, "a")?, spmv(b, "b")?, spmv(c, "c")?];
        prof.mark("spmv");
        Ok(abc)
    }

    /// The first row < rows with a·b ≠ c, if any.
    pub(crate) fn first_unsatisfied(
        &self,
        abc: &[CudaSlice<u64>; 3],
        rows: usize,
    ) -> Result<Option<usize>, CudaError> {
        let mut first = self
            .stream
            .clone_htod(&[u32::MAX][..])
            .map_err(|e| CudaError::alloc("witness check", 4, e))?;
        let rows32 = rows as u32;
        launch!(self, self.k.fr_first_unsatisfied, rows, 256;
            &abc[0], &abc[1], &abc[2], &rows32, &mut first);
        let found = self
            .stream
            .clone_dtoh(&first)
            .map_err(|e| CudaError::launch("witness check", e))?;
        self.sync("witness check")?;
        Ok(match found.first() {
            Some(&row) if row != u32::MAX => Some(row as usize),
            _ => None,
        })
    }
}

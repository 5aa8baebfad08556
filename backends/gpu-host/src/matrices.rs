//! A circuit's constraint matrices as both GPU crates take them for a, b and
//! c computed on the device, and the checks both make before anything goes
//! up, so that no kernel reads past a buffer and the two cannot drift apart.

/// Set in a column index for an aux variable (clear: an input), as the
/// recorder of the constraint matrices writes it (SPMV_AUX_COLUMN in the
/// kernels).
pub const AUX_COLUMN: u32 = 1 << 31;

/// One constraint matrix in compressed sparse rows, as the host keeps it:
/// row r's terms are `row_start[r]..row_start[r + 1]`, each a column (an
/// input, or an aux variable with [`AUX_COLUMN`] set) and an index into the
/// shape's coefficient table, whose entries 0 and 1 must be +1 and −1.
#[derive(Clone, Copy, Debug)]
pub struct CsrMatrix<'a> {
    pub row_start: &'a [usize],
    pub col: &'a [u32],
    pub coeff: &'a [u32],
}

/// The rows of A, B and C for witnesses of `inputs` input and `aux` aux
/// variables and a table of `coefficients` entries, or the message of an
/// invalid-input error: unequal row counts, a table without ±1's places,
/// counts past 32-bit indices, row starts that do not describe the terms, a
/// variable or coefficient out of range.
pub fn check_matrices(
    abc: &[CsrMatrix<'_>; 3],
    coefficients: usize,
    inputs: usize,
    aux: usize,
) -> Result<usize, String> {
    let rows = abc[0].row_start.len().saturating_sub(1);
    if abc.iter().any(|m| m.row_start.len() != rows + 1) {
        return Err("the A, B and C matrices have different row counts".into());
    }
    if coefficients < 2 {
        return Err("a coefficient table needs +1 and -1 as its first entries".into());
    }
    if rows >= u32::MAX as usize || inputs >= AUX_COLUMN as usize || aux >= AUX_COLUMN as usize {
        return Err(format!(
            "{rows} rows, {inputs} inputs and {aux} aux variables: too many for 32-bit indices"
        ));
    }
    for (name, m) in ["A", "B", "C"].into_iter().zip(abc) {
        check_csr(name, m, coefficients, inputs, aux)?;
    }
    Ok(rows)
}

fn check_csr(
    name: &str,
    m: &CsrMatrix<'_>,
    coefficients: usize,
    inputs: usize,
    aux: usize,
) -> Result<(), String> {
    let terms = m.col.len();
    if m.coeff.len() != terms
        || m.row_start.first() != Some(&0)
        || m.row_start.last() != Some(&terms)
        || m.row_start.windows(2).any(|w| w[0] > w[1])
    {
        return Err(format!(
            "matrix {name}: row starts do not describe its {terms} terms"
        ));
    }
    if terms >= u32::MAX as usize {
        return Err(format!(
            "matrix {name}: {terms} terms is too many for 32-bit offsets"
        ));
    }
    let bad_column = m.col.iter().position(|&c| {
        if c & AUX_COLUMN != 0 {
            (c & !AUX_COLUMN) as usize >= aux
        } else {
            c as usize >= inputs
        }
    });
    if let Some(t) = bad_column {
        return Err(format!(
            "matrix {name}: term {t} names a variable past the witness's {inputs} inputs \
             and {aux} aux"
        ));
    }
    if let Some(t) = m.coeff.iter().position(|&k| k as usize >= coefficients) {
        return Err(format!(
            "matrix {name}: term {t} names coefficient {} of {coefficients}",
            m.coeff[t]
        ));
    }
    Ok(())
}

/// Device bytes of matrices of `rows` rows each, `nonzeros` terms in all and
/// `coefficients` distinct coefficients: three row-start arrays, a column
/// and a coefficient index a term, the table (a few bytes a buffer aside).
pub fn matrices_bytes(rows: usize, nonzeros: usize, coefficients: usize) -> usize {
    3 * (rows + 1) * 4 + nonzeros * 8 + coefficients * 32
}

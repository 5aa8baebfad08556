//! The input checks, before the MSM touches the device: the first base lies
//! in the table, there are bases enough for the scalars (or for the
//! variables the density selects), and the counts fit the kernels' 32-bit
//! indices. With a density bitmap it also builds the per-word prefix counts
//! that the classification uses to find each included scalar's base.

use cudarc::driver::CudaView;

use super::{BaseTable, Scalars};
use crate::{CudaError, Layout};

/// The checked inputs.
pub(super) struct Inputs<'a> {
    /// The bases the MSM reads: the table from its first base on.
    pub(super) bases: CudaView<'a, u64>,
    /// The scalars' count.
    pub(super) n: usize,
    /// With a density bitmap, per word the included scalars before it.
    pub(super) prefix: Option<Vec<u32>>,
}

/// Checks the MSM's inputs and builds the density's prefix counts.
pub(super) fn inputs<'a>(
    layout: Layout,
    table: BaseTable<'a>,
    scalars: Scalars<'_>,
    density: Option<&[u64]>,
) -> Result<Inputs<'a>, CudaError> {
    if table.first > table.len {
        return Err(CudaError::InvalidInput(format!(
            "the MSM starts at base {} of {}",
            table.first, table.len
        )));
    }
    let point_words = layout.affine_words() * table.copies.max(1) as usize;
    let bases = table.buf.slice(table.first * point_words..);
    let n_bases = table.len - table.first;
    let n = scalars.len();
    // Density: validate and build the per-word prefix counts.
    let prefix: Option<Vec<u32>> = match density {
        None => {
            if n > n_bases {
                return Err(CudaError::InvalidInput(format!(
                    "{n} scalars but only {n_bases} bases"
                )));
            }
            None
        }
        Some(d) => Some(density_prefix(d, n, n_bases)?),
    };
    if n >= (u32::MAX / 2) as usize
        || n_bases.saturating_mul(table.copies.max(1) as usize) >= (u32::MAX / 2) as usize
    {
        return Err(CudaError::InvalidInput(format!(
            "MSM of {n} terms is too large"
        )));
    }
    Ok(Inputs { bases, n, prefix })
}

/// Per word of the density bitmap d, the included scalars before it (bits
/// past the n scalars do not count), after checking that d covers the n
/// scalars and that the bases cover what it includes.
fn density_prefix(d: &[u64], n: usize, n_bases: usize) -> Result<Vec<u32>, CudaError> {
    if d.len() * 64 < n {
        return Err(CudaError::InvalidInput(format!(
            "density bitmap has {} bits for {n} scalars",
            d.len() * 64
        )));
    }
    let mut p = Vec::with_capacity(d.len());
    let mut acc = 0usize;
    for (i, w) in d.iter().enumerate() {
        p.push(acc as u32);
        let bits = if (i + 1) * 64 <= n {
            *w
        } else if i * 64 >= n {
            0
        } else {
            w & ((1u64 << (n - i * 64)) - 1)
        };
        acc += bits.count_ones() as usize;
    }
    if acc > n_bases {
        return Err(CudaError::InvalidInput(format!(
            "density selects {acc} variables but only {n_bases} bases are present"
        )));
    }
    Ok(p)
}

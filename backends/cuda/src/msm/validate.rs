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
    /// The scalars the density includes (all n without one).
    pub(super) included: usize,
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
    let (prefix, included) = match density {
        None => {
            if n > n_bases {
                return Err(CudaError::InvalidInput(format!(
                    "{n} scalars but only {n_bases} bases"
                )));
            }
            (None, n)
        }
        Some(d) => {
            let (prefix, included) = density_prefix(d, n, n_bases)?;
            (Some(prefix), included)
        }
    };
    if n >= (u32::MAX / 2) as usize
        || n_bases.saturating_mul(table.copies.max(1) as usize) >= (u32::MAX / 2) as usize
    {
        return Err(CudaError::InvalidInput(format!(
            "MSM of {n} terms is too large"
        )));
    }
    Ok(Inputs {
        bases,
        n,
        prefix,
        included,
    })
}

/// Per word of the density bitmap d, the included scalars before it (bits
/// past the n scalars do not count), and their total, after checking that d
/// covers the n scalars and that the bases cover what it includes. It runs on
/// the critical path of every MSM over a density (2 M words for a 32 GiB
/// partition's aux), so it is one pass, with the CPU's popcount where there is
/// one: the baseline x86-64 target has none, and its bit-trick count made this
/// 11 ms of host time with the device idle.
fn density_prefix(d: &[u64], n: usize, n_bases: usize) -> Result<(Vec<u32>, usize), CudaError> {
    if d.len() * 64 < n {
        return Err(CudaError::InvalidInput(format!(
            "density bitmap has {} bits for {n} scalars",
            d.len() * 64
        )));
    }
    let mut p = vec![0u32; d.len()];
    let full = n / 64;
    let mut acc = prefix_counts(&d[..full], &mut p[..full]);
    if full < d.len() {
        // The word of the last scalars, when n is not a multiple of 64, counts
        // its bits below n; the words past n count nothing.
        p[full] = acc as u32;
        if !n.is_multiple_of(64) {
            acc += (d[full] & ((1u64 << (n % 64)) - 1)).count_ones() as usize;
        }
        for slot in &mut p[full + 1..] {
            *slot = acc as u32;
        }
    }
    if acc > n_bases {
        return Err(CudaError::InvalidInput(format!(
            "density selects {acc} variables but only {n_bases} bases are present"
        )));
    }
    Ok((p, acc))
}

/// p[i] = the set bits of words[..i]; returns the total.
fn prefix_counts(words: &[u64], p: &mut [u32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the popcnt instruction (checked just above).
        return unsafe { prefix_counts_popcnt(words, p) };
    }
    prefix_counts_portable(words, p)
}

#[inline(always)]
fn prefix_counts_portable(words: &[u64], p: &mut [u32]) -> usize {
    let mut acc = 0usize;
    for (slot, w) in p.iter_mut().zip(words) {
        *slot = acc as u32;
        acc += w.count_ones() as usize;
    }
    acc
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn prefix_counts_popcnt(words: &[u64], p: &mut [u32]) -> usize {
    prefix_counts_portable(words, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prefix and total the slow way: bit by bit.
    fn by_bits(d: &[u64], n: usize) -> (Vec<u32>, usize) {
        let mut acc = 0;
        let p = (0..d.len())
            .map(|i| {
                let before = acc as u32;
                acc += (0..64)
                    .filter(|b| i * 64 + b < n && d[i] >> b & 1 == 1)
                    .count();
                before
            })
            .collect();
        (p, acc)
    }

    #[test]
    fn the_density_prefix_counts_the_bits_below_n_in_one_pass() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let d: Vec<u64> = (0..40)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .chain([u64::MAX, 0, u64::MAX])
            .collect();
        for n in [0, 1, 63, 64, 65, 640, 1000, 64 * 40, 64 * 41 + 5, 64 * 43] {
            assert_eq!(
                density_prefix(&d, n, usize::MAX).unwrap(),
                by_bits(&d, n),
                "n = {n}"
            );
        }
        assert!(
            density_prefix(&d, 64 * 43 + 1, usize::MAX).is_err(),
            "too few bits"
        );
        let (_, total) = by_bits(&d, 1000);
        assert!(
            density_prefix(&d, 1000, total - 1).is_err(),
            "too few bases"
        );
        assert!(density_prefix(&d, 1000, total).is_ok());
    }
}

//! The witness check: a·b = c on every row. bellperson silently produces an invalid
//! proof for an unsatisfied witness; crossgroth refuses before proving.

use rayon::prelude::*;

use super::Assignment;

/// Index of the first row with a·b ≠ c, if any. Parallel, and cheap next to proving
/// (one multiplication per row).
pub fn check_witness(asg: &Assignment) -> Option<usize> {
    const CHUNK: usize = 1 << 12;
    asg.a
        .par_chunks(CHUNK)
        .zip(asg.b.par_chunks(CHUNK))
        .zip(asg.c.par_chunks(CHUNK))
        .enumerate()
        .find_map_first(|(chunk, ((a, b), c))| {
            (0..a.len())
                .find(|&i| a[i] * b[i] != c[i])
                .map(|i| chunk * CHUNK + i)
        })
}

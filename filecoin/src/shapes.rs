//! Dispatch from a sector size to the Merkle tree shape filecoin-proofs uses for it.

/// Calls `$f::<Tree>(args…)` with the tree shape of sector size `$size` (one of the
/// sizes a registered proof can name; the caller has checked it).
macro_rules! with_tree {
    ($size:expr, $f:ident, $($args:expr),* $(,)?) => {{
        use filecoin_proofs::constants as c;
        match $size {
            s if s == c::SECTOR_SIZE_2_KIB => $f::<c::SectorShape2KiB>($($args),*),
            s if s == c::SECTOR_SIZE_8_MIB => $f::<c::SectorShape8MiB>($($args),*),
            s if s == c::SECTOR_SIZE_512_MIB => $f::<c::SectorShape512MiB>($($args),*),
            s if s == c::SECTOR_SIZE_32_GIB => $f::<c::SectorShape32GiB>($($args),*),
            s if s == c::SECTOR_SIZE_64_GIB => $f::<c::SectorShape64GiB>($($args),*),
            s => Err($crate::error::FilecoinError::input(format!(
                "sector size {s} has no Filecoin tree shape"
            ))),
        }
    }};
}

pub(crate) use with_tree;

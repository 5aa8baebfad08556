//! bellperson's byte encoding of parameter files: uncompressed points with the
//! checks each must pass, length-prefixed vectors decoded in parallel with the
//! first bad point named by index and offset, and a file's bytes (memory-mapped
//! where it is a regular file). [`super::params`] builds the types on it.

use std::io::Read;
use std::path::Path;

use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::{G1Affine, G2Affine};

pub(super) const G1_BYTES: usize = 96;
pub(super) const G2_BYTES: usize = 192;

/// A cursor over the file's bytes that names what it was reading when it fails.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) checked: bool,
}

/// Which checks a point gets beyond "on the curve and canonically encoded".
#[derive(Clone, Copy)]
pub(super) struct PointRules {
    pub(super) subgroup: bool,
    pub(super) identity_allowed: bool,
}

pub(super) trait Point: Sized + Send + Sync + Copy + Default {
    const BYTES: usize;
    fn decode(bytes: &[u8], rules: PointRules) -> std::result::Result<Self, &'static str>;
    fn encode_into(&self, out: &mut Vec<u8>);
    /// In the prime-order subgroup (the identity is).
    fn in_subgroup(&self) -> bool;
}

/// Points per parallel task when decoding, checking and encoding.
pub(super) const CHUNK: usize = 1 << 10;

macro_rules! impl_point {
    ($ty:ty, $n:expr) => {
        impl Point for $ty {
            const BYTES: usize = $n;
            fn decode(bytes: &[u8], rules: PointRules) -> std::result::Result<Self, &'static str> {
                let arr: &[u8; $n] = bytes.try_into().map_err(|_| "short point")?;
                let p = Option::<$ty>::from(<$ty>::from_uncompressed_unchecked(arr))
                    .ok_or("not on the curve or not canonically encoded")?;
                let identity = bool::from(p.is_identity());
                if identity && !rules.identity_allowed {
                    return Err("the point at infinity");
                }
                if rules.subgroup && !identity && !bool::from(p.is_torsion_free()) {
                    return Err("not in the prime-order subgroup");
                }
                Ok(p)
            }
            fn encode_into(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(self.to_uncompressed().as_ref());
            }
            fn in_subgroup(&self) -> bool {
                bool::from(self.is_identity()) || bool::from(self.is_torsion_free())
            }
        }
    };
}
impl_point!(G1Affine, G1_BYTES);
impl_point!(G2Affine, G2_BYTES);

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let rest = self.bytes.len() - self.pos;
        if n > rest {
            return Err(Error::ParamsFormat(format!(
                "truncated: {what} needs {n} bytes at offset {}, only {rest} remain",
                self.pos
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(super) fn point<P: Point>(&mut self, what: &str, rules: PointRules) -> Result<P> {
        let at = self.pos;
        let bytes = self.take(P::BYTES, what)?;
        P::decode(bytes, rules)
            .map_err(|e| Error::ParamsFormat(format!("{what} at offset {at} is {e}")))
    }

    /// A vector's length field, checked against the bytes that remain.
    pub(super) fn length_field<P: Point>(&mut self, what: &str) -> Result<usize> {
        let at = self.pos;
        let len = u32::from_be_bytes(
            self.take(4, &format!("the length of {what}"))?
                .try_into()
                .unwrap(),
        ) as usize;
        let rest = self.bytes.len() - self.pos;
        let needed = len as u128 * P::BYTES as u128;
        if needed > rest as u128 {
            return Err(Error::ParamsFormat(format!(
                "{what}: the length field at offset {at} says {len} points ({needed} bytes), only {rest} bytes remain"
            )));
        }
        Ok(len)
    }

    pub(super) fn vector<P: Point>(&mut self, what: &str, rules: PointRules) -> Result<Vec<P>> {
        let len = self.length_field::<P>(what)?;
        let start = self.pos;
        let body = self.take(len * P::BYTES, what)?;
        // Decoded in chunks straight into place; the first bad point (by index) is named.
        let mut out = vec![P::default(); len];
        let bad = out
            .par_chunks_mut(CHUNK)
            .zip(body.par_chunks(CHUNK * P::BYTES))
            .enumerate()
            .find_map_first(|(c, (slots, bytes))| {
                slots
                    .iter_mut()
                    .zip(bytes.chunks_exact(P::BYTES))
                    .enumerate()
                    .find_map(|(k, (slot, b))| match P::decode(b, rules) {
                        Ok(p) => {
                            *slot = p;
                            None
                        }
                        Err(e) => Some((c * CHUNK + k, e)),
                    })
            });
        match bad {
            Some((i, e)) => Err(Error::ParamsFormat(format!(
                "{what}[{i}] at offset {} is {e}",
                start + i * P::BYTES
            ))),
            None => Ok(out),
        }
    }

    /// Steps over a vector, checking only that its length field fits the file;
    /// returns the length.
    pub(super) fn skip_vector<P: Point>(&mut self, what: &str) -> Result<usize> {
        let len = self.length_field::<P>(what)?;
        self.pos += len * P::BYTES;
        Ok(len)
    }
}

/// Index of the first point outside the prime-order subgroup, if any (parallel).
pub(super) fn first_outside_subgroup<P: Point>(points: &[P]) -> Option<usize> {
    points
        .par_chunks(CHUNK)
        .enumerate()
        .find_map_first(|(c, chunk)| {
            chunk
                .iter()
                .position(|p| !p.in_subgroup())
                .map(|k| c * CHUNK + k)
        })
}

/// A file's bytes: memory-mapped when it is a regular file (paged in as it is
/// decoded instead of copied first), read whole otherwise (a pipe).
pub(super) enum FileBytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Map(m) => m,
            FileBytes::Owned(v) => v,
        }
    }
}

pub(super) fn file_bytes(path: &Path) -> Result<FileBytes> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a directory, not a file",
            ),
        ));
    }
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if meta.is_file() && meta.len() > 0 {
        // SAFETY: the map is read-only and dropped before the reading function
        // returns; a concurrent truncation of the file is the caller's to avoid.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Ok(FileBytes::Map(map))
    } else {
        let mut v = Vec::new();
        file.read_to_end(&mut v).map_err(|e| Error::io(path, e))?;
        Ok(FileBytes::Owned(v))
    }
}

/// The SHA-256 digest of a parameter file, as [`super::Parameters::read_file_with`]
/// gives it.
pub type Digest = [u8; 32];

pub(super) fn sha256(bytes: &[u8]) -> Digest {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

impl Reader<'_> {
    pub(super) fn finish(&self) -> Result<()> {
        let rest = self.bytes.len() - self.pos;
        if rest != 0 {
            return Err(Error::ParamsFormat(format!(
                "{rest} trailing bytes after the last vector (offset {})",
                self.pos
            )));
        }
        Ok(())
    }
}

//! A recorded shape on disk, so that a restarted prover reads in seconds the
//! matrices that took minutes to record (a 32 GiB PoRep partition's).
//!
//! Layout, little-endian: the magic `CGSHAPE\0`, the format version, the
//! caller's key (everything that decides the shape besides this format: the
//! circuit's parameter id and the versions of the code that builds it), the
//! payload's length, the payload, and the payload's Blake2b-256 digest. A file
//! whose magic, version, key, length or digest differ, or whose matrices do
//! not hold together, is refused with the reason, and the caller records the
//! shape again. Files are written under a temporary name, synced and renamed,
//! so that a crash never leaves half a file under the real name.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use ff::PrimeField;

use super::recorded::{Csr, RecordedShape};
use super::row_names::RowNames;
use crate::density::Density;
use crate::Scalar;

const MAGIC: &[u8; 8] = b"CGSHAPE\0";
/// Raised whenever the layout or what a shape holds changes.
const VERSION: u32 = 1;
const DIGEST_BYTES: usize = 32;

/// Why a shape file was not used.
#[derive(Debug, thiserror::Error)]
pub enum ShapeFileError {
    #[error("shape file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("shape file {}: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
}

type Result<T> = std::result::Result<T, ShapeFileError>;

/// Writes `shape` to `path` under `key`, atomically.
pub fn write_shape(path: &Path, key: &str, shape: &RecordedShape) -> Result<()> {
    let io = |source| ShapeFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let file = File::create(&tmp)?;
        let mut out = BufWriter::with_capacity(8 << 20, file);
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        put_bytes(&mut out, key.as_bytes())?;
        let len = payload_len(shape);
        out.write_all(&len.to_le_bytes())?;
        let mut hashed = Hashing::new(&mut out);
        put_payload(&mut hashed, shape)?;
        debug_assert_eq!(hashed.count, len);
        let digest = hashed.digest();
        out.write_all(&digest)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io)
}

/// Reads the shape at `path` if it was written under `key` and is whole; a
/// payload over `max_bytes` is refused before it is read.
pub fn read_shape(path: &Path, key: &str, max_bytes: u64) -> Result<RecordedShape> {
    let refused = |reason: String| ShapeFileError::Refused {
        path: path.to_path_buf(),
        reason,
    };
    let io = |source| ShapeFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len();
    let mut input = BufReader::with_capacity(8 << 20, file);
    let mut magic = [0u8; 8];
    input.read_exact(&mut magic).map_err(io)?;
    if &magic != MAGIC {
        return Err(refused("not a crossgroth shape file".into()));
    }
    let version = get_u32(&mut input).map_err(io)?;
    if version != VERSION {
        return Err(refused(format!(
            "format version {version}, this crossgroth reads {VERSION}: stale"
        )));
    }
    let their_key = get_bytes(&mut input, 4096).map_err(io)?;
    if their_key != key.as_bytes() {
        return Err(refused(format!(
            "recorded for {:?}, wanted {key:?}: stale",
            String::from_utf8_lossy(&their_key)
        )));
    }
    let len = get_u64(&mut input).map_err(io)?;
    if len > max_bytes {
        return Err(refused(format!(
            "payload of {len} bytes, over the {max_bytes} bytes a shape of this circuit may take"
        )));
    }
    let header = 8 + 4 + 8 + key.len() as u64 + 8;
    if file_len != header + len + DIGEST_BYTES as u64 {
        return Err(refused(format!(
            "{file_len} bytes, {} expected: truncated or padded",
            header + len + DIGEST_BYTES as u64
        )));
    }
    let mut hashed = Hashing::new(&mut input);
    let shape = get_payload(&mut hashed).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => refused(e.to_string()),
        _ => io(e),
    })?;
    if hashed.count != len {
        return Err(refused("payload length differs from its header".into()));
    }
    let digest = hashed.digest();
    let mut stored = [0u8; DIGEST_BYTES];
    input.read_exact(&mut stored).map_err(io)?;
    if digest != stored {
        return Err(refused("digest mismatch: the file is corrupt".into()));
    }
    Ok(shape)
}

/// A writer or reader that hashes what passes through and counts it.
struct Hashing<T> {
    inner: T,
    state: blake2b_simd::State,
    count: u64,
}

impl<T> Hashing<T> {
    fn new(inner: T) -> Self {
        Hashing {
            inner,
            state: blake2b_simd::Params::new()
                .hash_length(DIGEST_BYTES)
                .to_state(),
            count: 0,
        }
    }

    fn digest(&self) -> [u8; DIGEST_BYTES] {
        let mut d = [0u8; DIGEST_BYTES];
        d.copy_from_slice(self.state.finalize().as_bytes());
        d
    }
}

impl<T: Write> Write for Hashing<T> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.state.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<T: Read> Read for Hashing<T> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.state.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}

fn payload_len(s: &RecordedShape) -> u64 {
    let csr = |m: &Csr| {
        let (starts, col, coeff) = m.parts();
        8 + starts.len() as u64 * 8 + 8 + col.len() as u64 * 4 + 8 + coeff.len() as u64 * 4
    };
    let density = |d: &Density| 8 + 8 + d.words().len() as u64 * 8;
    let (strings, nodes, rows) = s.row_names.parts();
    let names = 8
        + strings.iter().map(|t| 8 + t.len() as u64).sum::<u64>()
        + 8
        + nodes.len() as u64 * 8
        + 8
        + rows.len() as u64 * 8;
    8 * 3
        + csr(&s.a)
        + csr(&s.b)
        + csr(&s.c)
        + 8
        + s.coeffs.len() as u64 * 32
        + density(&s.a_aux_density)
        + density(&s.b_input_density)
        + density(&s.b_aux_density)
        + names
}

fn put_payload(out: &mut impl Write, s: &RecordedShape) -> std::io::Result<()> {
    for n in [s.num_inputs, s.num_aux, s.num_user_rows] {
        out.write_all(&(n as u64).to_le_bytes())?;
    }
    for m in [&s.a, &s.b, &s.c] {
        let (starts, col, coeff) = m.parts();
        put_u64s(out, starts.iter().map(|&x| x as u64), starts.len())?;
        put_u32s(out, col)?;
        put_u32s(out, coeff)?;
    }
    out.write_all(&(s.coeffs.len() as u64).to_le_bytes())?;
    for c in &s.coeffs {
        out.write_all(c.to_repr().as_ref())?;
    }
    for d in [&s.a_aux_density, &s.b_input_density, &s.b_aux_density] {
        out.write_all(&(d.len() as u64).to_le_bytes())?;
        put_u64s(out, d.words().iter().copied(), d.words().len())?;
    }
    let (strings, nodes, rows) = s.row_names.parts();
    out.write_all(&(strings.len() as u64).to_le_bytes())?;
    for t in strings {
        put_bytes(out, t.as_bytes())?;
    }
    for pairs in [nodes, rows] {
        put_u32s(
            out,
            &pairs.iter().flat_map(|&(a, b)| [a, b]).collect::<Vec<_>>(),
        )?;
    }
    Ok(())
}

fn bad(reason: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, reason.into())
}

fn get_payload(input: &mut impl Read) -> std::io::Result<RecordedShape> {
    let num_inputs = get_u64(input)? as usize;
    let num_aux = get_u64(input)? as usize;
    let num_user_rows = get_u64(input)? as usize;
    let mut matrices = Vec::with_capacity(3);
    for _ in 0..3 {
        let starts: Vec<usize> = get_u64s(input)?.into_iter().map(|x| x as usize).collect();
        let col = get_u32s(input)?;
        let coeff = get_u32s(input)?;
        matrices.push(Csr::from_parts(starts, col, coeff).map_err(bad)?);
    }
    let n = get_u64(input)? as usize;
    if n > 1 << 32 {
        return Err(bad("coefficient table too long"));
    }
    let mut coeffs = Vec::with_capacity(n);
    for _ in 0..n {
        let mut repr = <Scalar as PrimeField>::Repr::default();
        input.read_exact(repr.as_mut())?;
        coeffs.push(
            Option::<Scalar>::from(Scalar::from_repr(repr))
                .ok_or_else(|| bad("a coefficient is not a field element"))?,
        );
    }
    let mut densities = Vec::with_capacity(3);
    for _ in 0..3 {
        let len = get_u64(input)? as usize;
        let words = get_u64s(input)?;
        densities.push(Density::from_words(words, len).map_err(bad)?);
    }
    let count = get_u64(input)? as usize;
    let mut strings = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let b = get_bytes(input, 1 << 20)?;
        strings.push(String::from_utf8(b).map_err(|_| bad("a row name is not UTF-8"))?);
    }
    let pairs = |v: Vec<u32>| v.chunks_exact(2).map(|p| (p[0], p[1])).collect::<Vec<_>>();
    let nodes = pairs(get_u32s(input)?);
    let rows = pairs(get_u32s(input)?);
    let row_names = RowNames::from_parts(strings, nodes, rows).map_err(bad)?;
    let [a, b, c]: [Csr; 3] = matrices.try_into().map_err(|_| bad("three matrices"))?;
    let [a_aux_density, b_input_density, b_aux_density]: [Density; 3] =
        densities.try_into().map_err(|_| bad("three densities"))?;
    RecordedShape::from_parts(
        num_inputs,
        num_aux,
        num_user_rows,
        [a, b, c],
        coeffs,
        [a_aux_density, b_input_density, b_aux_density],
        row_names,
    )
    .map_err(bad)
}

/// Elements a vector read from a file may claim before any is read: 2^34
/// (more than any Filecoin circuit's terms); the digest catches the rest.
const MAX_ELEMENTS: u64 = 1 << 34;

fn put_bytes(out: &mut impl Write, b: &[u8]) -> std::io::Result<()> {
    out.write_all(&(b.len() as u64).to_le_bytes())?;
    out.write_all(b)
}

fn get_bytes(input: &mut impl Read, max: u64) -> std::io::Result<Vec<u8>> {
    let n = get_u64(input)?;
    if n > max {
        return Err(bad(format!("a string of {n} bytes")));
    }
    let mut b = vec![0u8; n as usize];
    input.read_exact(&mut b)?;
    Ok(b)
}

fn get_u32(input: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    input.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn get_u64(input: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    input.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

const CHUNK: usize = 1 << 16;

fn put_u32s(out: &mut impl Write, v: &[u32]) -> std::io::Result<()> {
    out.write_all(&(v.len() as u64).to_le_bytes())?;
    let mut buf = Vec::with_capacity(CHUNK * 4);
    for chunk in v.chunks(CHUNK) {
        buf.clear();
        buf.extend(chunk.iter().flat_map(|x| x.to_le_bytes()));
        out.write_all(&buf)?;
    }
    Ok(())
}

fn put_u64s(out: &mut impl Write, v: impl Iterator<Item = u64>, len: usize) -> std::io::Result<()> {
    out.write_all(&(len as u64).to_le_bytes())?;
    let mut buf = Vec::with_capacity(CHUNK * 8);
    for x in v {
        buf.extend(x.to_le_bytes());
        if buf.len() >= CHUNK * 8 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

fn get_u32s(input: &mut impl Read) -> std::io::Result<Vec<u32>> {
    get_vec(input, u32::from_le_bytes)
}

fn get_u64s(input: &mut impl Read) -> std::io::Result<Vec<u64>> {
    get_vec(input, u64::from_le_bytes)
}

/// A length-prefixed vector of `N`-byte little-endian elements, read in chunks.
fn get_vec<T, const N: usize>(
    input: &mut impl Read,
    from: fn([u8; N]) -> T,
) -> std::io::Result<Vec<T>> {
    let n = get_u64(input)?;
    if n > MAX_ELEMENTS {
        return Err(bad(format!("a vector of {n} elements")));
    }
    let mut v = Vec::with_capacity(n as usize);
    let mut buf = vec![0u8; CHUNK * N];
    let mut left = n as usize;
    while left > 0 {
        let k = left.min(CHUNK);
        input.read_exact(&mut buf[..k * N])?;
        v.extend(
            buf[..k * N]
                .chunks_exact(N)
                .map(|b| from(b.try_into().expect("N bytes"))),
        );
        left -= k;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::CircuitSpec;

    fn shape() -> RecordedShape {
        let spec: CircuitSpec = "sha256:64".parse().unwrap();
        RecordedShape::record(spec.instance(1)).unwrap().0
    }

    fn same(x: &RecordedShape, y: &RecordedShape) {
        assert_eq!(
            (x.num_inputs, x.num_aux, x.num_user_rows),
            (y.num_inputs, y.num_aux, y.num_user_rows)
        );
        assert!(x.a == y.a && x.b == y.b && x.c == y.c);
        assert_eq!(x.coeffs, y.coeffs);
        assert_eq!(x.a_aux_density, y.a_aux_density);
        assert_eq!(x.b_input_density, y.b_input_density);
        assert_eq!(x.b_aux_density, y.b_aux_density);
        assert_eq!(x.row_names.parts(), y.row_names.parts());
    }

    fn refused(r: Result<RecordedShape>) -> String {
        match r {
            Err(e @ ShapeFileError::Refused { .. }) => e.to_string(),
            Err(e) => panic!("expected a refusal, got {e}"),
            Ok(_) => panic!("expected a refusal, got a shape"),
        }
    }

    #[test]
    fn written_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.shape");
        let s = shape();
        write_shape(&path, "key-1", &s).unwrap();
        same(&s, &read_shape(&path, "key-1", u64::MAX).unwrap());
        // Nothing else is left in the directory (the temporary file was renamed).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn stale_corrupt_truncated_or_oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.shape");
        write_shape(&path, "key-1", &shape()).unwrap();
        let good = std::fs::read(&path).unwrap();

        let e = refused(read_shape(&path, "key-2", u64::MAX));
        assert!(e.contains("stale") && e.contains("s.shape"), "{e}");
        let e = refused(read_shape(&path, "key-1", 1000));
        assert!(e.contains("over the 1000 bytes"), "{e}");

        let mut v = good.clone();
        v[8] ^= 1;
        std::fs::write(&path, &v).unwrap();
        assert!(refused(read_shape(&path, "key-1", u64::MAX)).contains("format version"));

        for at in [good.len() / 3, good.len() / 2, good.len() - 40] {
            let mut v = good.clone();
            v[at] ^= 0x40;
            std::fs::write(&path, &v).unwrap();
            let e = refused(read_shape(&path, "key-1", u64::MAX));
            eprintln!("byte {at} flipped: {e}");
        }

        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(refused(read_shape(&path, "key-1", u64::MAX)).contains("truncated"));
        std::fs::write(&path, b"not a shape").unwrap();
        assert!(read_shape(&path, "key-1", u64::MAX).is_err());
    }
}

//! Parameters in bellperson's file format (REFERENCE.md, Formats), read with every
//! check bellperson makes plus the ones it does not: exact lengths against the
//! circuit, no trailing bytes, length fields bounded by the file before anything is
//! allocated, and parallel subgroup checks.
//!
//! The subgroup checks are nearly all of a read's time (on 2 cores: about 0.6 µs to
//! decode a point, 75 µs to check a G1 point's subgroup, 95 µs a G2 point's), so
//! [`Parameters::read_file_with`] can skip them for a file whose SHA-256 digest is
//! known to have passed them, and [`VerifyingKey::read_params_file`] reads the
//! verifying key at the head of a parameter file without decoding the rest.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::encoding::{
    file_bytes, first_outside_subgroup, sha256, Digest, Point, PointRules, Reader, CHUNK, G1_BYTES,
    G2_BYTES,
};
use super::Query;
use crate::error::{Error, Result};
use crate::synthesis::Shape;
use crate::{G1Affine, G2Affine};

/// The verifying key: α, β, γ, δ and the IC query (one point per input, ONE first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    pub ic: Vec<G1Affine>,
}

/// A full parameter set. The queries' points are shared (`Arc`) so a prover,
/// pending proofs and device uploads can hold them without copying, and can be
/// released from host memory once devices hold them ([`Query`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    pub vk: VerifyingKey,
    pub h: Query<G1Affine>,
    pub l: Query<G1Affine>,
    pub a: Query<G1Affine>,
    pub b_g1: Query<G1Affine>,
    pub b_g2: Query<G2Affine>,
}

/// Which points of a parameter file [`Parameters::read_file_with`] checks for
/// membership of the prime-order subgroup. The verifying key's points are always
/// checked, and every point's encoding, curve equation and identity rules.
pub enum SubgroupChecks<'a> {
    /// Every query point (bellperson's checked mode).
    All,
    /// None of the query points (bellperson's unchecked mode), for a trusted file.
    None,
    /// Every query point, unless `known` says that a file with this SHA-256 digest
    /// passed them before.
    UnlessKnown(&'a (dyn Fn(&Digest) -> bool + Sync)),
}

/// What reading a parameter file did, and how long each part took.
#[derive(Clone, Debug)]
pub struct ReadReport {
    pub bytes: usize,
    /// The file's SHA-256 digest (computed beside the decoding); None when no
    /// subgroup checks were asked for.
    pub digest: Option<Digest>,
    /// Seconds to decode every point (encoding, curve and identity checks) and to
    /// digest the file.
    pub decode_s: f64,
    /// Seconds of subgroup checks; None when they were skipped.
    pub subgroup_s: Option<f64>,
}

const VK_POINT: PointRules = PointRules {
    subgroup: true,
    identity_allowed: true,
};

impl VerifyingKey {
    fn parse(r: &mut Reader<'_>) -> Result<Self> {
        let alpha_g1 = r.point("vk.alpha_g1", VK_POINT)?;
        let beta_g1 = r.point("vk.beta_g1", VK_POINT)?;
        let beta_g2 = r.point("vk.beta_g2", VK_POINT)?;
        let gamma_g2 = r.point("vk.gamma_g2", VK_POINT)?;
        let delta_g1: G1Affine = r.point("vk.delta_g1", VK_POINT)?;
        let delta_g2: G2Affine = r.point("vk.delta_g2", VK_POINT)?;
        if bool::from(delta_g1.is_identity()) || bool::from(delta_g2.is_identity()) {
            return Err(Error::IdentityDelta);
        }
        let ic = r.vector(
            "vk.ic",
            PointRules {
                subgroup: true,
                identity_allowed: false,
            },
        )?;
        if ic.is_empty() {
            return Err(Error::VerifyingKey(
                "the IC query is empty (it needs at least ONE's point)".into(),
            ));
        }
        Ok(VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic,
        })
    }

    /// Reads a verifying key on its own (bellperson's `VerifyingKey::write` format).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader {
            bytes,
            pos: 0,
            checked: true,
        };
        let vk = Self::parse(&mut r).map_err(|e| match e {
            Error::ParamsFormat(m) => Error::VerifyingKey(m),
            e => e,
        })?;
        let rest = bytes.len() - r.pos;
        if rest != 0 {
            let whole = if Self::from_params_bytes(bytes).is_ok() {
                ": this is a whole parameter file, not a key alone"
            } else {
                ""
            };
            return Err(Error::VerifyingKey(format!(
                "{rest} trailing bytes after the IC query (offset {}){whole}",
                r.pos
            )));
        }
        Ok(vk)
    }

    pub fn read_file(path: &Path) -> Result<Self> {
        Self::from_bytes(&file_bytes(path)?)
    }

    /// The verifying key at the head of a parameter file (bellperson's format puts
    /// it first), without decoding the query vectors: their length fields are still
    /// checked against the file's size, so a truncated or padded file is refused.
    pub fn from_params_bytes(bytes: &[u8]) -> Result<Self> {
        Ok(Self::head(bytes)?.0)
    }

    /// The verifying key and the vectors' lengths of a parameter file, decoding
    /// only the key.
    fn head(bytes: &[u8]) -> Result<(Self, ParamsLengths)> {
        let mut r = Reader {
            bytes,
            pos: 0,
            checked: true,
        };
        let vk = Self::parse(&mut r)?;
        let mut len = [0usize; 4];
        for (what, n) in ["h", "l", "a", "b_g1"].into_iter().zip(&mut len) {
            *n = r.skip_vector::<G1Affine>(what)?;
        }
        let b_g2 = r.skip_vector::<G2Affine>("b_g2")?;
        r.finish()?;
        let lengths = ParamsLengths {
            ic: vk.ic.len(),
            h: len[0],
            l: len[1],
            a: len[2],
            b_g1: len[3],
            b_g2,
        };
        Ok((vk, lengths))
    }

    /// [`VerifyingKey::from_params_bytes`] of a file: milliseconds, where reading
    /// the whole parameter set would check every point.
    pub fn read_params_file(path: &Path) -> Result<Self> {
        Self::from_params_bytes(&file_bytes(path)?)
    }

    pub fn write<W: Write>(&self, mut w: W) -> Result<()> {
        let mut out = Vec::with_capacity(96 * 4 + 192 * 4 + 96 * self.ic.len());
        for p in [&self.alpha_g1, &self.beta_g1] {
            p.encode_into(&mut out);
        }
        for p in [&self.beta_g2, &self.gamma_g2] {
            p.encode_into(&mut out);
        }
        self.delta_g1.encode_into(&mut out);
        self.delta_g2.encode_into(&mut out);
        out.extend_from_slice(&(self.ic.len() as u32).to_be_bytes());
        for p in &self.ic {
            p.encode_into(&mut out);
        }
        w.write_all(&out)?;
        Ok(())
    }

    /// Bytes of the key in the file format.
    fn encoded_len(&self) -> usize {
        G1_BYTES * 3 + G2_BYTES * 3 + 4 + G1_BYTES * self.ic.len()
    }
}

impl Parameters {
    /// Parses a whole parameter file. `checked` adds subgroup checks of every query
    /// point (parallel); on-curve, canonical-encoding and identity checks always run.
    pub fn from_bytes(bytes: &[u8], checked: bool) -> Result<Self> {
        let mut r = Reader {
            bytes,
            pos: 0,
            checked,
        };
        let vk = VerifyingKey::parse(&mut r)?;
        let g = PointRules {
            subgroup: r.checked,
            identity_allowed: false,
        };
        let h = r.vector("h", g)?;
        let l = r.vector("l", g)?;
        let a = r.vector("a", g)?;
        let b_g1 = r.vector("b_g1", g)?;
        let b_g2 = r.vector("b_g2", g)?;
        r.finish()?;
        Ok(Parameters {
            vk,
            h: Query::new("h", h),
            l: Query::new("l", l),
            a: Query::new("a", a),
            b_g1: Query::new("b_g1", b_g1),
            b_g2: Query::new("b_g2", b_g2),
        })
    }

    /// bellperson's `Parameters::read`: reads the stream to its end, then parses.
    pub fn read<R: Read>(mut reader: R, checked: bool) -> Result<Self> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Self::from_bytes(&bytes, checked)
    }

    /// Reads a parameter file through a memory map, so a large file is paged in as
    /// it is decoded instead of being copied first (a pipe is read whole).
    pub fn read_file(path: &Path, checked: bool) -> Result<Self> {
        Self::from_bytes(&file_bytes(path)?, checked)
    }

    /// Reads a parameter file with the subgroup checks `checks` asks for, and says
    /// what that took. The file is digested (SHA-256) while it is decoded, so that a
    /// caller can remember which files passed the checks.
    pub fn read_file_with(path: &Path, checks: SubgroupChecks<'_>) -> Result<(Self, ReadReport)> {
        let bytes = file_bytes(path)?;
        let t = Instant::now();
        let want_digest = !matches!(checks, SubgroupChecks::None);
        let (digest, params) = rayon::join(
            || want_digest.then(|| sha256(&bytes)),
            || Self::from_bytes(&bytes, false),
        );
        let params = params?;
        let decode_s = t.elapsed().as_secs_f64();
        let check = match checks {
            SubgroupChecks::All => true,
            SubgroupChecks::None => false,
            SubgroupChecks::UnlessKnown(known) => !digest.as_ref().is_some_and(known),
        };
        let subgroup_s = if check {
            let t = Instant::now();
            params.check_subgroups()?;
            Some(t.elapsed().as_secs_f64())
        } else {
            None
        };
        Ok((
            params,
            ReadReport {
                bytes: bytes.len(),
                digest,
                decode_s,
                subgroup_s,
            },
        ))
    }

    /// Checks that every query point is in the prime-order subgroup (in parallel;
    /// the verifying key's points are checked whenever a key is read).
    pub fn check_subgroups(&self) -> Result<()> {
        let mut offset = self.vk.encoded_len();
        macro_rules! check {
            ($($name:ident: $ty:ty),*) => {$(
                if let Some(i) = first_outside_subgroup::<$ty>(&self.$name.host()?) {
                    return Err(Error::ParamsFormat(format!(
                        "{}[{i}] at offset {} is not in the prime-order subgroup",
                        stringify!($name),
                        offset + 4 + i * <$ty as Point>::BYTES
                    )));
                }
                offset += 4 + self.$name.len() * <$ty as Point>::BYTES;
            )*};
        }
        check!(h: G1Affine, l: G1Affine, a: G1Affine, b_g1: G1Affine, b_g2: G2Affine);
        let _ = offset;
        Ok(())
    }

    pub fn write<W: Write>(&self, mut w: W) -> Result<()> {
        self.vk.write(&mut w)?;
        // Encoded in parallel a few chunks at a time, so that memory stays bounded.
        fn vector<W: Write, P: Point>(w: &mut W, v: &[P]) -> Result<()> {
            w.write_all(&(v.len() as u32).to_be_bytes())?;
            for group in v.chunks(CHUNK * 64) {
                let encoded: Vec<Vec<u8>> = group
                    .par_chunks(CHUNK)
                    .map(|c| {
                        let mut out = Vec::with_capacity(c.len() * P::BYTES);
                        c.iter().for_each(|p| p.encode_into(&mut out));
                        out
                    })
                    .collect();
                for e in encoded {
                    w.write_all(&e)?;
                }
            }
            Ok(())
        }
        vector(&mut w, &self.h.host()?)?;
        vector(&mut w, &self.l.host()?)?;
        vector(&mut w, &self.a.host()?)?;
        vector(&mut w, &self.b_g1.host()?)?;
        vector(&mut w, &self.b_g2.host()?)?;
        Ok(())
    }

    /// Writes the file whole or not at all: to a temporary file beside `path`,
    /// flushed to disk, then renamed over `path`.
    pub fn write_file(&self, path: &Path) -> Result<()> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".crossgroth-params.tmp-");
        // As `File::create` would make it: 0666 less the umask.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let tmp = builder.tempfile_in(dir).map_err(|e| Error::io(path, e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file());
        self.write(&mut w)?;
        w.flush().map_err(|e| Error::io(path, e))?;
        drop(w);
        tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
        tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
        Ok(())
    }

    /// Checks every length against the circuit at hand (bellperson checks none).
    pub fn check_shape(&self, shape: &Shape) -> Result<()> {
        self.lengths().check_shape(shape)
    }

    /// The vectors' lengths.
    pub fn lengths(&self) -> ParamsLengths {
        ParamsLengths {
            ic: self.vk.ic.len(),
            h: self.h.len(),
            l: self.l.len(),
            a: self.a.len(),
            b_g1: self.b_g1.len(),
            b_g2: self.b_g2.len(),
        }
    }

    /// Bytes the queries' points occupy in host memory (none for a query
    /// whose host copy was released).
    pub fn heap_bytes(&self) -> usize {
        self.g1_queries()
            .iter()
            .map(|q| q.host_bytes())
            .sum::<usize>()
            + self.b_g2.host_bytes()
    }

    /// The four G1 queries, in the file's order.
    pub fn g1_queries(&self) -> [&Query<G1Affine>; 4] {
        [&self.h, &self.l, &self.a, &self.b_g1]
    }
}

/// The lengths of a parameter set's vectors: all that the shape check needs, and
/// readable from a file without decoding its points ([`ParamsLengths::read_file`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamsLengths {
    pub ic: usize,
    pub h: usize,
    pub l: usize,
    pub a: usize,
    pub b_g1: usize,
    pub b_g2: usize,
}

impl ParamsLengths {
    /// The lengths of a parameter file's vectors, checked against the file's size;
    /// only the verifying key is decoded. Milliseconds, so a command can check the
    /// parameters against its circuit before it spends time reading them.
    pub fn read_file(path: &Path) -> Result<Self> {
        Ok(VerifyingKey::head(&file_bytes(path)?)?.1)
    }

    /// Checks every length against the circuit at hand.
    pub fn check_shape(&self, shape: &Shape) -> Result<()> {
        let m = 1usize << shape.log_domain()?;
        let b = shape.b_input_density.count() + shape.b_aux_density.count();
        let expected = [
            ("vk.ic", shape.num_inputs, self.ic),
            ("h", m - 1, self.h),
            ("l", shape.num_aux, self.l),
            ("a", shape.num_inputs + shape.a_aux_density.count(), self.a),
            ("b_g1", b, self.b_g1),
            ("b_g2", b, self.b_g2),
        ];
        for (vector, expected, found) in expected {
            if expected != found {
                return Err(Error::ParamsMismatch {
                    vector,
                    expected,
                    found,
                });
            }
        }
        Ok(())
    }
}

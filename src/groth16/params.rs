//! Parameters in bellperson's file format (REFERENCE.md, Formats), read with every
//! check bellperson makes plus the ones it does not: exact lengths against the
//! circuit, no trailing bytes, length fields bounded by the file before anything is
//! allocated, and parallel subgroup checks.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::synthesis::Shape;
use crate::{G1Affine, G2Affine};

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;

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

/// A full parameter set. The query vectors are shared (`Arc`) so a prover, pending
/// proofs and device uploads can hold them without copying.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    pub vk: VerifyingKey,
    pub h: Arc<Vec<G1Affine>>,
    pub l: Arc<Vec<G1Affine>>,
    pub a: Arc<Vec<G1Affine>>,
    pub b_g1: Arc<Vec<G1Affine>>,
    pub b_g2: Arc<Vec<G2Affine>>,
}

/// A cursor over the file's bytes that names what it was reading when it fails.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    checked: bool,
}

/// Which checks a point gets beyond "on the curve and canonically encoded".
#[derive(Clone, Copy)]
struct PointRules {
    subgroup: bool,
    identity_allowed: bool,
}

trait Point: Sized + Send + Sync + Copy {
    const BYTES: usize;
    fn decode(bytes: &[u8], rules: PointRules) -> std::result::Result<Self, &'static str>;
    fn encode(&self) -> Vec<u8>;
}

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
            fn encode(&self) -> Vec<u8> {
                self.to_uncompressed().as_ref().to_vec()
            }
        }
    };
}
impl_point!(G1Affine, G1_BYTES);
impl_point!(G2Affine, G2_BYTES);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
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

    fn point<P: Point>(&mut self, what: &str, rules: PointRules) -> Result<P> {
        let at = self.pos;
        let bytes = self.take(P::BYTES, what)?;
        P::decode(bytes, rules)
            .map_err(|e| Error::ParamsFormat(format!("{what} at offset {at} is {e}")))
    }

    fn vector<P: Point>(&mut self, what: &str, rules: PointRules) -> Result<Vec<P>> {
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
        let start = self.pos;
        let body = self.take(len * P::BYTES, what)?;
        body.par_chunks(P::BYTES)
            .enumerate()
            .map(|(i, chunk)| {
                P::decode(chunk, rules).map_err(|e| {
                    Error::ParamsFormat(format!(
                        "{what}[{i}] at offset {} is {e}",
                        start + i * P::BYTES
                    ))
                })
            })
            .collect()
    }
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
        r.finish().map_err(|e| Error::VerifyingKey(e.to_string()))?;
        Ok(vk)
    }

    pub fn read_file(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&bytes)
    }

    pub fn write<W: Write>(&self, mut w: W) -> Result<()> {
        for p in [&self.alpha_g1, &self.beta_g1] {
            w.write_all(&p.encode())?;
        }
        for p in [&self.beta_g2, &self.gamma_g2] {
            w.write_all(&p.encode())?;
        }
        w.write_all(&self.delta_g1.encode())?;
        w.write_all(&self.delta_g2.encode())?;
        w.write_all(&(self.ic.len() as u32).to_be_bytes())?;
        for p in &self.ic {
            w.write_all(&p.encode())?;
        }
        Ok(())
    }
}

impl Reader<'_> {
    fn finish(&self) -> Result<()> {
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
            h: Arc::new(h),
            l: Arc::new(l),
            a: Arc::new(a),
            b_g1: Arc::new(b_g1),
            b_g2: Arc::new(b_g2),
        })
    }

    /// bellperson's `Parameters::read`: reads the stream to its end, then parses.
    pub fn read<R: Read>(mut reader: R, checked: bool) -> Result<Self> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Self::from_bytes(&bytes, checked)
    }

    /// Reads a parameter file through a memory map, so a large file is paged in as
    /// it is decoded instead of being copied first.
    pub fn read_file(path: &Path, checked: bool) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        // SAFETY: the map is read-only and dropped before this function returns; a
        // concurrent truncation of the file is the caller's to avoid.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&map, checked)
    }

    pub fn write<W: Write>(&self, mut w: W) -> Result<()> {
        self.vk.write(&mut w)?;
        fn vector<W: Write, P: Point>(w: &mut W, v: &[P]) -> Result<()> {
            w.write_all(&(v.len() as u32).to_be_bytes())?;
            let encoded: Vec<Vec<u8>> = v.par_iter().map(|p| p.encode()).collect();
            for e in encoded {
                w.write_all(&e)?;
            }
            Ok(())
        }
        vector(&mut w, &self.h)?;
        vector(&mut w, &self.l)?;
        vector(&mut w, &self.a)?;
        vector(&mut w, &self.b_g1)?;
        vector(&mut w, &self.b_g2)?;
        Ok(())
    }

    pub fn write_file(&self, path: &Path) -> Result<()> {
        let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
        let mut w = std::io::BufWriter::new(file);
        self.write(&mut w)?;
        w.flush().map_err(|e| Error::io(path, e))
    }

    /// Checks every length against the circuit at hand (bellperson checks none).
    pub fn check_shape(&self, shape: &Shape) -> Result<()> {
        let m = 1usize << shape.log_domain()?;
        let b = shape.b_input_density.count() + shape.b_aux_density.count();
        let expected = [
            ("vk.ic", shape.num_inputs, self.vk.ic.len()),
            ("h", m - 1, self.h.len()),
            ("l", shape.num_aux, self.l.len()),
            (
                "a",
                shape.num_inputs + shape.a_aux_density.count(),
                self.a.len(),
            ),
            ("b_g1", b, self.b_g1.len()),
            ("b_g2", b, self.b_g2.len()),
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

    /// Bytes the query vectors occupy in memory.
    pub fn heap_bytes(&self) -> usize {
        (self.h.len() + self.l.len() + self.a.len() + self.b_g1.len())
            * std::mem::size_of::<G1Affine>()
            + self.b_g2.len() * std::mem::size_of::<G2Affine>()
    }
}

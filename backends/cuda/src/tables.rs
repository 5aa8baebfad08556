//! Tables of precomputed copies of resident bases: copy k of a base is
//! 2^(c w k) times it (w = windows per bucket set), stored base-major, so that
//! an MSM puts the digits of several windows into one set of buckets (see
//! kernels/msm/pippenger.cuh and msm_plan::WindowPlan). Made on the device when the
//! bases are uploaded; opt-in through CudaBackend::set_precompute.

use blst::*;
use cudarc::driver::CudaSlice;

use crate::bases::{as_words, env_mib, Store, MSM_SCRATCH_PER_TERM};
use crate::msm_plan::{model_window_bits, plan_cost};
use crate::{CudaBackend, CudaError, Curve, G1Bases, G2Bases};

/// Largest window a precomputed table is made for: one set of 2^23 buckets
/// (the counters, 32 MiB, still fit the H200's L2 cache).
const MAX_TABLE_C: u32 = 24;

/// The window size and number of copies a table of precomputed bases for MSMs
/// of n terms should have, with at most `max_copies` copies (memory): the c
/// that minimises the modelled cost, and no more copies than that c needs.
/// (c, 1) when copies do not pay.
pub(crate) fn table_shape(n: usize, max_copies: u32) -> (u32, u32) {
    if let Some(c) = std::env::var("CROSSGROTH_CUDA_TABLE_C")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        // for tuning: this window size, as few sets as max_copies allows
        let c = c.clamp(4, MAX_TABLE_C);
        let nwin = 256u32.div_ceil(c);
        let wset = nwin.div_ceil(max_copies.clamp(1, nwin));
        return (c, nwin.div_ceil(wset));
    }
    let plain = model_window_bits(n);
    let mut best = (plan_cost(n, plain, 256u32.div_ceil(plain)), plain, 1u32);
    if max_copies > 1 {
        for c in 4..=MAX_TABLE_C {
            let nwin = 256u32.div_ceil(c);
            let wset = nwin.div_ceil(max_copies.min(nwin));
            let cost = plan_cost(n, c, wset);
            if cost < best.0 {
                best = (cost, c, nwin.div_ceil(wset));
            }
        }
    }
    (best.1, best.2)
}

/// The table an upload makes.
#[derive(Clone, Copy)]
enum Shape {
    /// What the cost model picks for MSMs over all the bases, with at most
    /// this many copies (1: plain bases).
    Auto { max_copies: u32 },
    /// Exactly these copies for c-bit windows.
    Exact { copies: u32, c: u32 },
}

impl Shape {
    fn exact(copies: u32, c: u32) -> Result<Self, CudaError> {
        let nwin = 256u32.div_ceil(c.max(1));
        if !(4..=MAX_TABLE_C).contains(&c) || copies == 0 || copies > nwin {
            return Err(CudaError::InvalidInput(format!(
                "a table of {copies} copies for {c}-bit windows (c must be 4..={MAX_TABLE_C}, copies 1..={nwin})"
            )));
        }
        Ok(Shape::Exact { copies, c })
    }
}

/// Bases per launch of the precomputation (bounds its scratch memory).
const PRECOMPUTE_CHUNK: usize = 1 << 18;

impl CudaBackend {
    /// [`Self::upload_g1_bases`] with at most `max_copies` points per base.
    pub fn upload_g1_bases_with_copies(
        &self,
        bases: &[blst_p1_affine],
        max_copies: u32,
    ) -> Result<G1Bases, CudaError> {
        let shape = Shape::Auto { max_copies };
        Ok(G1Bases {
            store: self.upload_table(Curve::G1, as_words(bases, 12), bases.len(), shape)?,
            len: bases.len(),
        })
    }

    /// [`Self::upload_g2_bases`] with at most `max_copies` points per base.
    pub fn upload_g2_bases_with_copies(
        &self,
        bases: &[blst_p2_affine],
        max_copies: u32,
    ) -> Result<G2Bases, CudaError> {
        let shape = Shape::Auto { max_copies };
        Ok(G2Bases {
            store: self.upload_table(Curve::G2, as_words(bases, 24), bases.len(), shape)?,
            len: bases.len(),
        })
    }

    /// G1 bases with exactly `copies` copies made for windows of `c` bits
    /// (4..=24), whatever the cost model would choose: for tests and tuning.
    /// MSMs still use the copies only where the model says they pay.
    pub fn upload_g1_bases_with_shape(
        &self,
        bases: &[blst_p1_affine],
        copies: u32,
        c: u32,
    ) -> Result<G1Bases, CudaError> {
        let shape = Shape::exact(copies, c)?;
        Ok(G1Bases {
            store: self.upload_table(Curve::G1, as_words(bases, 12), bases.len(), shape)?,
            len: bases.len(),
        })
    }

    /// G2 bases with exactly `copies` copies for `c`-bit windows; see
    /// [`Self::upload_g1_bases_with_shape`].
    pub fn upload_g2_bases_with_shape(
        &self,
        bases: &[blst_p2_affine],
        copies: u32,
        c: u32,
    ) -> Result<G2Bases, CudaError> {
        let shape = Shape::exact(copies, c)?;
        Ok(G2Bases {
            store: self.upload_table(Curve::G2, as_words(bases, 24), bases.len(), shape)?,
            len: bases.len(),
        })
    }

    /// Uploads `len` bases and, where copies are asked for (and, for
    /// Shape::Auto, pay for MSMs over all of them and fit in memory), replaces
    /// them by a table of precomputed copies.
    fn upload_table<T>(
        &self,
        curve: Curve,
        words: &[u64],
        len: usize,
        shape: Shape,
    ) -> Result<Store<T>, CudaError> {
        let what = curve.bases_name();
        if let Shape::Exact { copies, .. } = shape {
            if len.saturating_mul(copies as usize) >= (u32::MAX / 2) as usize {
                return Err(CudaError::InvalidInput(format!(
                    "{len} bases with {copies} copies each are too many"
                )));
            }
        }
        let plain = self.upload_bases(words, what)?;
        let (c, copies) = match shape {
            Shape::Auto { max_copies } => {
                let point_bytes = 16 * curve.fe_words();
                let fits = self.affordable_copies(len, point_bytes, curve);
                // point indices (base * copies + copy) stay below 2^31
                let indexable = ((u32::MAX / 2) as usize / len.max(1)).clamp(1, 64) as u32;
                table_shape(len, max_copies.min(fits).min(indexable))
            }
            Shape::Exact { copies, c } => (c, copies),
        };
        if copies <= 1 || len == 0 {
            self.keep_pool_above_resident();
            return Ok(Store::Device {
                buf: plain,
                copies: 1,
                c: 0,
            });
        }
        let started = std::time::Instant::now();
        let table = self.precompute_table(curve, &plain, len, copies, c)?;
        drop(plain);
        self.keep_pool_above_resident();
        log::info!(
            "{what}: {len} bases precomputed as {copies} copies for {c}-bit windows in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        Ok(Store::Device {
            buf: table,
            copies,
            c,
        })
    }

    /// How many copies of `len` bases fit in 90 % of the free device memory
    /// beside the plain bases, the precomputation's scratch and an MSM's working
    /// buffers over all of them (CROSSGROTH_CUDA_RESIDENT_MIB, where set, caps
    /// the table's bytes instead).
    fn affordable_copies(&self, len: usize, point_bytes: usize, curve: Curve) -> u32 {
        if len == 0 {
            return 1;
        }
        let per_copy = len * point_bytes;
        // scratch per copy: one XYZZ point and one field element per base of a chunk
        let scratch_per_copy =
            PRECOMPUTE_CHUNK.min(len) * 8 * (curve.xyzz_words() + curve.fe_words());
        let budget = match env_mib("CROSSGROTH_CUDA_RESIDENT_MIB") {
            Some(limit) => limit,
            // (the plain bases are uploaded already: `free` excludes them)
            None => match self.memory() {
                Ok((free, _)) => (free / 10 * 9).saturating_sub(len * MSM_SCRATCH_PER_TERM),
                Err(_) => 0,
            },
        };
        (budget / (per_copy + scratch_per_copy)).clamp(1, 64) as u32
    }

    /// The table of `copies` points per base for windows of c bits: copy k of
    /// base b is 2^(c wset k) b (msm_precompute), chunk by chunk.
    fn precompute_table(
        &self,
        curve: Curve,
        plain: &CudaSlice<u64>,
        len: usize,
        copies: u32,
        c: u32,
    ) -> Result<CudaSlice<u64>, CudaError> {
        let (pw, xw, fw) = (2 * curve.fe_words(), curve.xyzz_words(), curve.fe_words());
        let nwin = 256u32.div_ceil(c);
        let shift = c * nwin.div_ceil(copies);
        let k = copies as usize;
        let _g = self.guard();
        let mut table = self.alloc_u64(len * k * pw, "precomputed bases")?;
        let chunk = PRECOMPUTE_CHUNK.min(len).max(1);
        let mut tmp = self.alloc_u64(chunk * (k - 1) * xw, "precomputation scratch")?;
        let mut tmp_prod = self.alloc_u64(chunk * (k - 1) * fw, "precomputation scratch")?;
        let f = &self.k.g[curve as usize].precompute;
        for lo in (0..len).step_by(chunk) {
            let hi = (lo + chunk).min(len);
            let n32 = (hi - lo) as u32;
            let src = plain.slice(lo * pw..hi * pw);
            let mut dst = table.slice_mut(lo * k * pw..hi * k * pw);
            launch!(self, f, hi - lo, 128; &src, &n32, &copies, &shift, &mut dst, &mut tmp, &mut tmp_prod);
        }
        self.sync("precomputing bases")?;
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::{table_shape, Shape};

    #[test]
    fn table_shapes_follow_the_cost_model() {
        // no copies allowed: the plain window
        assert_eq!(table_shape(1 << 24, 1), (20, 1));
        // full tables: one bucket set, larger windows
        assert_eq!(table_shape(1 << 24, 64), (22, 12));
        assert_eq!(table_shape(1 << 20, 64), (20, 13));
        // a table never has more copies than its windows need
        for lg in 4..28 {
            for max in [2, 3, 5, 16, 64] {
                let (c, copies) = table_shape(1 << lg, max);
                let nwin = 256u32.div_ceil(c);
                assert!(
                    copies <= max && copies <= nwin,
                    "2^{lg}, {max}: ({c}, {copies})"
                );
                if copies > 1 {
                    let wset = nwin.div_ceil(copies);
                    assert_eq!(nwin.div_ceil(wset), copies, "2^{lg}, {max}: spare copies");
                }
            }
        }
    }

    #[test]
    fn table_shapes_outside_the_kernels_limits_are_refused() {
        assert!(Shape::exact(12, 22).is_ok());
        assert!(Shape::exact(1, 4).is_ok());
        assert!(Shape::exact(3, 30).is_err(), "c above 24");
        assert!(Shape::exact(3, 3).is_err(), "c below 4");
        assert!(Shape::exact(0, 8).is_err(), "no copy");
        assert!(
            Shape::exact(33, 8).is_err(),
            "more copies than 8-bit windows"
        );
    }
}

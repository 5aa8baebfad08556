//! Tables of precomputed copies of resident bases: copy k of a base is
//! 2^(c w k) times it (w = windows per bucket set), stored base-major, so that
//! an MSM puts the digits of several windows into one set of buckets (see
//! kernels/msm/pippenger.cuh and msm_plan::WindowPlan). Each term still costs
//! one addition a window, but the bucket reduction runs once per set instead
//! of once per window, so larger windows (fewer additions) pay. Made on the
//! device when the bases are uploaded with more than one copy allowed.

use cudarc::driver::CudaSlice;

use crate::bases::{as_words, Bases, Store};
use crate::msm_plan::{counters_fit, model_window_bits, plan_cost};
use crate::{CudaDevice, CudaError, Curve, Layout};

/// Largest window a precomputed table is made for: one set of 2^23 buckets
/// (the counters, 32 MiB, still fit in the L2 cache of the GPU the cost model
/// was fitted on).
const MAX_TABLE_C: u32 = 24;

/// Most copies a table has (the cost model never wants more).
const MAX_COPIES: u32 = 64;

/// The window size and number of copies a table of precomputed bases for MSMs
/// of n terms should have, with at most `max_copies` copies: the c that
/// minimises the modelled cost, and no more copies than that c needs.
/// (c, 1) when copies do not pay.
pub(crate) fn table_shape(n: usize, max_copies: u32) -> (u32, u32) {
    let plain = model_window_bits(n);
    let mut best = (plan_cost(n, plain, 256u32.div_ceil(plain)), plain, 1u32);
    if max_copies > 1 {
        for c in 4..=MAX_TABLE_C {
            let nwin = 256u32.div_ceil(c);
            let wset = nwin.div_ceil(max_copies.min(nwin));
            if !counters_fit(c, wset) {
                continue;
            }
            let cost = plan_cost(n, c, wset);
            if cost < best.0 {
                best = (cost, c, nwin.div_ceil(wset));
            }
        }
    }
    (best.1, best.2)
}

/// The table an upload of `len` bases with at most `max_copies` copies makes:
/// (c, copies), copies 1 for the plain bases.
fn auto_shape(len: usize, max_copies: u32) -> (u32, u32) {
    if len == 0 {
        return (0, 1);
    }
    // point indices (base * copies + copy) stay below 2^31
    let indexable = ((u32::MAX / 2) as usize / len).clamp(1, MAX_COPIES as usize) as u32;
    table_shape(len, max_copies.clamp(1, MAX_COPIES).min(indexable))
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

    /// (c, copies) for `len` bases.
    fn of(self, len: usize) -> (u32, u32) {
        match self {
            Shape::Auto { max_copies } => auto_shape(len, max_copies),
            Shape::Exact { copies, c } => (c, copies),
        }
    }
}

/// Bases per launch of the precomputation (bounds its scratch memory).
const PRECOMPUTE_CHUNK: usize = 1 << 18;

/// Device bytes the precomputation of `copies` copies of `len` bases works in
/// (one XYZZ point and one field element per extra copy of a chunk's bases).
fn precompute_scratch_bytes(fe_words: usize, len: usize, copies: u32) -> usize {
    let chunk = PRECOMPUTE_CHUNK.min(len).max(1);
    chunk * (copies as usize - 1) * 8 * (4 + 1) * fe_words
}

impl CudaDevice {
    /// Copies bases to the device (resident until dropped) with at most
    /// `max_copies` points per base: 1, the plain bases; more, a table of
    /// precomputed copies whose shape the cost model picks for MSMs over all of
    /// them (no more copies than pay, at most 64), made on the device once.
    /// MSMs use the copies only where the model says they pay.
    ///
    /// Fails with [`CudaError::OutOfMemory`] when the bases do not fit; it
    /// never falls back to fewer copies or to streaming: the caller decides
    /// placement, from [`Self::resident_bytes`], [`Self::upload_peak_bytes`],
    /// [`Self::msm_scratch_bytes`] and [`Self::memory`].
    pub fn upload<C: Curve>(
        &self,
        bases: &[C::Affine],
        max_copies: u32,
    ) -> Result<Bases<C>, CudaError> {
        self.upload_table::<C>(bases, Shape::Auto { max_copies })
    }

    /// Bases with exactly `copies` copies made for windows of `c` bits
    /// (4..=24), whatever the cost model would choose: for tests and tuning.
    /// MSMs still use the copies only where the model says they pay.
    pub fn upload_with_shape<C: Curve>(
        &self,
        bases: &[C::Affine],
        copies: u32,
        c: u32,
    ) -> Result<Bases<C>, CudaError> {
        self.upload_table::<C>(bases, Shape::exact(copies, c)?)
    }

    /// Device bytes that [`Self::upload`] of `len` bases with `max_copies`
    /// holds once done (the table the cost model would make).
    pub fn resident_bytes<C: Curve>(len: usize, max_copies: u32) -> usize {
        let (_, copies) = auto_shape(len, max_copies);
        len * copies as usize * C::AFFINE_BYTES
    }

    /// Device bytes that [`Self::upload`] of `len` bases with `max_copies`
    /// needs while it runs: the table, and while the copies are made the plain
    /// bases and the precomputation's scratch as well.
    pub fn upload_peak_bytes<C: Curve>(len: usize, max_copies: u32) -> usize {
        let (_, copies) = auto_shape(len, max_copies);
        let resident = Self::resident_bytes::<C>(len, max_copies);
        if copies <= 1 {
            return resident;
        }
        resident + len * C::AFFINE_BYTES + precompute_scratch_bytes(C::FE_WORDS, len, copies)
    }

    /// Uploads the bases and, where the shape has copies, replaces them by a
    /// table of precomputed copies.
    fn upload_table<C: Curve>(
        &self,
        bases: &[C::Affine],
        shape: Shape,
    ) -> Result<Bases<C>, CudaError> {
        let layout = Layout::of::<C>()?;
        let len = bases.len();
        let what = format!("{} bases", C::NAME);
        let (c, copies) = shape.of(len);
        // (Shape::Auto keeps the indices in range by itself)
        if matches!(shape, Shape::Exact { .. })
            && len.saturating_mul(copies as usize) >= (u32::MAX / 2) as usize
        {
            return Err(CudaError::InvalidInput(format!(
                "{len} bases with {copies} copies each are too many"
            )));
        }
        let plain = self.upload_bases(as_words(bases, layout.affine_words()), &what)?;
        let store = if copies <= 1 || len == 0 {
            Store::Device {
                buf: plain,
                copies: 1,
                c: 0,
            }
        } else {
            // A hard refusal with the sizes, rather than an allocation failure
            // halfway through (the plain bases are uploaded already: `free`
            // excludes them).
            let needed = len * copies as usize * C::AFFINE_BYTES
                + precompute_scratch_bytes(C::FE_WORDS, len, copies);
            if let Ok((free, _)) = self.memory() {
                if needed > free {
                    return Err(CudaError::OutOfMemory(format!(
                        "{what}: a table of {copies} copies of {len} bases needs {needed} bytes \
                         beside the plain bases, {free} are free"
                    )));
                }
            }
            let started = std::time::Instant::now();
            let table = self.precompute_table(layout, &plain, len, copies, c)?;
            drop(plain);
            log::info!(
                "{what}: {len} bases precomputed as {copies} copies for {c}-bit windows in {:.2} s",
                started.elapsed().as_secs_f64()
            );
            Store::Device {
                buf: table,
                copies,
                c,
            }
        };
        self.keep_pool_above_resident();
        Ok(Bases { store, len })
    }

    /// The table of `copies` points per base for windows of c bits: copy k of
    /// base b is 2^(c wset k) b (msm_precompute), chunk by chunk.
    fn precompute_table(
        &self,
        layout: Layout,
        plain: &CudaSlice<u64>,
        len: usize,
        copies: u32,
        c: u32,
    ) -> Result<CudaSlice<u64>, CudaError> {
        let (pw, xw, fw) = (layout.affine_words(), layout.xyzz_words(), layout.fe_words);
        let nwin = 256u32.div_ceil(c);
        let shift = c * nwin.div_ceil(copies);
        let k = copies as usize;
        let _g = self.guard();
        let mut table = self.alloc_u64(len * k * pw, "precomputed bases")?;
        let chunk = PRECOMPUTE_CHUNK.min(len).max(1);
        let mut tmp = self.alloc_u64(chunk * (k - 1) * xw, "precomputation scratch")?;
        let mut tmp_prod = self.alloc_u64(chunk * (k - 1) * fw, "precomputation scratch")?;
        let f = &self.k.g[layout.group as usize].precompute;
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
    use super::{auto_shape, table_shape, Shape};
    use crate::msm_plan::counters_fit;
    use crate::{CudaDevice, G1, G2};

    #[test]
    fn table_shapes_follow_the_cost_model() {
        // no copies allowed: the plain window
        assert_eq!(table_shape(1 << 24, 1), (20, 1));
        // full tables: one bucket set, larger windows
        assert_eq!(table_shape(1 << 24, 64), (22, 12));
        assert_eq!(table_shape(1 << 20, 64), (20, 13));
        // a few copies of a dense 2^27 MSM's bases (H of a 32 GiB PoRep): the
        // bucket counters of every set stay in L2: three copies for 22-bit
        // windows (four sets); two copies keep 20-bit windows, in seven sets
        // (six sets of 22-bit or 24-bit windows doubled the count of digits)
        assert_eq!(table_shape(1 << 27, 3), (22, 3));
        assert_eq!(table_shape(1 << 27, 2), (20, 2));
        // a table never has more copies than its windows need, and its
        // counters fit
        for lg in 4..28 {
            for max in [2, 3, 5, 16, 64] {
                let (c, copies) = table_shape(1 << lg, max);
                let nwin = 256u32.div_ceil(c);
                let wset = nwin.div_ceil(copies);
                assert!(counters_fit(c, wset), "2^{lg}, {max}: ({c}, {copies})");
                assert!(
                    copies <= max && copies <= nwin,
                    "2^{lg}, {max}: ({c}, {copies})"
                );
                if copies > 1 {
                    assert_eq!(nwin.div_ceil(wset), copies, "2^{lg}, {max}: spare copies");
                }
            }
        }
    }

    #[test]
    fn resident_bytes_are_the_table_the_model_makes() {
        type B = CudaDevice;
        assert_eq!(B::resident_bytes::<G1>(0, 64), 0);
        assert_eq!(B::resident_bytes::<G1>(1000, 1), 1000 * 96);
        assert_eq!(B::resident_bytes::<G2>(1000, 0), 1000 * 192);
        // the model's 12 copies for 22-bit windows at 2^24
        assert_eq!(auto_shape(1 << 24, 64), (22, 12));
        assert_eq!(B::resident_bytes::<G1>(1 << 24, 64), (1 << 24) * 12 * 96);
        // more than 64 copies are never made
        assert_eq!(auto_shape(1 << 20, 1000), auto_shape(1 << 20, 64));
        // indices stay below 2^31 - 1: 2^28 bases take at most 7 copies
        let (_, copies) = auto_shape(1 << 28, 64);
        assert!((1usize << 28) * copies as usize <= (u32::MAX / 2) as usize);
        // the peak adds the plain bases and the scratch only when copies are made
        assert_eq!(B::upload_peak_bytes::<G1>(1000, 1), 1000 * 96);
        let peak = B::upload_peak_bytes::<G1>(1 << 20, 64);
        let (_, copies) = auto_shape(1 << 20, 64);
        let scratch = (1 << 18) * (copies as usize - 1) * 8 * (24 + 6);
        assert_eq!(peak, (1 << 20) * 96 * (copies as usize + 1) + scratch);
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

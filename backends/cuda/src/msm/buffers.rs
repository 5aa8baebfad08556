//! The MSM's device buffers, allocated in two steps because the second
//! depends on the first: the scalars' buffers (uploads and the
//! classification's outputs) before the classification, whose count of
//! general scalars sizes the rest; then the sort's and the sums' buffers for
//! the plan. The structs group the buffers by when they can be freed: the
//! sort's go back to the pool before the bucket reduction.

use cudarc::driver::CudaSlice;

use super::plan::{PassPlan, Sizes};
use super::reduce::SUM_FAN_IN;
use super::validate::Inputs;
use crate::profile::Profiler;
use crate::{CudaDevice, CudaError};

/// The scalars: on the host for the copy lane, uploaded, and the density.
pub(super) struct ScalarBuffers<'a> {
    /// The host scalars' words (none for scalars already on the device).
    pub(super) words: &'a [u64],
    /// One pass: the uploaded scalars (none when already on the device).
    /// Several: two buffers that the copy lane fills in turn.
    pub(super) d_scal: Vec<CudaSlice<u64>>,
    pub(super) d_density: Option<CudaSlice<u64>>,
    pub(super) d_prefix: Option<CudaSlice<u32>>,
}

/// The classification's outputs.
pub(super) struct Prepared {
    /// A pass's scalars in canonical form.
    pub(super) canon: CudaSlice<u64>,
    /// Each general scalar's base.
    pub(super) bidx: CudaSlice<u32>,
    /// The bases whose scalar is 1.
    pub(super) one_bases: CudaSlice<u32>,
    /// [general scalars, scalars 1]
    pub(super) counters: CudaSlice<u32>,
}

/// The sort's buffers: bucket counts, offsets and sorted entries.
pub(super) struct SortBuffers {
    pub(super) counts: CudaSlice<u32>,
    /// One set of offsets and entries, or two with several passes where the
    /// device has room for them.
    pub(super) offsets_sets: Vec<CudaSlice<u32>>,
    pub(super) entries_sets: Vec<CudaSlice<u64>>,
    pub(super) cursor: CudaSlice<u32>,
    pub(super) tile_sums: CudaSlice<u32>,
    pub(super) tile_offsets: CudaSlice<u32>,
    pub(super) tile_cursor: CudaSlice<u32>,
}

/// The buckets, the partial sums that reduce them, and the output.
pub(super) struct SumBuffers {
    pub(super) buckets: CudaSlice<u64>,
    pub(super) pass_buckets: Option<CudaSlice<u64>>,
    pub(super) heads: CudaSlice<u64>,
    pub(super) heads2: CudaSlice<u64>,
    pub(super) segs: CudaSlice<u64>,
    pub(super) tmp: CudaSlice<u64>,
    /// [dummy, nsets set sums, ones]
    pub(super) out: CudaSlice<u64>,
}

impl CudaDevice {
    /// Uploads the density (and, with one pass, the host scalars) and
    /// allocates the scalars' buffers and the classification's outputs.
    pub(super) fn alloc_scalars<'a>(
        &self,
        words: &'a [u64],
        density: Option<&[u64]>,
        input: &Inputs<'_>,
        pp: &PassPlan,
        prof: &mut Profiler<'_>,
    ) -> Result<(ScalarBuffers<'a>, Prepared), CudaError> {
        let (n, multi, m_max) = (input.n, pp.multi, pp.m_max);
        // One pass: the scalars go up on this stream before anything else. Several:
        // two buffers that the copy lane fills while the kernels work on the
        // previous pass.
        let mut d_scal: Vec<CudaSlice<u64>> = Vec::with_capacity(2);
        if !multi && !pp.on_device {
            d_scal.push(self.upload_large(words, "MSM scalars")?);
        }
        let (d_density, d_prefix) = match (density, &input.prefix) {
            (Some(d), Some(p)) => (
                Some(self.upload_u64(d, "density")?),
                Some(
                    self.stream
                        .clone_htod(p)
                        .map_err(|e| CudaError::alloc("density prefix", p.len() * 4, e))?,
                ),
            ),
            _ => (None, None),
        };
        if !multi {
            prof.mark("upload");
        } else {
            for _ in 0..2 {
                d_scal.push(self.alloc_u64(4 * m_max, "MSM scalars")?);
            }
        }
        let canon = self.alloc_u64(4 * m_max, "MSM canonical scalars")?;
        let bidx = self.alloc_u32(n, "MSM base indices")?;
        let one_bases = self.alloc_u32(pp.included, "bases of scalars 1")?;
        // [general scalars, scalars 1]
        let counters = self
            .stream
            .alloc_zeros::<u32>(2)
            .map_err(|e| CudaError::alloc("MSM counters", 8, e))?;
        Ok((
            ScalarBuffers {
                words,
                d_scal,
                d_density,
                d_prefix,
            },
            Prepared {
                canon,
                bidx,
                one_bases,
                counters,
            },
        ))
    }

    /// Allocates the sort's and the sums' buffers for the plan's sizes.
    pub(super) fn alloc_pass_buffers(
        &self,
        s: &Sizes,
        multi: bool,
    ) -> Result<(SortBuffers, SumBuffers), CudaError> {
        let (nb, xw, jw) = (s.nb, s.xw, s.jw);
        let (nsets, nseg, nchunks) = (s.nsets, s.nseg, s.nchunks);
        let (pass_entries, l1, tiles) = (s.pass_entries, s.l1, s.tiles);
        let counts = self
            .stream
            .alloc_zeros::<u32>(nb)
            .map_err(|e| CudaError::alloc("bucket counts", nb * 4, e))?;
        // Sorted entries and bucket offsets: one set here, a second (below)
        // where the device has room for it.
        let mut offsets_sets = vec![self.alloc_u32(nb + 1, "bucket offsets")?];
        let mut entries_sets = vec![self.alloc_u64(pass_entries, "MSM entries")?];
        let cursor = self.alloc_u32(nb, "bucket cursor")?;
        // all-zero words are the XYZZ identity (ZZ = 0)
        let buckets = self
            .stream
            .alloc_zeros::<u64>(nb * xw)
            .map_err(|e| CudaError::alloc("buckets", nb * xw * 8, e))?;
        // Passes after the first accumulate into empty buckets of their own,
        // then merge them (see msm_bucket_merge).
        let pass_buckets = if multi {
            Some(self.alloc_u64(nb * xw, "pass buckets")?)
        } else {
            None
        };
        let heads = self.alloc_u64(nchunks * xw, "chunk partials")?;
        let heads2 = self.alloc_u64(nchunks.div_ceil(l1 as usize) * xw, "chunk partials")?;
        let segs = self.alloc_u64(nsets * nseg * xw, "bucket segments")?;
        // the first launch of the window-sum tree writes the most partials
        let fan_in = SUM_FAN_IN;
        let tmp = self.alloc_u64(
            nsets * nseg.div_ceil(fan_in as usize).max(1) * xw,
            "window partials",
        )?;
        // Output: [dummy, nsets set sums, ones]
        let out = self
            .stream
            .alloc_zeros::<u64>((nsets + 2) * jw)
            .map_err(|e| CudaError::alloc("MSM out", 0, e))?;
        let tile_sums = self.alloc_u32(tiles, "bucket tile sums")?;
        let tile_offsets = self.alloc_u32(tiles + 1, "bucket tile offsets")?;
        let tile_cursor = self.alloc_u32(tiles, "bucket tile offsets")?;
        // With several passes, a second set of entries and offsets where the
        // device has room for it after every other buffer (so that it never
        // takes the room of one the MSM needs), so that pass p + 1 can be
        // sorted while pass p accumulates from the other; otherwise each sort
        // waits for the accumulation before it.
        if multi {
            if let (Ok(o), Ok(e)) = (
                self.alloc_u32(nb + 1, "bucket offsets"),
                self.alloc_u64(pass_entries, "MSM entries"),
            ) {
                offsets_sets.push(o);
                entries_sets.push(e);
            }
        }
        Ok((
            SortBuffers {
                counts,
                offsets_sets,
                entries_sets,
                cursor,
                tile_sums,
                tile_offsets,
                tile_cursor,
            },
            SumBuffers {
                buckets,
                pass_buckets,
                heads,
                heads2,
                segs,
                tmp,
                out,
            },
        ))
    }
}

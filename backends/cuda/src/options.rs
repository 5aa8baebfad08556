//! How a [`CudaDevice`](crate::CudaDevice) runs: typed options given when it
//! opens, in place of environment variables, so that a caller (the prover, a
//! test, a benchmark) says what it wants and nothing else can change it.

use std::path::PathBuf;

/// How a CudaDevice runs; `Default` is what the measurements chose.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CudaOptions {
    /// Which kernel code to load.
    pub module: ModuleSource,
    /// MSM tuning (also changeable later: [`CudaDevice::set_msm_options`](crate::CudaDevice::set_msm_options)).
    pub msm: MsmOptions,
    /// Host threads that copy into the pinned staging buffers, 1..=64 (`None`:
    /// the available cores, at most 8: one core's memcpy is well under PCIe's
    /// bandwidth).
    pub copy_threads: Option<usize>,
    /// Bytes of freed device memory the allocator keeps for the next call
    /// (`None`: half the device's memory, at most 64 GiB; 0 keeps none,
    /// for several processes sharing one GPU). Without a reserve every MSM maps
    /// its scratch again.
    pub pool_keep_bytes: Option<u64>,
    /// Per-phase device timings of each MSM and H computation on stderr (CUDA
    /// events between the phases; nothing is recorded when off).
    pub profile: bool,
}

/// Which kernel code a backend loads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ModuleSource {
    /// The embedded sm_90 cubin on compute capability 9.0 (no JIT), else, or if
    /// the driver refuses it, the embedded PTX.
    #[default]
    Auto,
    /// The embedded PTX, JIT-compiled by the driver (what every GPU other than
    /// Hopper runs).
    EmbeddedPtx,
    /// A PTX file (a kernel variant under test), JIT-compiled.
    PtxFile(PathBuf),
    /// A cubin file (a kernel variant built by `scripts/cuda/build-ptx.sh --variant`).
    CubinFile(PathBuf),
}

/// MSM tuning: each knob selects between alternatives that were measured and
/// are worth measuring again; `None` is the choice the cost model or the
/// measurements made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MsmOptions {
    /// Plain windows of this many bits, 4..=22, whatever the cost model says
    /// and whether or not the bases have precomputed copies.
    pub window_bits: Option<u32>,
    /// Passes over parts of the scalars of an MSM over resident bases, 1..=16
    /// (`None`: two where hiding half the scalars' upload outweighs a pass's
    /// fixed costs, else one).
    pub passes: Option<usize>,
    /// The first pass's share of the scalars, in (0, 1] (`None`: 1 / (2 passes
    /// + 1), since its upload is the only one on the critical path).
    pub first_pass_share: Option<f64>,
    /// Bases per chunk of an MSM over streamed bases, at least 64 (`None`: two
    /// chunk buffers and one chunk's MSM buffers in half the free memory).
    pub stream_chunk: Option<usize>,
}

impl MsmOptions {
    /// The window size asked for, within what the kernels take.
    pub(crate) fn window_bits(&self) -> Option<u32> {
        self.window_bits.map(|c| c.clamp(4, 22))
    }
    /// The passes asked for, within 1..=16.
    pub(crate) fn passes(&self) -> Option<usize> {
        self.passes.map(|p| p.clamp(1, 16))
    }
    /// The first pass's share asked for, if it is one.
    pub(crate) fn first_pass_share(&self) -> Option<f64> {
        self.first_pass_share.filter(|s| *s > 0.0 && *s <= 1.0)
    }
    /// The chunk size asked for, at least 64 bases.
    pub(crate) fn stream_chunk(&self) -> Option<usize> {
        self.stream_chunk.map(|b| b.max(64))
    }
}

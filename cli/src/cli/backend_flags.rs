//! The backend options of every command: `--tables`, `--cuda-profile`, `--wgpu-portable`,
//! `--wgpu-witness-on-device`, and the environment
//! variables a user sets for device choice, turned into the library's typed
//! options once, when the command line is parsed.

use std::sync::OnceLock;

use crossgroth::backend::{AdapterChoice, BackendOptions, CudaOptions, WgpuOptions};
use crossgroth::groth16::placement::{PlacementConfig, TablePolicy};

/// Flags shared by every subcommand.
#[derive(clap::Args, Clone, Debug)]
pub struct BackendFlags {
    /// Keep G1 bases on the device as tables of precomputed copies (faster
    /// MSMs, more device memory, made when the parameters are loaded): auto
    /// (where the parameter set's tables fit), off, or the most copies per base.
    #[arg(long, global = true, default_value = "auto")]
    pub tables: TablePolicy,
    /// Print the device time of each phase of every CUDA MSM and H
    /// computation to stderr (one `profile` line each).
    #[arg(long, global = true)]
    pub cuda_profile: bool,
    /// wgpu: run the portable u32 field code (13-bit limbs) even where the
    /// adapter offers SHADER_INT64, e.g. to check on one GPU what adapters
    /// without 64-bit integers run; the same proofs either way.
    #[arg(long, global = true)]
    pub wgpu_portable: bool,
    /// wgpu: compute a proof's a, b and c on the device from its witness and
    /// the circuit's constraint matrices (kept there), as cuda does, instead
    /// of sending them up: less host memory a partition, more device memory.
    #[arg(long, global = true)]
    pub wgpu_witness_on_device: bool,
}

struct Chosen {
    backends: BackendOptions,
    placement: PlacementConfig,
}

static CHOSEN: OnceLock<Chosen> = OnceLock::new();

/// Records the flags; `CROSSGROTH_WGPU_ADAPTER` picks a wgpu adapter by name,
/// and the wgpu backend keeps its compiled pipelines in the CLI's cache
/// directory (`wgpu-pipelines`), so that a later run skips the driver's
/// compilation.
pub fn choose(flags: &BackendFlags) {
    let wgpu = WgpuOptions {
        adapter: std::env::var("CROSSGROTH_WGPU_ADAPTER")
            .ok()
            .filter(|v| !v.is_empty())
            .map(AdapterChoice::Name),
        pipeline_cache_dir: super::params::cache_dir().map(|d| d.join("wgpu-pipelines")),
        allow_int64: !flags.wgpu_portable,
        witness_on_device: flags.wgpu_witness_on_device,
        ..WgpuOptions::default()
    };
    let cuda = CudaOptions {
        profile: flags.cuda_profile,
        ..CudaOptions::default()
    };
    let _ = CHOSEN.set(Chosen {
        backends: BackendOptions { cuda, wgpu },
        placement: PlacementConfig {
            tables: flags.tables,
            ..PlacementConfig::default()
        },
    });
}

fn chosen() -> &'static Chosen {
    CHOSEN.get_or_init(|| Chosen {
        backends: BackendOptions::default(),
        placement: PlacementConfig::default(),
    })
}

/// The options backends are opened with.
pub fn backend_options() -> &'static BackendOptions {
    &chosen().backends
}

/// Where parameter bases are placed.
pub fn placement() -> PlacementConfig {
    chosen().placement
}

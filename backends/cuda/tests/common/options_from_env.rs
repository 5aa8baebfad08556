//! The backend's options from CROSSGROTH_CUDA_* variables, for the tests and
//! benchmarks (scripts/device/*.sh set them to compare kernels and settings;
//! the crate itself reads no environment). Unset or unparsable: the default.
//! backends/cuda/README.md lists them.

use crossgroth_cuda::{CudaOptions, ModuleSource, MsmOptions};

pub fn options_from_env() -> CudaOptions {
    let set = |name: &str| std::env::var_os(name).is_some();
    let path = |name: &str| std::env::var_os(name).map(std::path::PathBuf::from);
    fn number<T: std::str::FromStr>(name: &str) -> Option<T> {
        std::env::var(name).ok()?.parse().ok()
    }
    let module = if let Some(p) = path("CROSSGROTH_CUDA_PTX") {
        ModuleSource::PtxFile(p)
    } else if let Some(p) = path("CROSSGROTH_CUDA_CUBIN") {
        ModuleSource::CubinFile(p)
    } else if set("CROSSGROTH_CUDA_NO_CUBIN") {
        ModuleSource::EmbeddedPtx
    } else {
        ModuleSource::Auto
    };
    CudaOptions {
        module,
        msm: MsmOptions {
            window_bits: number("CROSSGROTH_CUDA_MSM_C"),
            passes: number("CROSSGROTH_CUDA_MSM_PASSES"),
            first_pass_share: number("CROSSGROTH_CUDA_MSM_FIRST_SHARE"),
            stream_chunk: number("CROSSGROTH_CUDA_STREAM_CHUNK"),
        },
        copy_threads: number("CROSSGROTH_CUDA_COPY_THREADS"),
        pool_keep_bytes: number::<u64>("CROSSGROTH_CUDA_POOL_KEEP_MIB").map(|mib| mib << 20),
        profile: set("CROSSGROTH_CUDA_PROFILE"),
    }
}

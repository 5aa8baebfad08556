use thiserror::Error;

/// Everything the wgpu backend can report. No entry point panics.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WgpuError {
    /// No usable adapter (no Vulkan/Metal/DX12 driver, none matching
    /// `Options::adapter`, or the device could not be created).
    #[error("wgpu unavailable: {0}")]
    Unavailable(String),
    /// The caller's input is inconsistent (lengths, sizes, density bitmap).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A buffer could not be allocated (device memory or adapter limits).
    #[error("out of device memory: {0}")]
    OutOfMemory(String),
    /// The device was lost (driver reset, GPU removed, ...); rebuild the backend.
    #[error("device lost: {0}")]
    DeviceLost(String),
    /// A shader failed to compile or a pipeline could not be created.
    #[error("shader/pipeline error in {what}: {msg}")]
    Shader { what: String, msg: String },
    /// Any other error reported by wgpu (validation, mapping, polling).
    #[error("wgpu error in {what}: {msg}")]
    Gpu { what: String, msg: String },
}

impl WgpuError {
    pub(crate) fn gpu(what: &str, msg: impl std::fmt::Display) -> Self {
        WgpuError::Gpu {
            what: what.to_string(),
            msg: msg.to_string(),
        }
    }
}

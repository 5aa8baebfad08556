//! Choosing a backend by name, and reporting which ones this machine has.

use std::sync::Arc;

use super::{Backend, CpuBackend, CudaBackend, WgpuBackend};
use crate::error::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    Cpu,
    Cuda,
    Wgpu,
    /// The fastest available: cuda, then wgpu, then cpu.
    Auto,
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
            BackendKind::Wgpu => "wgpu",
            BackendKind::Auto => "auto",
        })
    }
}

/// Opens a backend; `Auto` never fails (the CPU is always there).
pub fn open_backend(kind: BackendKind) -> Result<Arc<dyn Backend>> {
    Ok(match kind {
        BackendKind::Cpu => Arc::new(CpuBackend),
        BackendKind::Cuda => Arc::new(CudaBackend::open()?),
        BackendKind::Wgpu => Arc::new(WgpuBackend::open()?),
        BackendKind::Auto => {
            if let Ok(b) = CudaBackend::open() {
                Arc::new(b)
            } else if let Ok(b) = WgpuBackend::open() {
                Arc::new(b)
            } else {
                Arc::new(CpuBackend)
            }
        }
    })
}

/// One line of `crossgroth devices`.
pub struct BackendReport {
    pub name: &'static str,
    /// The device, or why the backend is unavailable here.
    pub status: std::result::Result<String, String>,
}

pub fn available_backends() -> Vec<BackendReport> {
    [BackendKind::Cpu, BackendKind::Cuda, BackendKind::Wgpu]
        .into_iter()
        .map(|kind| BackendReport {
            name: match kind {
                BackendKind::Cpu => "cpu",
                BackendKind::Cuda => "cuda",
                _ => "wgpu",
            },
            status: open_backend(kind)
                .map(|b| b.device())
                .map_err(|e| e.to_string()),
        })
        .collect()
}

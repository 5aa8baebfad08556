//! Choosing a backend by name, and reporting which ones this machine has.

use std::sync::Arc;

use super::{Backend, CpuBackend, CudaBackend, WgpuBackend};
use crate::error::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    Cpu,
    Cuda,
    Wgpu,
    /// The fastest available: cuda, then wgpu on a hardware adapter, then cpu.
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
            } else {
                match WgpuBackend::open() {
                    Ok(b) if !b.is_software() => Arc::new(b),
                    _ => Arc::new(CpuBackend),
                }
            }
        }
    })
}

/// Every device of a backend kind, or the listed ordinals: one backend each, for an
/// engine with one device worker per device. For wgpu, the devices are the adapters
/// in `crossgroth devices` order. `Auto` takes every CUDA device if there is one,
/// else the single best other backend.
pub fn open_backends(
    kind: BackendKind,
    devices: Option<&[usize]>,
) -> Result<Vec<Arc<dyn Backend>>> {
    let cuda_all = || -> Result<Vec<usize>> { super::gpu::cuda::ordinals() };
    let open_cuda = |ordinals: Vec<usize>| -> Result<Vec<Arc<dyn Backend>>> {
        ordinals
            .into_iter()
            .map(|o| CudaBackend::open_device(o).map(|b| Arc::new(b) as Arc<dyn Backend>))
            .collect()
    };
    match (kind, devices) {
        (BackendKind::Cuda, Some(list)) => open_cuda(list.to_vec()),
        (BackendKind::Cuda, None) => open_cuda(cuda_all()?),
        (BackendKind::Auto, list) => match cuda_all() {
            Ok(all) if !all.is_empty() => open_cuda(list.map(|l| l.to_vec()).unwrap_or(all)),
            _ => Ok(vec![open_backend(BackendKind::Auto)?]),
        },
        (BackendKind::Wgpu, list) => {
            let indices: Vec<usize> = match list {
                Some(l) => l.to_vec(),
                None => (0..crossgroth_wgpu::probe()
                    .map_err(super::gpu::err::<crossgroth_wgpu::WgpuBackend>)?
                    .len())
                    .collect(),
            };
            indices
                .into_iter()
                .map(|i| {
                    WgpuBackend::open_with(super::WgpuOptions {
                        adapter: Some(i),
                        ..Default::default()
                    })
                    .map(|b| Arc::new(b) as Arc<dyn Backend>)
                })
                .collect()
        }
        (BackendKind::Cpu, Some(list)) if list != [0] => Err(crate::Error::Invalid(format!(
            "the cpu backend has one device (0); --devices {list:?} names others"
        ))),
        (other, _) => Ok(vec![open_backend(other)?]),
    }
}

/// One line of `crossgroth devices`.
pub struct BackendReport {
    pub name: &'static str,
    /// The device, or why the backend is unavailable here.
    pub status: std::result::Result<String, String>,
}

/// Every backend and device of this machine (each CUDA device on its own line), or
/// why a backend is unavailable.
pub fn available_backends() -> Vec<BackendReport> {
    let mut out = vec![BackendReport {
        name: "cpu",
        status: Ok(CpuBackend.device()),
    }];
    match open_backends(BackendKind::Cuda, None) {
        Ok(devices) if !devices.is_empty() => out.extend(devices.iter().map(|b| BackendReport {
            name: "cuda",
            status: Ok(b.device()),
        })),
        Ok(_) => out.push(BackendReport {
            name: "cuda",
            status: Err("no CUDA device found".into()),
        }),
        Err(e) => out.push(BackendReport {
            name: "cuda",
            status: Err(e.to_string()),
        }),
    }
    match crossgroth_wgpu::probe() {
        Ok(adapters) => out.extend(adapters.iter().enumerate().map(|(i, a)| BackendReport {
            name: "wgpu",
            status: Ok(format!(
                "wgpu:{i} {} ({}, {}{})",
                a.name,
                a.backend,
                a.device_type,
                if a.shader_int64 { ", SHADER_INT64" } else { "" }
            )),
        })),
        Err(e) => out.push(BackendReport {
            name: "wgpu",
            status: Err(super::gpu::err::<crossgroth_wgpu::WgpuBackend>(e).to_string()),
        }),
    }
    out
}

//! Choosing a backend by name, and reporting which ones this machine has.

use std::sync::Arc;

use super::{Backend, CpuBackend, CudaBackend, CudaOptions, WgpuBackend, WgpuOptions};
use crate::error::Result;

/// Options of every backend kind, for opening backends by kind.
#[derive(Clone, Debug, Default)]
pub struct BackendOptions {
    pub cuda: CudaOptions,
    pub wgpu: WgpuOptions,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

impl std::str::FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "cpu" => Ok(BackendKind::Cpu),
            "cuda" => Ok(BackendKind::Cuda),
            "wgpu" => Ok(BackendKind::Wgpu),
            "auto" => Ok(BackendKind::Auto),
            other => Err(format!(
                "unknown backend `{}` (cpu, cuda, wgpu or auto)",
                other.chars().take(32).collect::<String>()
            )),
        }
    }
}

/// Opens a backend with default options; `Auto` never fails (the CPU is
/// always there).
pub fn open_backend(kind: BackendKind) -> Result<Arc<dyn Backend>> {
    open_backend_with(kind, &BackendOptions::default())
}

/// Opens a backend with `options`.
pub fn open_backend_with(kind: BackendKind, options: &BackendOptions) -> Result<Arc<dyn Backend>> {
    Ok(match kind {
        BackendKind::Cpu => Arc::new(CpuBackend),
        BackendKind::Cuda => Arc::new(CudaBackend::open_device(0, options.cuda.clone())?),
        BackendKind::Wgpu => Arc::new(WgpuBackend::open_with(options.wgpu.clone())?),
        BackendKind::Auto => {
            if let Ok(b) = CudaBackend::open_device(0, options.cuda.clone()) {
                Arc::new(b)
            } else {
                match WgpuBackend::open_with(options.wgpu.clone()) {
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
    options: &BackendOptions,
) -> Result<Vec<Arc<dyn Backend>>> {
    let cuda_all = || -> Result<Vec<usize>> { super::gpu::cuda::ordinals() };
    let open_cuda = |ordinals: Vec<usize>| -> Result<Vec<Arc<dyn Backend>>> {
        ordinals
            .into_iter()
            .map(|o| {
                CudaBackend::open_device(o, options.cuda.clone())
                    .map(|b| Arc::new(b) as Arc<dyn Backend>)
            })
            .collect()
    };
    match (kind, devices) {
        (BackendKind::Cuda, Some(list)) => open_cuda(list.to_vec()),
        (BackendKind::Cuda, None) => open_cuda(cuda_all()?),
        (BackendKind::Auto, list) => match cuda_all() {
            Ok(all) if !all.is_empty() => open_cuda(list.map(|l| l.to_vec()).unwrap_or(all)),
            _ => Ok(vec![open_backend_with(BackendKind::Auto, options)?]),
        },
        (BackendKind::Wgpu, list) => {
            let indices: Vec<usize> = match list {
                Some(l) => l.to_vec(),
                None => (0..crossgroth_wgpu::probe()
                    .map_err(super::gpu::err::<crossgroth_wgpu::WgpuDevice>)?
                    .len())
                    .collect(),
            };
            indices
                .into_iter()
                .map(|i| {
                    WgpuBackend::open_with(WgpuOptions {
                        adapter: Some(crossgroth_wgpu::AdapterChoice::Index(i)),
                        ..options.wgpu.clone()
                    })
                    .map(|b| Arc::new(b) as Arc<dyn Backend>)
                })
                .collect()
        }
        (BackendKind::Cpu, Some(list)) if list != [0] => Err(crate::Error::Invalid(format!(
            "the cpu backend has one device (0); --devices {list:?} names others"
        ))),
        (other, _) => Ok(vec![open_backend_with(other, options)?]),
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
pub fn available_backends(options: &BackendOptions) -> Vec<BackendReport> {
    let mut out = vec![BackendReport {
        name: "cpu",
        status: Ok(CpuBackend.device()),
    }];
    match open_backends(BackendKind::Cuda, None, options) {
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
            status: Err(super::gpu::err::<crossgroth_wgpu::WgpuDevice>(e).to_string()),
        }),
    }
    out
}

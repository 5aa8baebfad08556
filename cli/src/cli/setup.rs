//! `crossgroth setup`: random (insecure) parameters for a built-in circuit, the
//! fixed-base products on the CPU or a CUDA device, written whole or not at all.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use std::sync::Arc;

use crossgroth::backend::{open_backend_with, Backend, BackendKind};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{self, Parameters};
use rand_core::{OsRng, SeedableRng};

use super::output::Output;
use super::progress::Stage;
use super::{backend_flags, memory, output};

/// Random parameters for `circuit`, their fixed-base products on `device`
/// where it has kernels for them, else on the host's cores.
pub(super) fn generate(
    circuit: CircuitSpec,
    seed: Option<u64>,
    device: Option<Arc<dyn Backend>>,
) -> Result<Parameters> {
    let device = device.filter(|b| b.has_setup_kernels());
    let on = device.as_ref().map_or("cpu", |b| b.name());
    let stage = Stage::start(&format!("generating parameters for {circuit} on {on}"));
    let report = |what: &str, done: usize, total: usize| stage.step(what, done, total);
    let options = groth16::SetupOptions {
        device,
        progress: Some(&report),
    };
    let params = match seed {
        Some(s) => groth16::generate_random_parameters_with(
            circuit.blank(),
            &mut rand_chacha::ChaCha20Rng::seed_from_u64(s),
            &options,
        ),
        None => groth16::generate_random_parameters_with(circuit.blank(), &mut OsRng, &options),
    }?;
    let secs = stage.finish();
    eprintln!("parameters for {circuit} generated on {on} in {secs:.1} s");
    Ok(params)
}

/// Where `setup --backend` runs the fixed-base products (None: the host's cores).
pub(super) fn setup_device(kind: BackendKind) -> Result<Option<Arc<dyn Backend>>> {
    if kind == BackendKind::Cpu {
        return Ok(None);
    }
    let backend = open_backend_with(kind, backend_flags::backend_options())?;
    if !backend.has_setup_kernels() {
        bail!(
            "setup --backend {kind}: {} has no setup kernels; parameters are generated on cpu, cuda or wgpu",
            backend.name()
        );
    }
    Ok(Some(backend))
}

/// Refuses a circuit whose parameters would not fit in memory.
pub(super) fn check_setup_memory(command: &str, circuit: &CircuitSpec) -> Result<()> {
    let (bytes, basis) = memory::setup_bytes(circuit);
    memory::ensure_fits(command, bytes, 0, &format!("{circuit}: {basis}"))
}

pub(super) fn setup(
    circuit: CircuitSpec,
    path: PathBuf,
    vk: Option<PathBuf>,
    seed: Option<u64>,
    backend: BackendKind,
) -> Result<()> {
    let params_out = Output::check(&path, "--params")?;
    let vk_out = vk
        .as_deref()
        .map(|p| Output::check(p, "--vk"))
        .transpose()?;
    let mut outs = vec![("--params", &params_out)];
    outs.extend(vk_out.as_ref().map(|o| ("--vk", o)));
    output::check_distinct(&outs, &[])?;
    check_setup_memory(&format!("setup --circuit {circuit}"), &circuit)?;
    eprintln!("warning: `setup` makes INSECURE random parameters, for development and tests only");
    let device = setup_device(backend)?;
    let t = Instant::now();
    let params = generate(circuit, seed, device)?;
    let stage = Stage::start(&format!("writing {}", path.display()));
    // Both files complete before either replaces an old one.
    let mut staged = vec![params_out.stage(|w| Ok(params.write(w)?))?];
    if let Some(o) = &vk_out {
        staged.push(o.stage(|w| Ok(params.vk.write(w)?))?);
    }
    output::commit(staged)?;
    stage.finish();
    println!(
        "wrote parameters for {circuit} to {}{} ({} h, {} l, {} a, {} b points) in {:.1} s",
        path.display(),
        vk_out
            .as_ref()
            .map(|o| format!(" and its verifying key to {}", o.path().display()))
            .unwrap_or_default(),
        params.h.len(),
        params.l.len(),
        params.a.len(),
        params.b_g1.len(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

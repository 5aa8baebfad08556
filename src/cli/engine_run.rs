//! `crossgroth bench-engine` (and `prove --count N`): many proofs of a built-in
//! circuit through the engine, with progress, then throughput, per-stage p50/p99,
//! peak resident memory, and optionally a JSON summary and an SVG plot.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use crossgroth::backend::simulated::SimulatedDevice;
use crossgroth::backend::{open_backends, Backend, BackendKind};
use crossgroth::circuits::CircuitSpec;
use crossgroth::engine::{Engine, EngineConfig, Job, RunSummary};
use crossgroth::groth16::Parameters;
use crossgroth::synthesis::RecordedShape;
use indicatif::{ProgressBar, ProgressStyle};

pub struct EngineArgs {
    pub circuit: CircuitSpec,
    pub params: Option<PathBuf>,
    pub count: usize,
    pub batch: usize,
    pub backend: BackendKind,
    pub devices: Option<Vec<usize>>,
    pub simulate_device_ms: Option<u64>,
    pub synthesis_workers: Option<usize>,
    pub memory_budget: Option<bytesize::ByteSize>,
    pub recorded: bool,
    pub json: Option<PathBuf>,
    pub plot: Option<PathBuf>,
}

pub fn run(args: EngineArgs) -> Result<()> {
    if args.count == 0 || args.batch == 0 {
        bail!("--count and --batch must be at least 1");
    }
    let params = Arc::new(match &args.params {
        Some(p) => Parameters::read_file(p, true)?,
        None => super::generate(args.circuit, None)?,
    });
    let backends: Vec<Arc<dyn Backend>> = match args.simulate_device_ms {
        Some(ms) => (0..args.devices.as_ref().map_or(1, |d| d.len()))
            .map(|id| {
                SimulatedDevice::new(Duration::from_millis(ms))
                    .with_id(id)
                    .shared()
            })
            .collect(),
        None => open_backends(
            args.backend,
            args.devices.as_deref(),
            super::backend_flags::backend_options(),
        )?,
    };
    let mut config = EngineConfig {
        placement: super::backend_flags::placement(),
        ..EngineConfig::default()
    };
    if let Some(w) = args.synthesis_workers {
        config.synthesis_workers = w;
    }
    if let Some(b) = args.memory_budget {
        config.memory_budget = b.as_u64() as usize;
    }
    // B_G2 may run on a device from a finalizer: one finalizer per device.
    config.finalizer_workers = backends.len();
    let names: Vec<String> = backends.iter().map(|b| b.device()).collect();
    println!(
        "engine: {} × {} on {} ({}), {} synthesis workers, memory budget {}",
        args.count,
        args.circuit,
        backends[0].name(),
        names.join("; "),
        config.synthesis_workers,
        bytesize::ByteSize(config.memory_budget as u64)
    );
    let shape = if args.recorded {
        Some(Arc::new(RecordedShape::record(args.circuit.blank())?.0))
    } else {
        None
    };
    let engine = Engine::start(config, backends)?;
    let bar = ProgressBar::new(args.count as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} proofs [{elapsed}] {msg}").unwrap(),
    );
    let mut handles = vec![];
    let mut submitted = 0;
    while submitted < args.count {
        let n = args.batch.min(args.count - submitted);
        // A simulated device replays results per distinct witness: cycle a few.
        let seed = |i: usize| if args.simulate_device_ms.is_some() { i % 4 } else { i } as u64;
        let circuits: Vec<_> = (submitted..submitted + n)
            .map(|i| args.circuit.instance(seed(i)))
            .collect();
        let id = format!("job-{submitted}");
        let job = match &shape {
            Some(shape) => Job::recorded(id, params.clone(), shape.clone(), circuits),
            None => Job::new(id, params.clone(), circuits),
        };
        handles.push((n, engine.submit(job)?));
        submitted += n;
    }
    let mut failures = vec![];
    for (n, h) in handles {
        let id = h.id().to_string();
        match h.wait() {
            Ok(_) => bar.inc(n as u64),
            Err(e) => failures.push(format!("{id}: {e}")),
        }
        let st = engine.status();
        bar.set_message(format!(
            "resident {}, charged {}",
            bytesize::ByteSize(st.memory.resident as u64),
            bytesize::ByteSize(st.memory.charged as u64)
        ));
    }
    bar.finish_and_clear();
    let summary = engine.shutdown();
    print_summary(&summary);
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&summary)?)?;
        println!("summary written to {}", path.display());
    }
    if let Some(path) = &args.plot {
        super::plot::write_svg(&summary, path)?;
        println!("plot written to {}", path.display());
    }
    if let Some(first) = failures.first() {
        bail!("{} of the jobs failed; first: {first}", failures.len());
    }
    Ok(())
}

fn print_summary(s: &RunSummary) {
    println!(
        "{} proofs in {:.2} s: {:.2} proofs/s ({:.2} proofs/s steady, after the first); peak resident memory {} (budget {})",
        s.proofs,
        s.wall_s,
        s.proofs_per_s,
        s.steady_proofs_per_s,
        bytesize::ByteSize(s.peak_resident_bytes as u64),
        bytesize::ByteSize(s.memory_budget_bytes as u64)
    );
    println!(
        "{:16} {:>7} {:>10} {:>10} {:>10}",
        "stage", "count", "p50 ms", "p99 ms", "total s"
    );
    for (name, st) in &s.stages {
        println!(
            "{:16} {:>7} {:>10.2} {:>10.2} {:>10.2}",
            name, st.count, st.p50_ms, st.p99_ms, st.total_s
        );
    }
    for d in &s.devices {
        println!(
            "device {} ({}): busy {:.2} s of {:.2} s ({:.0}%, {}), {} circuits",
            d.backend,
            d.device,
            d.busy_s,
            s.wall_s,
            100.0 * d.busy_s / s.wall_s.max(1e-9),
            d.busy_measured_by,
            d.units
        );
    }
    println!("summary: {}", serde_json::to_string(s).unwrap_or_default());
}

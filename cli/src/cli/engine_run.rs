//! `crossgroth bench-engine` (and `prove --count N`): many proofs of a built-in
//! circuit through the engine, with progress, then throughput, per-stage p50/p99,
//! peak resident memory, and optionally a JSON summary and an SVG plot.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use crossgroth::backend::simulated::SimulatedDevice;
use crossgroth::backend::{open_backends, Backend, BackendKind};
use crossgroth::circuits::CircuitSpec;
use crossgroth::engine::{Engine, EngineConfig, Job, RunSummary};
use crossgroth::error::Error;
use crossgroth::synthesis::{self, check_witness, RecordedShape, Shape};

use super::fault::{self, CliCircuit};
use super::output::{self, Output};
use super::progress::Counter;

pub struct EngineArgs {
    pub circuit: CircuitSpec,
    pub params: Option<PathBuf>,
    pub trust_params: bool,
    /// Witness seed of the first proof; the others take the next ones.
    pub first_seed: u64,
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

/// The parameters' lengths as a circuit shape needs them.
pub fn shape_of(rec: &RecordedShape) -> Shape {
    Shape {
        num_rows: rec.num_rows(),
        num_inputs: rec.num_inputs(),
        num_aux: rec.num_aux(),
        a_aux_density: rec.a_aux_density().clone(),
        b_input_density: rec.b_input_density().clone(),
        b_aux_density: rec.b_aux_density().clone(),
    }
}

pub fn run(args: EngineArgs) -> Result<()> {
    if args.count == 0 || args.batch == 0 {
        bail!("--count and --batch must be at least 1");
    }
    let started = Instant::now();
    // Outputs, memory and devices first: nothing long runs before they are known good.
    let json = args
        .json
        .as_deref()
        .map(|p| Output::check(p, "--json"))
        .transpose()?;
    let plot = args
        .plot
        .as_deref()
        .map(|p| Output::check(p, "--plot"))
        .transpose()?;
    let mut outs = vec![];
    outs.extend(json.as_ref().map(|o| ("--json", o)));
    outs.extend(plot.as_ref().map(|o| ("--plot", o)));
    let inputs: Vec<(&str, &std::path::Path)> = args
        .params
        .as_deref()
        .map(|p| ("--params", p))
        .into_iter()
        .collect();
    output::check_distinct(&outs, &inputs)?;
    let command = format!("proving {} × {}", args.count, args.circuit);
    match &args.params {
        Some(p) => super::prove::check_prove_memory(&command, p, &args.circuit)?,
        None => super::setup::check_setup_memory(&command, &args.circuit)?,
    }
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
    // The parameters' lengths against the circuit's shape, before the long read
    // (the engine would otherwise fail deep inside an MSM).
    let seed = |i: usize| {
        // A simulated device replays results per distinct witness: cycle a few.
        let i = if args.simulate_device_ms.is_some() {
            i % 4
        } else {
            i
        };
        args.first_seed + i as u64
    };
    let recorded = if args.recorded {
        Some(Arc::new(
            RecordedShape::record(fault::instance(&args.circuit, seed(0)))?.0,
        ))
    } else {
        None
    };
    if let Some(p) = &args.params {
        let lengths = super::params::lengths(p)?;
        let shape = match &recorded {
            Some(r) => shape_of(r),
            None => synthesis::synthesize(fault::instance(&args.circuit, seed(0)))?.shape(),
        };
        lengths
            .check_shape(&shape)
            .with_context(|| p.display().to_string())?;
    }
    let (params, load_line) = match &args.params {
        Some(p) => {
            let (params, loaded) = super::params::load(p, args.trust_params)?;
            (params, Some(loaded.summary()))
        }
        None => (
            super::setup::generate(args.circuit, None, Some(backends[0].clone()))?,
            None,
        ),
    };
    let params = Arc::new(params);
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
        "engine: {} × {} on {} ({}), {} synthesis workers, memory budget {}{}",
        args.count,
        args.circuit,
        backends[0].name(),
        names.join("; "),
        config.synthesis_workers,
        bytesize::ByteSize(config.memory_budget as u64),
        load_line.map(|l| format!("; {l}")).unwrap_or_default()
    );
    let engine = Engine::start(config, backends)?;
    let mut progress = Counter::new(args.count as u64, "proofs");
    let mut handles = vec![];
    let mut submitted = 0;
    while submitted < args.count {
        let n = args.batch.min(args.count - submitted);
        let seeds: Vec<u64> = (submitted..submitted + n).map(seed).collect();
        let circuits: Vec<CliCircuit> = seeds
            .iter()
            .map(|&s| fault::instance(&args.circuit, s))
            .collect();
        let id = format!("job-{submitted}");
        let job = match &recorded {
            Some(shape) => Job::recorded(id, params.clone(), shape.clone(), circuits),
            None => Job::new(id, params.clone(), circuits),
        };
        handles.push((n, seeds, engine.submit(job)?));
        submitted += n;
    }
    let mut failures = vec![];
    for (n, seeds, h) in handles {
        let id = h.id().to_string();
        match h.wait() {
            Ok(_) => {}
            Err(e) => {
                let e = name_failure(e, &args.circuit, &seeds, recorded.as_deref());
                failures.push(format!("{id}: {e}"));
            }
        }
        let st = engine.status();
        progress.inc(n as u64, || {
            format!(
                "resident {}, charged {}",
                bytesize::ByteSize(st.memory.resident as u64),
                bytesize::ByteSize(st.memory.charged as u64)
            )
        });
    }
    progress.finish();
    let summary = engine.shutdown();
    print_summary(&summary);
    if let Some(out) = &json {
        let text = serde_json::to_string_pretty(&summary)?;
        out.write_bytes(text.as_bytes())?;
        println!("summary written to {}", out.path().display());
    }
    if let Some(out) = &plot {
        super::plot::write_svg(&summary, out)?;
        println!("plot written to {}", out.path().display());
    }
    println!("{:.1} s in all", started.elapsed().as_secs_f64());
    if let Some(first) = failures.first() {
        bail!("{} of the jobs failed; first: {first}", failures.len());
    }
    Ok(())
}

/// Names an unsatisfied row's namespace path (the engine reports only its number):
/// from the recorded shape, or by synthesizing the job's circuits again with names.
fn name_failure(
    e: Error,
    circuit: &CircuitSpec,
    seeds: &[u64],
    recorded: Option<&RecordedShape>,
) -> Error {
    let Error::Unsatisfied {
        row,
        path: None,
        circuit: place,
    } = e
    else {
        return e;
    };
    if let Some(name) = recorded.and_then(|r| r.row_name(row)) {
        return Error::Unsatisfied {
            row,
            path: Some(name).filter(|p| !p.is_empty()),
            circuit: place,
        };
    }
    for &s in seeds {
        if let Ok((asg, names)) = synthesis::synthesize_with_names(fault::instance(circuit, s)) {
            if check_witness(&asg) == Some(row) {
                return Error::Unsatisfied {
                    row,
                    path: names.get(row).cloned().filter(|p| !p.is_empty()),
                    circuit: place,
                };
            }
        }
    }
    Error::Unsatisfied {
        row,
        path: None,
        circuit: place,
    }
}

pub(super) fn print_summary(s: &RunSummary) {
    println!(
        "{} proofs in {:.2} s: {:.2} proofs/s ({:.2} proofs/s steady, after the first); peak resident memory {} (budget {})",
        s.proofs,
        s.wall_s,
        s.proofs_per_s,
        s.steady_proofs_per_s,
        bytesize::ByteSize(s.peak_resident_bytes as u64),
        bytesize::ByteSize(s.memory_budget_bytes as u64)
    );
    if let Some(u) = &s.budget_use_while_waiting {
        println!(
            "while circuits waited for memory ({:.1} s): resident p50 {:.0}% of the budget, committed p50 {:.0}%",
            u.waiting_s,
            100.0 * u.resident_p50,
            100.0 * u.committed_p50
        );
    }
    if let Some(m) = &s.memory_at_peak {
        let b = |n: usize| bytesize::ByteSize(n as u64);
        println!(
            "at the peak: baseline {}, parameter sets and shapes {}, {} circuits charged {} \
             (of which {} not yet written), device reserve {}, loads {}; unexplained by any \
             charge {}",
            b(m.baseline),
            b(m.sets),
            m.units_in_flight,
            b(m.charged),
            b(m.pending),
            b(m.device_reserve),
            b(m.loading),
            b(m.unexplained())
        );
    }
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

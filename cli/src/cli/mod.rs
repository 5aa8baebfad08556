//! Subcommands of the `crossgroth` binary.
//!
//! What a careful user can count on: every output location is checked, and the
//! backend opened, before any long work; every file is written whole or not at all
//! (`output`); parameters are read with progress, only as far as the command needs,
//! and a file whose points passed the subgroup checks once is not checked again
//! (`params`); a command that cannot fit in memory is refused up front (`memory`);
//! each error is one line that says each cause once.

mod backend_flags;
mod bench_porep;
mod client;
mod crosscheck;
mod engine_run;
mod fault;
mod filecoin;
mod files;
mod memory;
mod output;
mod params;
mod plot;
mod progress;
mod serve;
mod signals;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::parser::ValueSource;
use clap::{ArgGroup, ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use crossgroth::backend::{available_backends, open_backend_with, BackendKind};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{self, Parameters, Proof, ProveOptions, Prover};
use crossgroth::synthesis;
use crossgroth::Error;
use rand_core::{OsRng, SeedableRng};

use files::PublicInputsFile;
use output::Output;
use progress::Stage;

pub use signals::install as install_signal_handlers;

#[derive(Parser)]
#[command(
    name = "crossgroth",
    version,
    about = "Groth16 prover for BLS12-381: CPU, CUDA and WGSL/wgpu backends, bellperson-identical proofs"
)]
struct Cli {
    #[command(flatten)]
    backend: backend_flags::BackendFlags,
    #[command(subcommand)]
    command: Command,
}

const CIRCUITS: &str = "Built-in circuit: cubic, sha256:<bytes>, chain:<log2 rows>, multi:<inputs>";

#[derive(Subcommand)]
enum Command {
    /// Write random parameters for a built-in circuit. INSECURE: for development and
    /// tests only; production parameters come from a trusted-setup ceremony.
    Setup {
        /// Built-in circuit: cubic, sha256:<bytes>, chain:<log2 rows>, multi:<inputs>.
        #[arg(long)]
        circuit: CircuitSpec,
        /// Where to write the parameters (bellperson's format); an existing file is
        /// replaced only once the new one is complete.
        #[arg(long)]
        params: PathBuf,
        /// Also write the verifying key alone here.
        #[arg(long)]
        vk: Option<PathBuf>,
        /// Derive the toxic waste from this seed (reproducible, and even less secure).
        #[arg(long)]
        seed: Option<u64>,
        /// Where the fixed-base products run: cpu or cuda (the same bytes either way).
        #[arg(long, default_value = "cpu")]
        backend: BackendKind,
    },
    /// Prove a built-in circuit; write the proof and its public inputs.
    Prove {
        #[arg(long, help = CIRCUITS)]
        circuit: CircuitSpec,
        /// Parameters of that circuit (bellperson's format), as `setup` writes them.
        #[arg(long)]
        params: PathBuf,
        /// Where to write the 192-byte proof.
        #[arg(long, required_unless_present = "count", conflicts_with = "count")]
        proof: Option<PathBuf>,
        /// Where to write the public inputs (JSON); default: <proof>.inputs.json.
        #[arg(long, conflicts_with = "count")]
        inputs: Option<PathBuf>,
        /// Backend to prove on: cpu, cuda, wgpu or auto.
        #[arg(long, default_value_t = BackendKind::Auto)]
        backend: BackendKind,
        /// Draw r and s from this seed instead of the OS's CSPRNG (reproducible bytes;
        /// such a proof is labelled seeded and is not zero-knowledge in practice).
        #[arg(long, conflicts_with = "count")]
        seed: Option<u64>,
        /// Seed of the circuit's witness values (with --count: of the first proof;
        /// the others take the next seeds).
        #[arg(long, default_value_t = 0)]
        witness_seed: u64,
        /// Skip the a·b = c check of every row before proving.
        #[arg(long, conflicts_with = "count")]
        no_witness_check: bool,
        /// Skip the subgroup checks when reading parameters (on-curve checks remain).
        #[arg(long)]
        trust_params: bool,
        /// Prove this many instances through the proving engine instead, reporting
        /// throughput and stage timings; writes no proof file.
        #[arg(long)]
        count: Option<usize>,
        #[command(flatten)]
        engine: EngineOptions,
    },
    /// Verify a proof against a verifying key (from --params or --vk).
    #[command(group(ArgGroup::new("key").required(true).args(["params", "vk"])))]
    Verify {
        /// Parameter file whose verifying key to use (only the key at its head is read).
        #[arg(long)]
        params: Option<PathBuf>,
        /// Verifying key file, as `setup --vk` writes it.
        #[arg(long)]
        vk: Option<PathBuf>,
        /// The 192-byte proof to verify.
        #[arg(long)]
        proof: PathBuf,
        /// Public inputs (JSON, as `prove` writes them); default: <proof>.inputs.json.
        #[arg(long)]
        inputs: Option<PathBuf>,
    },
    /// Run the same inputs through every available backend and compare each
    /// operation and the final proof bytes with the cpu backend.
    Crosscheck {
        #[arg(long, default_value = "sha256:64", help = CIRCUITS)]
        circuit: CircuitSpec,
        /// Parameters to use; generated in memory when absent.
        #[arg(long)]
        params: Option<PathBuf>,
        /// Seed of the witness, of r and s, of the compared operations' inputs and
        /// (without --params) of the generated parameters.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Run many proofs of a built-in circuit through the proving engine and report
    /// throughput, per-stage p50/p99 and peak resident memory.
    BenchEngine {
        #[arg(long, default_value = "sha256:64", help = CIRCUITS)]
        circuit: CircuitSpec,
        /// Parameters to use; generated in memory (insecure) when absent.
        #[arg(long)]
        params: Option<PathBuf>,
        /// Number of proofs (witness seeds 0..count).
        #[arg(long, default_value_t = 32)]
        count: usize,
        /// Backend to prove on.
        #[arg(long, default_value_t = BackendKind::Auto, conflicts_with = "simulate_device_ms")]
        backend: BackendKind,
        /// Skip the subgroup checks when reading --params (on-curve checks remain).
        #[arg(long, requires = "params")]
        trust_params: bool,
        #[command(flatten)]
        engine: EngineOptions,
    },
    /// List the backends and devices of this machine, and why any is unavailable.
    Devices,
    /// Filecoin proofs from the inputs Curio sends (PoRep C2, WinningPoSt, WindowPoSt,
    /// SnapDeals), verified by filecoin-proofs before they are written.
    Filecoin {
        #[command(subcommand)]
        command: filecoin::FilecoinCommand,
    },
    /// Serve Curio's proving-daemon API (cuzk.v1 gRPC): a drop-in for cuzk.
    Serve(serve::ServeArgs),
    /// Talk to a running daemon: prove, status, cancel, metrics.
    Client(client::ClientArgs),
    /// Setup, prove and verify a small SHA-256 circuit on the best backend here.
    Demo {
        #[arg(long, default_value = "sha256:64", help = CIRCUITS)]
        circuit: CircuitSpec,
        /// Backend to prove on: cpu, cuda, wgpu or auto.
        #[arg(long, default_value_t = BackendKind::Auto)]
        backend: BackendKind,
    },
}

/// Options of runs through the proving engine.
#[derive(clap::Args)]
struct EngineOptions {
    /// Circuits per job (a batch of one shape).
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Devices to prove on, e.g. 0,2 (default: every device of the backend).
    #[arg(long, value_delimiter = ',')]
    devices: Option<Vec<usize>>,
    /// Circuits synthesized at once (default: the number of cores).
    #[arg(long)]
    synthesis_workers: Option<usize>,
    /// Upper bound for resident memory, e.g. 8GiB (default: 80% of available memory).
    #[arg(long)]
    memory_budget: Option<bytesize::ByteSize>,
    /// Synthesize from a recorded shape (witness pass only).
    #[arg(long)]
    recorded: bool,
    /// Replace the backend by a simulated device holding each proof's critical path
    /// for this many milliseconds (to study the pipeline without a GPU).
    #[arg(long)]
    simulate_device_ms: Option<u64>,
    /// Write the JSON summary here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write an SVG of resident memory and stage activity over time here.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// The engine options' ids, for refusing them where they would do nothing.
const ENGINE_ARGS: [&str; 8] = [
    "batch",
    "devices",
    "synthesis_workers",
    "memory_budget",
    "recorded",
    "simulate_device_ms",
    "json",
    "plot",
];

struct EngineSource {
    params: Option<PathBuf>,
    trust_params: bool,
    first_seed: u64,
}

impl EngineOptions {
    fn into_args(
        self,
        circuit: CircuitSpec,
        source: EngineSource,
        count: usize,
        backend: BackendKind,
    ) -> engine_run::EngineArgs {
        engine_run::EngineArgs {
            circuit,
            params: source.params,
            trust_params: source.trust_params,
            first_seed: source.first_seed,
            count,
            batch: self.batch,
            backend,
            devices: self.devices,
            simulate_device_ms: self.simulate_device_ms,
            synthesis_workers: self.synthesis_workers,
            memory_budget: self.memory_budget,
            recorded: self.recorded,
            json: self.json,
            plot: self.plot,
        }
    }
}

/// Parses the command line; a usage error is printed (bounded) and ends the
/// process with status 2.
fn parse() -> (Cli, ArgMatches) {
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            let text = e.render().to_string();
            for line in text.lines() {
                eprintln!("{}", crate::bound_line(line));
            }
            std::process::exit(2);
        }
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    (cli, matches)
}

/// A usage error found after parsing: clap's format, status 2.
fn usage_error(subcommand: &str, message: String) -> ! {
    let mut cmd = Cli::command();
    let sub = cmd.find_subcommand_mut(subcommand).cloned();
    let mut cmd = sub.unwrap_or(cmd);
    cmd.error(clap::error::ErrorKind::ArgumentConflict, message)
        .exit()
}

fn given(m: &ArgMatches, id: &str) -> bool {
    matches!(m.value_source(id), Some(ValueSource::CommandLine))
}

pub fn run() -> Result<()> {
    let (cli, matches) = parse();
    backend_flags::choose(&cli.backend);
    fault::maybe_panic();
    match cli.command {
        Command::Setup {
            circuit,
            params,
            vk,
            seed,
            backend,
        } => setup(circuit, params, vk, seed, backend),
        Command::Prove {
            circuit,
            params,
            backend,
            count: Some(count),
            engine,
            trust_params,
            witness_seed,
            ..
        } => engine_run::run(engine.into_args(
            circuit,
            EngineSource {
                params: Some(params),
                trust_params,
                first_seed: witness_seed,
            },
            count,
            backend,
        )),
        Command::Prove {
            circuit,
            params,
            proof,
            inputs,
            backend,
            seed,
            witness_seed,
            no_witness_check,
            trust_params,
            count: None,
            ..
        } => {
            let sub = matches.subcommand_matches("prove").expect("prove");
            let ignored: Vec<String> = ENGINE_ARGS
                .iter()
                .filter(|id| given(sub, id))
                .map(|id| format!("--{}", id.replace('_', "-")))
                .collect();
            if !ignored.is_empty() {
                usage_error(
                    "prove",
                    format!(
                        "{} only apply to runs through the engine: add --count N, or leave {} out",
                        ignored.join(", "),
                        if ignored.len() == 1 { "it" } else { "them" }
                    ),
                );
            }
            let proof = proof.expect("clap requires --proof without --count");
            let inputs = inputs.unwrap_or_else(|| files::inputs_path(&proof));
            prove(ProveArgs {
                circuit,
                params,
                proof,
                inputs,
                backend,
                seed,
                witness_seed,
                check: !no_witness_check,
                trust_params,
            })
        }
        Command::Verify {
            params,
            vk,
            proof,
            inputs,
        } => {
            let inputs = inputs.unwrap_or_else(|| files::inputs_path(&proof));
            verify(params, vk, proof, inputs)
        }
        Command::Crosscheck {
            circuit,
            params,
            seed,
        } => crosscheck::run(circuit, params, seed),
        Command::BenchEngine {
            circuit,
            params,
            count,
            backend,
            trust_params,
            engine,
        } => engine_run::run(engine.into_args(
            circuit,
            EngineSource {
                params,
                trust_params,
                first_seed: 0,
            },
            count,
            backend,
        )),
        Command::Devices => devices(),
        Command::Filecoin { command } => filecoin::run(command),
        Command::Serve(args) => serve::run(args),
        Command::Client(args) => client::run(args),
        Command::Demo { circuit, backend } => demo(circuit, backend),
    }
}

/// Random parameters for `circuit`, their fixed-base products on `device`.
fn generate(
    circuit: CircuitSpec,
    seed: Option<u64>,
    device: groth16::SetupDevice,
) -> Result<Parameters> {
    let on = match device {
        groth16::SetupDevice::Cpu => "cpu",
        groth16::SetupDevice::Cuda(_) => "cuda",
    };
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

/// Where `setup --backend` runs the fixed-base products.
fn setup_device(kind: BackendKind) -> Result<groth16::SetupDevice> {
    match kind {
        BackendKind::Cpu => Ok(groth16::SetupDevice::Cpu),
        BackendKind::Cuda => {
            Ok(open_backend_with(kind, backend_flags::backend_options())?.setup_device())
        }
        other => bail!("setup --backend {other}: parameters are generated on cpu or cuda"),
    }
}

/// Refuses a circuit whose parameters would not fit in memory.
fn check_setup_memory(command: &str, circuit: &CircuitSpec) -> Result<()> {
    let (bytes, basis) = memory::setup_bytes(circuit);
    memory::ensure_fits(command, bytes, 0, &format!("{circuit}: {basis}"))
}

fn setup(
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

struct ProveArgs {
    circuit: CircuitSpec,
    params: PathBuf,
    proof: PathBuf,
    inputs: PathBuf,
    backend: BackendKind,
    seed: Option<u64>,
    witness_seed: u64,
    check: bool,
    trust_params: bool,
}

/// Refuses a prove run whose parameters and one proof's buffers would not fit.
fn check_prove_memory(command: &str, params: &Path, circuit: &CircuitSpec) -> Result<()> {
    let file = std::fs::metadata(params).map_or(0, |m| m.len());
    let (rows, vars, _) = memory::circuit_size(circuit);
    let domain = rows.max(1).next_power_of_two();
    memory::ensure_fits(
        command,
        memory::BASE + file + memory::proof_bytes(domain, vars),
        file,
        &format!(
            "{} of parameters and {circuit}'s {} rows",
            memory::size(file),
            memory::rows_text(rows)
        ),
    )
}

/// Names the namespace path of an unsatisfied row by synthesizing the circuit
/// again, this time tracking names (only once a row has failed: proving itself
/// never pays for names).
fn name_unsatisfied(e: Error, circuit: impl FnOnce() -> fault::CliCircuit) -> Error {
    match e {
        Error::Unsatisfied {
            row,
            path: None,
            circuit: place,
        } => {
            let path = synthesis::synthesize_with_names(circuit())
                .ok()
                .and_then(|(_, names)| names.get(row).cloned())
                .filter(|p| !p.is_empty());
            Error::Unsatisfied {
                row,
                path,
                circuit: place,
            }
        }
        e => e,
    }
}

fn prove(args: ProveArgs) -> Result<()> {
    let started = Instant::now();
    // Everything that can fail fast fails before the parameters are read.
    let proof_out = Output::check(&args.proof, "--proof")?;
    let inputs_out = Output::check(&args.inputs, "--inputs")?;
    output::check_distinct(
        &[("--proof", &proof_out), ("--inputs", &inputs_out)],
        &[("--params", &args.params)],
    )?;
    check_prove_memory(
        &format!("prove --circuit {}", args.circuit),
        &args.params,
        &args.circuit,
    )?;
    let backend = open_backend_with(args.backend, backend_flags::backend_options())?;
    // The parameters' lengths against the circuit: milliseconds, before the read.
    let lengths = params::lengths(&args.params)?;
    let circuit = fault::instance(&args.circuit, args.witness_seed);
    let public_inputs = circuit.public_inputs();
    let t = Instant::now();
    let asg = synthesis::synthesize(circuit)?;
    let synthesis_s = t.elapsed().as_secs_f64();
    lengths
        .check_shape(&asg.shape())
        .with_context(|| args.params.display().to_string())?;
    let (params, loaded) = params::load(&args.params, args.trust_params)?;
    let params = Arc::new(params);
    let prover = Prover::with_placement(backend, params.clone(), &backend_flags::placement())?
        .with_options(ProveOptions {
            check_witness: args.check,
        });
    let (r, s) = match args.seed {
        Some(seed) => {
            groth16::draw_randomness(1, &mut rand_chacha::ChaCha20Rng::seed_from_u64(seed))
        }
        None => groth16::draw_randomness(1, &mut OsRng),
    };
    let stage = Stage::start(&format!(
        "proving {} on {}",
        args.circuit,
        prover.backend().name()
    ));
    let t = Instant::now();
    let proof = prover
        .prove_assignments(vec![asg], &r, &s)
        .map(|mut p| p.remove(0))
        .map_err(|e| name_unsatisfied(e, || fault::instance(&args.circuit, args.witness_seed)))?;
    let prove_s = synthesis_s + t.elapsed().as_secs_f64();
    stage.finish();
    let inputs_file = PublicInputsFile::new(&args.circuit, &public_inputs, args.seed.is_some());
    output::commit(vec![
        proof_out.stage(|w| Ok(w.write_all(&proof.to_bytes())?))?,
        inputs_out.stage(|w| inputs_file.write_to(w))?,
    ])?;
    println!(
        "proved {} on {} in {:.3} s ({}; {:.1} s in all): proof {}, public inputs {}{}",
        args.circuit,
        prover.backend().name(),
        prove_s,
        loaded.summary(),
        started.elapsed().as_secs_f64(),
        args.proof.display(),
        args.inputs.display(),
        if args.seed.is_some() {
            " (seeded r, s: reproducible, not for production)"
        } else {
            ""
        }
    );
    Ok(())
}

fn verify(
    params: Option<PathBuf>,
    vk: Option<PathBuf>,
    proof: PathBuf,
    inputs: PathBuf,
) -> Result<()> {
    let (vk, key_path) = match (params, vk) {
        (_, Some(path)) => (params::load_vk_file(&path)?, path),
        (Some(path), None) => (params::load_vk(&path)?, path),
        (None, None) => bail!("give --params or --vk"),
    };
    let bytes = std::fs::read(&proof).map_err(|e| Error::io(&proof, e))?;
    let proof_value = Proof::from_bytes(&bytes).with_context(|| proof.display().to_string())?;
    let (public, circuit) = PublicInputsFile::read_with_circuit(&inputs)?;
    let expected = vk.ic.len() - 1;
    if public.len() != expected {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        bail!(
            "{} belongs to a circuit with {expected} public input{}, but {} holds {} ({}): \
             the key and the proof are of different circuits",
            key_path.display(),
            plural(expected),
            inputs.display(),
            public.len(),
            circuit.map_or_else(|| "unknown circuit".to_string(), |c| format!("for {c}")),
        );
    }
    let pvk = groth16::prepare_verifying_key(&vk);
    if groth16::verify_proof(&pvk, &proof_value, &public)? {
        println!(
            "valid: {} verifies against {} public inputs",
            proof.display(),
            public.len()
        );
        Ok(())
    } else {
        bail!(
            "invalid: {} does not verify against these public inputs and key",
            proof.display()
        )
    }
}

fn devices() -> Result<()> {
    for report in available_backends(backend_flags::backend_options()) {
        match report.status {
            Ok(device) => println!("{:5} available    {device}", report.name),
            Err(reason) => println!("{:5} unavailable  {reason}", report.name),
        }
    }
    Ok(())
}

fn demo(circuit: CircuitSpec, backend: BackendKind) -> Result<()> {
    check_setup_memory(&format!("demo --circuit {circuit}"), &circuit)?;
    let backend = open_backend_with(backend, backend_flags::backend_options())?;
    println!(
        "crossgroth demo: {circuit} on the {} backend ({})",
        backend.name(),
        backend.device()
    );
    let t = Instant::now();
    let params = Arc::new(generate(circuit, None, backend.setup_device())?);
    println!(
        "  setup (insecure, random)  {:8.3} s",
        t.elapsed().as_secs_f64()
    );
    let prover = Prover::with_placement(backend, params.clone(), &backend_flags::placement())?;
    let instance = circuit.instance(1);
    let inputs = instance.public_inputs();
    let t = Instant::now();
    let asg = synthesis::synthesize(instance)?;
    println!(
        "  synthesis                 {:8.3} s  ({} rows, {} aux)",
        t.elapsed().as_secs_f64(),
        asg.num_rows(),
        asg.aux.len()
    );
    let (r, s) = groth16::draw_randomness(1, &mut OsRng);
    let t = Instant::now();
    let proof = prover.prove_assignments(vec![asg], &r, &s)?.remove(0);
    println!(
        "  prove                     {:8.3} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let ok = groth16::verify_proof(&groth16::prepare_verifying_key(&params.vk), &proof, &inputs)?;
    println!(
        "  verify                    {:8.3} s  ({})",
        t.elapsed().as_secs_f64(),
        if ok { "valid" } else { "INVALID" }
    );
    if !ok {
        bail!("the demo proof did not verify");
    }
    println!("  proof: {}", hex::encode(proof.to_bytes()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument of every subcommand says what it does in `--help`.
    #[test]
    fn every_argument_has_help() {
        let cmd = Cli::command();
        for sub in cmd.get_subcommands() {
            for arg in sub.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                assert!(
                    arg.get_help().is_some(),
                    "{} --{id} has no help text",
                    sub.get_name()
                );
            }
        }
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}

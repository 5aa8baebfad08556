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
mod demo;
mod engine_run;
mod fault;
mod filecoin;
mod files;
mod memory;
mod output;
mod params;
mod plot;
mod progress;
mod prove;
mod serve;
mod setup;
mod signals;

use std::path::PathBuf;

use anyhow::Result;
use clap::parser::ValueSource;
use clap::{ArgGroup, ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use crossgroth::backend::BackendKind;
use crossgroth::circuits::CircuitSpec;

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
        /// Where the fixed-base products run: cpu, cuda or wgpu (the same bytes either way).
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

/// Starts logging: RUST_LOG where set, else `default` (a level or an
/// env_logger filter).
pub fn init_logging(default: &str) {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default)).init();
}

pub fn run() -> Result<()> {
    let (cli, matches) = parse();
    // The daemon starts its own logging, at its configuration's level.
    if !matches!(cli.command, Command::Serve(_)) {
        init_logging("warn");
    }
    backend_flags::choose(&cli.backend);
    fault::maybe_panic();
    match cli.command {
        Command::Setup {
            circuit,
            params,
            vk,
            seed,
            backend,
        } => setup::setup(circuit, params, vk, seed, backend),
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
            prove::prove(prove::ProveArgs {
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
            prove::verify(params, vk, proof, inputs)
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
        Command::Devices => demo::devices(),
        Command::Filecoin { command } => filecoin::run(command),
        Command::Serve(args) => serve::run(args),
        Command::Client(args) => client::run(args),
        Command::Demo { circuit, backend } => demo::demo(circuit, backend),
    }
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

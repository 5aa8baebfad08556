//! Subcommands of the `crossgroth` binary.

mod backend_flags;
mod crosscheck;
mod engine_run;
mod files;
mod plot;
mod progress;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use crossgroth::backend::{available_backends, open_backend_with, BackendKind};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{self, Parameters, Proof, ProveOptions, Prover};
use crossgroth::synthesis;
use crossgroth::Error;
use rand_core::{OsRng, SeedableRng};

use files::PublicInputsFile;
use progress::Stage;

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

#[derive(Subcommand)]
enum Command {
    /// Write random parameters for a built-in circuit. INSECURE: for development and
    /// tests only; production parameters come from a trusted-setup ceremony.
    Setup {
        /// Built-in circuit: cubic, sha256:<bytes>, chain:<log2 rows>, multi:<inputs>.
        #[arg(long)]
        circuit: CircuitSpec,
        /// Where to write the parameters (bellperson's format).
        #[arg(long)]
        params: PathBuf,
        /// Also write the verifying key alone here.
        #[arg(long)]
        vk: Option<PathBuf>,
        /// Derive the toxic waste from this seed (reproducible, and even less secure).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Prove a built-in circuit; write the proof and its public inputs.
    Prove {
        #[arg(long)]
        circuit: CircuitSpec,
        #[arg(long)]
        params: PathBuf,
        /// Where to write the 192-byte proof.
        #[arg(long, required_unless_present = "count")]
        proof: Option<PathBuf>,
        /// Where to write the public inputs (JSON); default: <proof>.inputs.json.
        #[arg(long)]
        inputs: Option<PathBuf>,
        #[arg(long, default_value_t = BackendKind::Auto)]
        backend: BackendKind,
        /// Draw r and s from this seed instead of the OS's CSPRNG (reproducible bytes;
        /// such a proof is labelled seeded and is not zero-knowledge in practice).
        #[arg(long)]
        seed: Option<u64>,
        /// Seed of the circuit's witness values.
        #[arg(long, default_value_t = 0)]
        witness_seed: u64,
        /// Skip the a·b = c check of every row before proving.
        #[arg(long)]
        no_witness_check: bool,
        /// Skip the subgroup checks when reading parameters (on-curve checks remain).
        #[arg(long)]
        trust_params: bool,
        /// Prove this many instances through the proving engine instead (witness
        /// seeds 0..N), reporting throughput and stage timings; writes no proof file.
        #[arg(long)]
        count: Option<usize>,
        #[command(flatten)]
        engine: EngineOptions,
    },
    /// Verify a proof against a verifying key (from --params or --vk).
    Verify {
        #[arg(long, required_unless_present = "vk")]
        params: Option<PathBuf>,
        #[arg(long, conflicts_with = "params")]
        vk: Option<PathBuf>,
        #[arg(long)]
        proof: PathBuf,
        /// Public inputs (JSON, as `prove` writes them); default: <proof>.inputs.json.
        #[arg(long)]
        inputs: Option<PathBuf>,
    },
    /// Run the same inputs through every available backend and compare each
    /// operation and the final proof bytes with the cpu backend.
    Crosscheck {
        #[arg(long, default_value = "sha256:64")]
        circuit: CircuitSpec,
        /// Parameters to use; generated in memory when absent.
        #[arg(long)]
        params: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Run many proofs of a built-in circuit through the proving engine and report
    /// throughput, per-stage p50/p99 and peak resident memory.
    BenchEngine {
        #[arg(long, default_value = "sha256:64")]
        circuit: CircuitSpec,
        /// Parameters to use; generated in memory (insecure) when absent.
        #[arg(long)]
        params: Option<PathBuf>,
        #[arg(long, default_value_t = 32)]
        count: usize,
        #[command(flatten)]
        engine: EngineOptions,
    },
    /// List the backends and devices of this machine, and why any is unavailable.
    Devices,
    /// Setup, prove and verify a small SHA-256 circuit on the best backend here.
    Demo {
        #[arg(long, default_value = "sha256:64")]
        circuit: CircuitSpec,
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

impl EngineOptions {
    fn into_args(
        self,
        circuit: CircuitSpec,
        params: Option<PathBuf>,
        count: usize,
        backend: BackendKind,
    ) -> engine_run::EngineArgs {
        engine_run::EngineArgs {
            circuit,
            params,
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

pub fn run() -> Result<()> {
    let cli = Cli::parse();
    backend_flags::choose(&cli.backend);
    match cli.command {
        Command::Setup {
            circuit,
            params,
            vk,
            seed,
        } => setup(circuit, params, vk, seed),
        Command::Prove {
            circuit,
            params,
            backend,
            count: Some(count),
            engine,
            ..
        } => engine_run::run(engine.into_args(circuit, Some(params), count, backend)),
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
            engine,
        } => engine_run::run(engine.into_args(circuit, params, count, BackendKind::Auto)),
        Command::Devices => devices(),
        Command::Demo { circuit, backend } => demo(circuit, backend),
    }
}

fn generate(circuit: CircuitSpec, seed: Option<u64>) -> Result<Parameters> {
    let stage = Stage::start(&format!("generating parameters for {circuit}"));
    let report = |what: &str, done: usize, total: usize| stage.step(what, done, total);
    let params = match seed {
        Some(s) => groth16::generate_random_parameters(
            circuit.blank(),
            &mut rand_chacha::ChaCha20Rng::seed_from_u64(s),
            Some(&report),
        ),
        None => groth16::generate_random_parameters(circuit.blank(), &mut OsRng, Some(&report)),
    }?;
    stage.finish();
    Ok(params)
}

fn setup(
    circuit: CircuitSpec,
    path: PathBuf,
    vk: Option<PathBuf>,
    seed: Option<u64>,
) -> Result<()> {
    eprintln!("warning: `setup` makes INSECURE random parameters, for development and tests only");
    let params = generate(circuit, seed)?;
    params.write_file(&path)?;
    if let Some(vk_path) = vk {
        let file = std::fs::File::create(&vk_path).map_err(|e| Error::io(&vk_path, e))?;
        params.vk.write(std::io::BufWriter::new(file))?;
    }
    println!(
        "wrote parameters for {circuit} to {} ({} h, {} l, {} a, {} b points)",
        path.display(),
        params.h.len(),
        params.l.len(),
        params.a.len(),
        params.b_g1.len()
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

fn prove(args: ProveArgs) -> Result<()> {
    let stage = Stage::start(&format!("reading {}", args.params.display()));
    let params = Arc::new(Parameters::read_file(&args.params, !args.trust_params)?);
    stage.finish();
    let backend = open_backend_with(args.backend, backend_flags::backend_options())?;
    let prover = Prover::with_placement(backend, params.clone(), &backend_flags::placement())?
        .with_options(ProveOptions {
            check_witness: args.check,
        });
    let circuit = args.circuit.instance(args.witness_seed);
    let public_inputs = circuit.public_inputs();
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
    let proof = match prover.prove(circuit, r[0], s[0]) {
        Err(Error::Unsatisfied { row, path: None }) => {
            // Name the row: synthesize again, this time tracking namespaces.
            let (_, names) =
                synthesis::synthesize_with_names(args.circuit.instance(args.witness_seed))?;
            return Err(Error::Unsatisfied {
                row,
                path: names.get(row).cloned(),
            }
            .into());
        }
        other => other?,
    };
    stage.finish();
    std::fs::write(&args.proof, proof.to_bytes()).map_err(|e| Error::io(&args.proof, e))?;
    PublicInputsFile::new(&args.circuit, &public_inputs, args.seed.is_some())
        .write(&args.inputs)?;
    println!(
        "proved {} on {} in {:.3} s: proof {}, public inputs {}{}",
        args.circuit,
        prover.backend().name(),
        t.elapsed().as_secs_f64(),
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
    let vk = match (params, vk) {
        (_, Some(path)) => groth16::VerifyingKey::read_file(&path)?,
        (Some(path), None) => Parameters::read_file(&path, true)?.vk,
        (None, None) => bail!("give --params or --vk"),
    };
    let bytes = std::fs::read(&proof).map_err(|e| Error::io(&proof, e))?;
    let proof_value = Proof::from_bytes(&bytes).with_context(|| proof.display().to_string())?;
    let public = PublicInputsFile::read(&inputs)?;
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
    let backend = open_backend_with(backend, backend_flags::backend_options())?;
    println!(
        "crossgroth demo: {circuit} on the {} backend ({})",
        backend.name(),
        backend.device()
    );
    let t = Instant::now();
    let params = Arc::new(generate(circuit, None)?);
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

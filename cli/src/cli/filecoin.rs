//! `crossgroth filecoin …`: Filecoin proofs from the inputs Curio sends, read from
//! files; and `test-sector`, which makes such inputs and their (insecure)
//! parameters for a small sector.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use crossgroth::backend::{open_backend_with, BackendKind};
use crossgroth::engine::{Engine, EngineConfig};
use crossgroth_filecoin::params::DEFAULT_PARAMETER_CACHE;
use crossgroth_filecoin::test_sector::{self, TestKind};
use crossgroth_filecoin::{
    registered, write_insecure_params, FilecoinOptions, FilecoinProver, ParamsCache, PoRepRequest,
    PoStRequest, ProofKind, Request, SnapRequest,
};

use super::backend_flags;
use super::output::Output;

#[derive(clap::Args)]
pub struct Common {
    /// Backend to prove on: cpu, cuda, wgpu or auto.
    #[arg(long, default_value_t = BackendKind::Auto)]
    backend: BackendKind,
    /// The parameter cache (default: $FIL_PROOFS_PARAMETER_CACHE, else
    /// /var/tmp/filecoin-proof-parameters).
    #[arg(long)]
    params_dir: Option<PathBuf>,
    /// Where to write the proof: the bytes filecoin-proofs' function returns.
    #[arg(long)]
    out: PathBuf,
    /// Synthesize every partition directly instead of from the circuit's recorded
    /// shape.
    #[arg(long)]
    no_recorded_shapes: bool,
}

#[derive(clap::Args)]
pub struct PoStArgs {
    /// The sectors' vanilla proofs, one bincode `FallbackPoStSectorProof` file each.
    #[arg(long = "vanilla", required = true, num_args = 1..)]
    vanilla: Vec<PathBuf>,
    /// The registered PoSt proof (Curio's number, e.g. 0 = WinningPoSt 2KiB, 13 =
    /// WindowPoSt 32GiB).
    #[arg(long)]
    registered_proof: u64,
    #[arg(long)]
    miner_id: u64,
    /// The 32-byte randomness, in hex.
    #[arg(long)]
    randomness: String,
    #[command(flatten)]
    common: Common,
}

#[derive(Subcommand)]
pub enum FilecoinCommand {
    /// PoRep C2: the seal proof of a sector from its C1 output.
    PorepC2 {
        /// Curio's C1 wrapper JSON (or a bare SealCommitPhase1Output JSON).
        #[arg(long)]
        c1: PathBuf,
        #[arg(long)]
        miner_id: u64,
        /// The sector number (default: the C1 wrapper's).
        #[arg(long)]
        sector_number: Option<u64>,
        /// Checked against the C1 output, which decides.
        #[arg(long)]
        registered_proof: Option<u64>,
        #[command(flatten)]
        common: Common,
    },
    /// WinningPoSt from the challenged sector's vanilla proof.
    WinningPost(PoStArgs),
    /// One WindowPoSt partition from its sectors' vanilla proofs.
    WindowPost {
        #[command(flatten)]
        post: PoStArgs,
        #[arg(long, default_value_t = 0)]
        partition_index: u32,
    },
    /// SnapDeals: the update proof from its partitions' vanilla proofs.
    SnapProve {
        /// One bincode `PartitionProof` file per partition, in order.
        #[arg(long = "vanilla", required = true, num_args = 1..)]
        vanilla: Vec<PathBuf>,
        /// The registered update proof (0 = 2KiB … 4 = 64GiB).
        #[arg(long)]
        registered_proof: u64,
        /// The commitments in hex, 32 bytes each.
        #[arg(long)]
        comm_r_old: String,
        #[arg(long)]
        comm_r_new: String,
        #[arg(long)]
        comm_d_new: String,
        #[command(flatten)]
        common: Common,
    },
    /// Seal a small sector with filecoin-proofs and write the inputs Curio would
    /// send for it, with random parameters (INSECURE, labelled) for its circuits.
    TestSector {
        /// porep, snap or post (WinningPoSt and WindowPoSt).
        #[arg(long, value_delimiter = ',', default_value = "porep,snap,post")]
        kind: Vec<String>,
        #[arg(long, default_value = "2KiB")]
        size: String,
        /// An empty or new directory: the inputs go here, the parameters in DIR/params.
        #[arg(long)]
        dir: PathBuf,
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// BENCHMARK: PoRep C2 at a real sector size (32 GiB by default) on fabricated
    /// vanilla proofs, parameters generated in memory; its proofs are never valid.
    BenchPorep(super::bench_porep::BenchPoRepArgs),
}

pub fn run(command: FilecoinCommand) -> Result<()> {
    match command {
        FilecoinCommand::PorepC2 {
            c1,
            miner_id,
            sector_number,
            registered_proof,
            common,
        } => {
            let request = Request::PoRep(PoRepRequest {
                c1: read(&c1, "the C1 output")?,
                miner_id,
                sector_number,
                registered_proof,
                sector_size: None,
            });
            prove(request, common)
        }
        FilecoinCommand::WinningPost(args) => {
            let (request, common) = post_request(args, 0)?;
            prove(Request::WinningPoSt(request), common)
        }
        FilecoinCommand::WindowPost {
            post,
            partition_index,
        } => {
            let (request, common) = post_request(post, partition_index)?;
            prove(Request::WindowPoSt(request), common)
        }
        FilecoinCommand::SnapProve {
            vanilla,
            registered_proof,
            comm_r_old,
            comm_r_new,
            comm_d_new,
            common,
        } => {
            let request = Request::SnapDeals(SnapRequest {
                registered_proof,
                vanilla_proofs: read_all(&vanilla)?,
                comm_r_old: hex_arg(&comm_r_old, "--comm-r-old")?,
                comm_r_new: hex_arg(&comm_r_new, "--comm-r-new")?,
                comm_d_new: hex_arg(&comm_d_new, "--comm-d-new")?,
            });
            prove(request, common)
        }
        FilecoinCommand::TestSector {
            kind,
            size,
            dir,
            seed,
        } => make_test_sector(&kind, &size, &dir, seed),
        FilecoinCommand::BenchPorep(args) => super::bench_porep::run(args),
    }
}

fn post_request(args: PoStArgs, partition_index: u32) -> Result<(PoStRequest, Common)> {
    let request = PoStRequest {
        registered_proof: args.registered_proof,
        miner_id: args.miner_id,
        randomness: hex_arg(&args.randomness, "--randomness")?,
        vanilla_proofs: read_all(&args.vanilla)?,
        partition_index,
    };
    Ok((request, args.common))
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{what} {}", path.display()))
}

fn read_all(paths: &[PathBuf]) -> Result<Vec<Vec<u8>>> {
    paths.iter().map(|p| read(p, "vanilla proof")).collect()
}

fn hex_arg(text: &str, flag: &str) -> Result<Vec<u8>> {
    hex::decode(text.trim().trim_start_matches("0x")).with_context(|| format!("{flag} is not hex"))
}

/// Points filecoin-proofs at the parameter directory before it reads its
/// settings (once per process): its verifiers must see the keys crossgroth proves
/// with.
fn params_dir(flag: Option<PathBuf>) -> PathBuf {
    let dir = flag
        .or_else(|| std::env::var_os("FIL_PROOFS_PARAMETER_CACHE").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_PARAMETER_CACHE));
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &dir);
    dir
}

fn prove(request: Request, common: Common) -> Result<()> {
    let out = Output::check(&common.out, "--out")?;
    let dir = params_dir(common.params_dir);
    let params = ParamsCache::open(&dir)?;
    let backend = open_backend_with(common.backend, backend_flags::backend_options())?;
    let config = EngineConfig {
        placement: backend_flags::placement(),
        ..EngineConfig::default()
    };
    let engine = Engine::start(config, vec![backend.clone()])?;
    let options = FilecoinOptions {
        recorded_shapes: !common.no_recorded_shapes,
        ..FilecoinOptions::default()
    };
    let prover = FilecoinProver::new(Arc::new(engine), params, options);
    eprintln!("proving {} on {} …", request.kind(), backend.name());
    let output = prover.prove("cli", &request, request.default_priority())?;
    out.write_bytes(&output.proof)?;
    let t = &output.timings;
    eprintln!(
        "{} ({}, {} partition{}): {} bytes, verified by filecoin-proofs, written to {}",
        request.kind(),
        output.circuit,
        output.partitions,
        if output.partitions == 1 { "" } else { "s" },
        output.proof.len(),
        common.out.display()
    );
    eprintln!(
        "  prepare {} ms, parameters {} ms, prove {} ms, verify {} ms, total {} ms",
        t.prepare.as_millis(),
        t.params_load.as_millis(),
        t.prove.as_millis(),
        t.verify.as_millis(),
        t.total.as_millis()
    );
    if output.insecure_params {
        eprintln!("  (with crossgroth's INSECURE test parameters)");
    }
    Ok(())
}

fn make_test_sector(kinds: &[String], size: &str, dir: &Path, seed: u64) -> Result<()> {
    let kinds = kinds
        .iter()
        .map(|k| k.parse::<TestKind>())
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let size = registered::parse_sector_size(size)?;
    if size > 2048 {
        bail!("test sectors are 2KiB: larger ones take hours to seal");
    }
    std::fs::create_dir_all(dir).with_context(|| format!("--dir {}", dir.display()))?;
    let params = dir.join("params");
    std::fs::create_dir_all(&params).with_context(|| format!("{}", params.display()))?;
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params);
    if std::env::var_os("FIL_PROOFS_PARENT_CACHE").is_none() {
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", dir.join("parents"));
    }
    eprintln!(
        "sealing a {} sector with filecoin-proofs …",
        registered::sector_size_name(size)
    );
    let sector = test_sector::make(size, &kinds, &dir.join("sector"), seed)?;
    let mut wanted = Vec::new();
    let mut commands = Vec::new();
    let bin = "crossgroth filecoin";
    let pd = params.display();
    if let Some(p) = &sector.porep {
        let c1 = write(dir, "porep-c1.json", &p.c1)?;
        wanted.push(ProofKind::PoRep);
        commands.push(format!(
            "{bin} porep-c2 --c1 {c1} --miner-id {} --params-dir {pd} --out porep.proof",
            p.miner_id
        ));
    }
    for (name, req, sub) in [
        ("winning", &sector.winning, "winning-post"),
        ("window", &sector.window, "window-post"),
    ] {
        let Some(p) = req else { continue };
        wanted.push(if name == "winning" {
            ProofKind::WinningPoSt
        } else {
            ProofKind::WindowPoSt
        });
        let files = write_vanilla(dir, name, &p.vanilla_proofs)?;
        commands.push(format!(
            "{bin} {sub} --vanilla {} --registered-proof {} --miner-id {} --randomness {} --params-dir {pd} --out {name}.proof",
            files,
            p.registered_proof,
            p.miner_id,
            hex::encode(&p.randomness)
        ));
    }
    if let Some(p) = &sector.snap {
        wanted.push(ProofKind::SnapDeals);
        let files = write_vanilla(dir, "snap", &p.vanilla_proofs)?;
        commands.push(format!(
            "{bin} snap-prove --vanilla {} --registered-proof {} --comm-r-old {} --comm-r-new {} --comm-d-new {} --params-dir {pd} --out snap.proof",
            files,
            p.registered_proof,
            hex::encode(&p.comm_r_old),
            hex::encode(&p.comm_r_new),
            hex::encode(&p.comm_d_new)
        ));
    }
    for kind in wanted {
        eprintln!("writing insecure {} parameters into {pd} …", kind.name());
        write_insecure_params(kind, size, &params, seed, None)?;
    }
    let script = commands.join("\n") + "\n";
    write(dir, "commands.sh", script.as_bytes())?;
    eprintln!("done; try (also in {}):", dir.join("commands.sh").display());
    print!("{script}");
    Ok(())
}

/// `<prefix>-vanilla-<i>.bin`, one file a vanilla proof, joined for a command line.
fn write_vanilla(dir: &Path, prefix: &str, proofs: &[Vec<u8>]) -> Result<String> {
    let files = proofs
        .iter()
        .enumerate()
        .map(|(i, v)| write(dir, &format!("{prefix}-vanilla-{i}.bin"), v))
        .collect::<Result<Vec<_>>>()?;
    Ok(files.join(" "))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<String> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).with_context(|| format!("{}", path.display()))?;
    Ok(path.display().to_string())
}

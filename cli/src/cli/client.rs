//! `crossgroth client …`: a command-line client of a running daemon (crossgroth
//! serve, or cuzk) over the same cuzk.v1 proto, for operators and scripts.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use crossgroth_daemon::pb::{self, await_proof_response::Status as JobStatus};

use super::output::Output;

#[derive(clap::Args)]
pub struct ClientArgs {
    /// The daemon's address: host:port or unix:///path.sock.
    #[arg(long, default_value = crossgroth_daemon::config::DEFAULT_LISTEN)]
    addr: String,
    #[command(subcommand)]
    command: ClientCommand,
}

#[derive(Subcommand)]
pub enum ClientCommand {
    /// Prove through the daemon (Prove: submit and wait) and write the proof.
    Prove(Box<ProveArgs>),
    /// Print the daemon's status: devices, loaded parameters, queues, totals.
    Status,
    /// Cancel a queued or running job.
    Cancel {
        /// The job id SubmitProof or Prove returned.
        #[arg(long)]
        job_id: String,
    },
    /// Print the daemon's Prometheus metrics.
    Metrics,
}

#[derive(clap::Args)]
pub struct ProveArgs {
    /// porep-c2, winning-post, window-post or snap-prove.
    #[arg(long)]
    kind: String,
    /// PoRep: Curio's C1 wrapper JSON (or a bare SealCommitPhase1Output JSON).
    #[arg(long)]
    c1: Option<PathBuf>,
    /// PoSt: one bincode FallbackPoStSectorProof file a sector; SnapDeals: one
    /// bincode PartitionProof file a partition, in order.
    #[arg(long = "vanilla", num_args = 1..)]
    vanilla: Vec<PathBuf>,
    /// The registered proof (Curio's number; PoRep: checked against the C1 output).
    #[arg(long)]
    registered_proof: Option<u64>,
    /// The miner's actor id (PoRep, PoSt).
    #[arg(long, default_value_t = 0)]
    miner_id: u64,
    /// PoRep: the sector number (default: the C1 wrapper's).
    #[arg(long, default_value_t = 0)]
    sector_number: u64,
    /// PoSt: the 32-byte randomness, in hex.
    #[arg(long)]
    randomness: Option<String>,
    /// WindowPoSt: which partition of the deadline.
    #[arg(long, default_value_t = 0)]
    partition_index: u32,
    /// SnapDeals: the commitments in hex, 32 bytes each.
    #[arg(long)]
    comm_r_old: Option<String>,
    #[arg(long, help = "SnapDeals: comm_r_new in hex")]
    comm_r_new: Option<String>,
    #[arg(long, help = "SnapDeals: comm_d_new in hex")]
    comm_d_new: Option<String>,
    /// The idempotency key: a repeat returns the same job (default: none).
    #[arg(long, default_value = "")]
    request_id: String,
    /// low, normal, high or critical (default: the kind's, as Curio sets it).
    #[arg(long)]
    priority: Option<String>,
    /// Where to write the proof.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: ClientArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // Inputs are read and checked before the daemon is contacted.
    let submit = match &args.command {
        ClientCommand::Prove(p) => Some((Output::check(&p.out, "--out")?, submit_request(p)?)),
        _ => None,
    };
    runtime.block_on(async move {
        let mut c = crossgroth_daemon::client::connect(&args.addr).await?;
        let status = |e: tonic::Status| anyhow::anyhow!("{}: {}", code_name(e.code()), e.message());
        match args.command {
            ClientCommand::Prove(p) => {
                let (out, submit) = submit.context("a prove request")?;
                let r = c
                    .prove(pb::ProveRequest {
                        submit: Some(submit),
                    })
                    .await
                    .map_err(status)?
                    .into_inner()
                    .result
                    .context("the daemon's reply has no result")?;
                match JobStatus::try_from(r.status) {
                    Ok(JobStatus::Completed) => {}
                    Ok(s) => bail!("job {} {}: {}", r.job_id, s.as_str_name(), r.error_message),
                    Err(_) => bail!("job {}: unknown status {}", r.job_id, r.status),
                }
                out.write_bytes(&r.proof)?;
                eprintln!(
                    "job {}: {} bytes written to {}; queue {} ms, parameters {} ms, synthesis {} ms, gpu {} ms, total {} ms",
                    r.job_id,
                    r.proof.len(),
                    p.out.display(),
                    r.queue_wait_ms,
                    r.srs_load_ms,
                    r.synthesis_ms,
                    r.gpu_compute_ms,
                    r.total_ms
                );
            }
            ClientCommand::Status => {
                let s = c
                    .get_status(pb::GetStatusRequest {})
                    .await
                    .map_err(status)?
                    .into_inner();
                println!(
                    "uptime {} s; proofs completed {}, failed {}; memory {} of {} bytes",
                    s.uptime_seconds,
                    s.total_proofs_completed,
                    s.total_proofs_failed,
                    s.pinned_memory_bytes,
                    s.pinned_memory_limit_bytes
                );
                for g in &s.gpus {
                    println!(
                        "device {}: {} (memory {} free of {} bytes)",
                        g.ordinal, g.name, g.vram_free_bytes, g.vram_total_bytes
                    );
                }
                for l in &s.loaded_srs {
                    println!(
                        "parameters {}: {} bytes, used by {} job(s)",
                        l.circuit_id, l.size_bytes, l.ref_count
                    );
                }
                for q in &s.queues {
                    println!(
                        "queue {}: {} pending, {} in progress",
                        q.proof_kind, q.pending, q.in_progress
                    );
                }
            }
            ClientCommand::Cancel { job_id } => {
                let r = c
                    .cancel_proof(pb::CancelProofRequest {
                        job_id: job_id.clone(),
                    })
                    .await
                    .map_err(status)?
                    .into_inner();
                println!(
                    "job {job_id} cancelled ({})",
                    if r.was_running { "it was running" } else { "it was not running" }
                );
            }
            ClientCommand::Metrics => {
                let m = c
                    .get_metrics(pb::GetMetricsRequest {})
                    .await
                    .map_err(status)?
                    .into_inner();
                print!("{}", m.prometheus_text);
            }
        }
        Ok(())
    })
}

fn code_name(code: tonic::Code) -> String {
    format!("{code:?}")
}

fn submit_request(p: &ProveArgs) -> Result<pb::SubmitProofRequest> {
    let kind = match p.kind.as_str() {
        "porep-c2" => pb::ProofKind::PorepSealCommit,
        "winning-post" => pb::ProofKind::WinningPost,
        "window-post" => pb::ProofKind::WindowPostPartition,
        "snap-prove" => pb::ProofKind::SnapDealsUpdate,
        other => bail!(
            "--kind {:?}: expected porep-c2, winning-post, window-post or snap-prove",
            crossgroth_daemon::decode::abbreviate(other)
        ),
    };
    let priority = match p.priority.as_deref() {
        None => pb::Priority::Unspecified,
        Some("low") => pb::Priority::Low,
        Some("normal") => pb::Priority::Normal,
        Some("high") => pb::Priority::High,
        Some("critical") => pb::Priority::Critical,
        Some(other) => bail!(
            "--priority {:?}: expected low, normal, high or critical",
            crossgroth_daemon::decode::abbreviate(other)
        ),
    };
    let hex_arg = |v: &Option<String>, flag: &str| -> Result<Vec<u8>> {
        let Some(t) = v else {
            bail!("{flag} is required for --kind {}", p.kind)
        };
        hex::decode(t.trim().trim_start_matches("0x")).with_context(|| format!("{flag} is not hex"))
    };
    let mut r = pb::SubmitProofRequest {
        request_id: p.request_id.clone(),
        proof_kind: kind as i32,
        priority: priority as i32,
        miner_id: p.miner_id,
        sector_number: p.sector_number,
        partition_index: p.partition_index,
        ..Default::default()
    };
    match kind {
        pb::ProofKind::PorepSealCommit => {
            let c1 =
                p.c1.as_ref()
                    .context("--c1 is required for --kind porep-c2")?;
            r.vanilla_proof = read(c1, "the C1 output")?;
            r.registered_proof = match p.registered_proof {
                Some(n) => n,
                None => registered_from_c1(&r.vanilla_proof)?,
            };
        }
        pb::ProofKind::SnapDealsUpdate => {
            r.registered_proof = p
                .registered_proof
                .context("--registered-proof is required")?;
            r.vanilla_proofs = read_all(&p.vanilla)?;
            r.comm_r_old = hex_arg(&p.comm_r_old, "--comm-r-old")?;
            r.comm_r_new = hex_arg(&p.comm_r_new, "--comm-r-new")?;
            r.comm_d_new = hex_arg(&p.comm_d_new, "--comm-d-new")?;
        }
        _ => {
            r.registered_proof = p
                .registered_proof
                .context("--registered-proof is required")?;
            r.vanilla_proofs = read_all(&p.vanilla)?;
            r.randomness = hex_arg(&p.randomness, "--randomness")?;
        }
    }
    if kind != pb::ProofKind::PorepSealCommit && r.vanilla_proofs.is_empty() {
        bail!("--vanilla is required for --kind {}", p.kind);
    }
    Ok(r)
}

/// Curio always sends the registered proof; without --registered-proof the C1
/// output names it.
fn registered_from_c1(c1: &[u8]) -> Result<u64> {
    let input = crossgroth_filecoin::inputs::decode_c1(c1)?;
    Ok(crossgroth_filecoin::registered::seal_proof_number(
        input.output.registered_proof,
    ))
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{what} {}", path.display()))
}

fn read_all(paths: &[PathBuf]) -> Result<Vec<Vec<u8>>> {
    paths.iter().map(|p| read(p, "vanilla proof")).collect()
}

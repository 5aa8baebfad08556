//! The eight RPCs of `cuzk.v1.ProvingEngine` over the job table, the parameter
//! cache and the engine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossgroth::backend::Backend;
use tonic::{Request, Response, Status};

use crate::decode::{self, Circuit};
use crate::jobs::{Finished, Jobs, Outcome, Phase, Refused};
use crate::metrics::{Metrics, Sample};
use crate::pb::{self, proving_engine_server::ProvingEngine};

/// The service state shared by every connection.
pub struct Daemon {
    pub(crate) jobs: Arc<Jobs>,
    pub(crate) metrics: Arc<Metrics>,
    started: Instant,
    backends: Vec<Arc<dyn Backend>>,
    /// Circuits preloaded at start so far, and how many were asked for.
    preload_progress: std::sync::Mutex<(usize, usize)>,
}

impl Daemon {
    pub(crate) fn new(
        jobs: Arc<Jobs>,
        metrics: Arc<Metrics>,
        backends: Vec<Arc<dyn Backend>>,
    ) -> Daemon {
        Daemon {
            jobs,
            metrics,
            started: Instant::now(),
            backends,
            preload_progress: std::sync::Mutex::new((0, 0)),
        }
    }

    fn submit(&self, req: pb::SubmitProofRequest) -> Result<(Arc<crate::jobs::Job>, u32), Status> {
        let request_id = req.request_id.clone();
        let decoded = decode::decode(req).map_err(|e| {
            log::warn!(
                "request_id={:?} refused: {e}",
                decode::abbreviate(&request_id)
            );
            Status::invalid_argument(e)
        })?;
        let unavailable = self.out_of_service();
        let abbreviated = decode::abbreviate(&request_id);
        self.jobs
            .submit(request_id, decoded, unavailable)
            .map_err(|r| match r {
                Refused::Unavailable(m) => {
                    log::warn!("request_id={abbreviated:?} refused: {m}");
                    Status::unavailable(m)
                }
                Refused::Full(m) => Status::resource_exhausted(m),
                Refused::Draining => {
                    Status::unavailable("the daemon is shutting down: submit to another")
                }
            })
    }

    /// Whether any device is still in service.
    pub fn has_device_in_service(&self) -> bool {
        self.jobs.prover().engine().has_device_in_service()
    }

    /// Whether the daemon takes work: at least one device in service and not
    /// shutting down (what its health service reports).
    pub fn serving(&self) -> bool {
        self.jobs.prover().engine().has_device_in_service() && !self.jobs.is_draining()
    }

    /// Why no job can be proved here, when every device of the engine has been
    /// taken out of service after device errors (the engine does not use a device
    /// again in this process): new work is refused with UNAVAILABLE, so that the
    /// caller goes to another prover instead of queueing jobs that would fail.
    fn out_of_service(&self) -> Option<String> {
        let in_service = self.jobs.prover().engine().has_device_in_service();
        (!in_service).then(|| {
            format!(
                "every device of this daemon is out of service after device errors ({}): restart the daemon, or submit to another",
                self.backends
                    .iter()
                    .map(|b| format!("{} {}", b.name(), b.device()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    async fn await_job(
        &self,
        job_id: &str,
        timeout_ms: u64,
    ) -> Result<pb::AwaitProofResponse, Status> {
        let job = self.jobs.get(job_id).ok_or_else(|| {
            Status::not_found(format!(
                "no job {:?} (unknown, or finished and forgotten)",
                decode::abbreviate(job_id)
            ))
        })?;
        let timeout = (timeout_ms != 0).then(|| Duration::from_millis(timeout_ms));
        Ok(match job.wait(timeout).await {
            Some(f) => reply(&job.id, &f),
            None => pb::AwaitProofResponse {
                job_id: job.id.clone(),
                status: pb::await_proof_response::Status::Timeout as i32,
                error_message: format!(
                    "not finished after {timeout_ms} ms ({}): await again",
                    match job.phase() {
                        Phase::Queued => "queued",
                        _ => "running",
                    }
                ),
                ..Default::default()
            },
        })
    }

    /// The engine underneath (tests read its memory accounting).
    pub fn engine(&self) -> &Arc<crossgroth::engine::Engine> {
        self.jobs.prover().engine()
    }

    /// The GetStatus reply.
    pub fn status(&self) -> pb::GetStatusResponse {
        let prover = self.jobs.prover();
        let engine = prover.engine().status();
        let counts = self.jobs.counts();
        // current_job_id / current_proof_kind stay empty: the engine does not say
        // which job a device is working on.
        let gpus = self
            .backends
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let (free, total) = b.memory_report().unwrap_or((0, 0));
                let retired = engine.out_of_service.get(i).copied().unwrap_or(false);
                let current = engine.on_device.get(i).cloned().flatten();
                pb::GpuStatus {
                    ordinal: i as u32,
                    name: format!(
                        "{} {}{}",
                        b.name(),
                        b.device(),
                        if retired { " (out of service)" } else { "" }
                    ),
                    vram_total_bytes: total as u64,
                    vram_free_bytes: free as u64,
                    current_job_id: current.clone().unwrap_or_default(),
                    current_proof_kind: current
                        .and_then(|id| self.jobs.get(&id))
                        .map(|j| decode::queue_name(j.kind).to_string())
                        .unwrap_or_default(),
                }
            })
            .collect();
        let loaded_srs = engine
            .sets
            .iter()
            .map(|set| {
                let circuit = self.jobs.circuit_of(&set.name);
                pb::SrsStatus {
                    circuit_id: circuit.map_or_else(|| set.name.clone(), |c| c.id()),
                    tier: pb::srs_status::Tier::Hot as i32,
                    size_bytes: set.host_bytes as u64,
                    ref_count: set.users as u32,
                }
            })
            .collect();
        let queues = counts
            .per_kind
            .iter()
            .map(|&(kind, pending, in_progress)| pb::QueueStatus {
                proof_kind: decode::queue_name(kind).to_string(),
                pending,
                in_progress,
            })
            .collect();
        pb::GetStatusResponse {
            gpus,
            loaded_srs,
            queues,
            total_proofs_completed: self
                .jobs
                .completed
                .load(std::sync::atomic::Ordering::Relaxed),
            total_proofs_failed: self.jobs.failed.load(std::sync::atomic::Ordering::Relaxed),
            uptime_seconds: self.started.elapsed().as_secs(),
            pinned_memory_bytes: engine.memory.committed() as u64,
            pinned_memory_limit_bytes: engine.memory_budget as u64,
        }
    }

    /// The Prometheus text, with the sampled gauges read now.
    pub fn metrics_text(&self) -> String {
        let prover = self.jobs.prover();
        let engine = prover.engine().status();
        self.metrics.sample(&Sample {
            budget: engine.memory_budget,
            charged: engine.memory.charged,
            committed: engine.memory.committed(),
            resident: engine.memory.resident,
            srs_bytes: engine.sets.iter().map(|s| s.host_bytes).sum(),
            srs_reread: prover.engine().set_counts().reloads_after_loss,
            srs_loads: prover.engine().set_counts().loads,
            srs_evictions: prover.engine().set_counts().evictions,
            devices: engine
                .devices
                .iter()
                .map(|d| (format!("{} {}", d.backend, d.device), d.busy_s))
                .collect(),
            uptime_s: self.started.elapsed().as_secs_f64(),
            devices_in_service: prover.engine().devices_in_service(),
        });
        self.metrics.text()
    }

    /// The HTTP /status page: GetStatus as JSON, with the engine's own snapshot.
    pub fn status_json(&self) -> String {
        let s = self.status();
        let engine = self.jobs.prover().engine().status();
        let v = serde_json::json!({
            "uptime_secs": s.uptime_seconds,
            "gpus": s.gpus.iter().map(|g| serde_json::json!({
                "ordinal": g.ordinal, "name": g.name,
                "vram_total_bytes": g.vram_total_bytes, "vram_free_bytes": g.vram_free_bytes,
            })).collect::<Vec<_>>(),
            "loaded_srs": s.loaded_srs.iter().map(|l| serde_json::json!({
                "circuit_id": l.circuit_id, "tier": "hot", "size_bytes": l.size_bytes, "ref_count": l.ref_count,
            })).collect::<Vec<_>>(),
            "queues": s.queues.iter().map(|q| serde_json::json!({
                "proof_kind": q.proof_kind, "pending": q.pending, "in_progress": q.in_progress,
            })).collect::<Vec<_>>(),
            "counters": {
                "total_proofs_completed": s.total_proofs_completed,
                "total_proofs_failed": s.total_proofs_failed,
            },
            "memory": {
                "budget_bytes": engine.memory_budget,
                "charged_bytes": engine.memory.charged,
                "resident_bytes": engine.memory.resident,
                "admission_paused": engine.memory.paused,
            },
            "preload": {
                "done": self.preload_progress.lock().unwrap().0,
                "total": self.preload_progress.lock().unwrap().1,
            },
            "engine": engine,
        });
        v.to_string()
    }

    /// Preloads the configured circuits one after another, logging each and
    /// counting them in the status page's `preload` (ready when done = total).
    pub(crate) async fn preload_at_start(self: Arc<Self>, ids: Vec<String>) {
        let total = ids.len();
        self.preload_progress.lock().unwrap().1 = total;
        for (i, id) in ids.iter().enumerate() {
            log::info!("preloading {id} ({} of {total})", i + 1);
            if let Err(e) = self.preload(id).await {
                log::warn!("preloading {id}: {}", e.message());
            }
            self.preload_progress.lock().unwrap().0 = i + 1;
        }
        if total > 0 {
            log::info!("preloading done: {total} circuit(s); ready");
        }
    }

    async fn preload(&self, circuit_id: &str) -> Result<pb::PreloadSrsResponse, Status> {
        let circuit = Circuit::parse(circuit_id).map_err(Status::invalid_argument)?;
        let jobs = self.jobs.clone();
        let work = move || -> Result<pb::PreloadSrsResponse, Status> {
            let p = jobs
                .circuit_params(circuit)
                .map_err(Status::invalid_argument)?;
            let prover = jobs.prover();
            let already_loaded = prover
                .engine()
                .resident_sets()
                .iter()
                .any(|s| s.name == p.cache_id);
            let (took, shape) = prover
                .preload(&p)
                .map_err(|e| Status::failed_precondition(e.to_string()))?;
            if !already_loaded {
                log::info!(
                    "preloaded {} in {:.1} s{}",
                    circuit.id(),
                    took.as_secs_f64(),
                    if shape { ", with its kept shape" } else { "" }
                );
            }
            Ok(pb::PreloadSrsResponse {
                already_loaded,
                load_time_ms: if already_loaded {
                    0
                } else {
                    took.as_millis() as u64
                },
            })
        };
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| Status::internal(format!("preloading failed: {e}")))?
    }

    /// Evicts a set: freed at once (host copy, shape, every device's bases) when
    /// no job holds it, and `freed_bytes` is what was freed; a set that running
    /// jobs hold is released when the last of them ends, and nothing is freed now.
    async fn evict(&self, circuit_id: &str) -> Result<pb::EvictSrsResponse, Status> {
        let circuit = Circuit::parse(circuit_id).map_err(Status::invalid_argument)?;
        let p = self
            .jobs
            .circuit_params(circuit)
            .map_err(Status::invalid_argument)?;
        let engine = self.jobs.prover().engine().clone();
        let evicted = tokio::task::spawn_blocking(move || engine.evict_set(&p.cache_id))
            .await
            .map_err(|e| Status::internal(format!("evicting failed: {e}")))?;
        let Some(e) = evicted else {
            return Ok(pb::EvictSrsResponse {
                was_loaded: false,
                freed_bytes: 0,
            });
        };
        if e.deferred_users > 0 {
            log::info!(
                "{} is held by {} running job(s): released when they end",
                circuit.id(),
                e.deferred_users
            );
        } else {
            log::info!(
                "evicted {} on request: {} of host and {} of device memory freed",
                circuit.id(),
                crate::config::bytes_text(e.host_bytes as u64),
                crate::config::bytes_text(e.device_bytes as u64)
            );
        }
        Ok(pb::EvictSrsResponse {
            was_loaded: true,
            freed_bytes: e.freed_bytes() as u64,
        })
    }
}

/// A finished job as AwaitProofResponse says it.
fn reply(job_id: &str, f: &Finished) -> pb::AwaitProofResponse {
    use pb::await_proof_response::Status as S;
    let ms = |d: Duration| d.as_millis() as u64;
    let (status, proof, error_message) = match &f.outcome {
        Outcome::Completed(p) => (S::Completed, p.clone(), String::new()),
        Outcome::Failed(e) => (S::Failed, vec![], e.clone()),
        Outcome::Cancelled => (S::Cancelled, vec![], "cancelled".to_string()),
    };
    pb::AwaitProofResponse {
        job_id: job_id.to_string(),
        status: status as i32,
        proof,
        error_message,
        queue_wait_ms: ms(f.times.queue_wait),
        srs_load_ms: ms(f.times.srs_load),
        synthesis_ms: ms(f.times.synthesis),
        gpu_compute_ms: ms(f.times.gpu),
        total_ms: ms(f.times.total),
    }
}

/// The gRPC face of a shared [`Daemon`].
#[derive(Clone)]
pub struct Service(pub Arc<Daemon>);

#[tonic::async_trait]
impl ProvingEngine for Service {
    async fn submit_proof(
        &self,
        request: Request<pb::SubmitProofRequest>,
    ) -> Result<Response<pb::SubmitProofResponse>, Status> {
        let (job, queue_position) = self.0.submit(request.into_inner())?;
        Ok(Response::new(pb::SubmitProofResponse {
            job_id: job.id.clone(),
            queue_position,
            assigned_gpu: String::new(),
        }))
    }

    async fn await_proof(
        &self,
        request: Request<pb::AwaitProofRequest>,
    ) -> Result<Response<pb::AwaitProofResponse>, Status> {
        let r = request.into_inner();
        Ok(Response::new(
            self.0.await_job(&r.job_id, r.timeout_ms).await?,
        ))
    }

    /// Submit and await. A client that goes away (its deadline passed, its
    /// connection dropped) leaves its job running to completion: the reply is lost
    /// but not the work. A retry with the same request_id finds that job, running or
    /// finished, and returns its proof: one proof, not a second one. The result is
    /// kept for `keep_finished` (an hour by default) for such retries. Curio's
    /// Prove has a 30-minute deadline and retries the task: cancelling on a drop
    /// would throw away a nearly finished proof each time. A job nobody comes back
    /// for is proved anyway, and CancelProof is how to stop one.
    async fn prove(
        &self,
        request: Request<pb::ProveRequest>,
    ) -> Result<Response<pb::ProveResponse>, Status> {
        let submit = request
            .into_inner()
            .submit
            .ok_or_else(|| Status::invalid_argument("ProveRequest.submit is missing"))?;
        let (job, _) = self.0.submit(submit)?;
        let result = self.0.await_job(&job.id, 0).await?;
        Ok(Response::new(pb::ProveResponse {
            result: Some(result),
        }))
    }

    async fn cancel_proof(
        &self,
        request: Request<pb::CancelProofRequest>,
    ) -> Result<Response<pb::CancelProofResponse>, Status> {
        let id = request.into_inner().job_id;
        match self.0.jobs.cancel(&id) {
            Some(was_running) => Ok(Response::new(pb::CancelProofResponse { was_running })),
            None => Err(Status::not_found(format!(
                "no job {:?}",
                decode::abbreviate(&id)
            ))),
        }
    }

    async fn get_status(
        &self,
        _: Request<pb::GetStatusRequest>,
    ) -> Result<Response<pb::GetStatusResponse>, Status> {
        Ok(Response::new(self.0.status()))
    }

    async fn get_metrics(
        &self,
        _: Request<pb::GetMetricsRequest>,
    ) -> Result<Response<pb::GetMetricsResponse>, Status> {
        Ok(Response::new(pb::GetMetricsResponse {
            prometheus_text: self.0.metrics_text(),
        }))
    }

    async fn preload_srs(
        &self,
        request: Request<pb::PreloadSrsRequest>,
    ) -> Result<Response<pb::PreloadSrsResponse>, Status> {
        Ok(Response::new(
            self.0.preload(&request.into_inner().circuit_id).await?,
        ))
    }

    async fn evict_srs(
        &self,
        request: Request<pb::EvictSrsRequest>,
    ) -> Result<Response<pb::EvictSrsResponse>, Status> {
        Ok(Response::new(
            self.0.evict(&request.into_inner().circuit_id).await?,
        ))
    }
}

//! The job table: one entry a proof request, found by job id and by the caller's
//! `request_id` together with a digest of the request's inputs, queued by
//! priority in a bounded queue and handed to the prover a few at a time (CRITICAL
//! at once), then kept finished for a while so that a late AwaitProof or a
//! resubmission finds the result.
//!
//! A request id alone does not name a job: Curio reuses a WindowPoSt id for a
//! retry without a faulty sector, and a PoRep id after a re-run C1. The same id
//! with the same inputs is the same job (one proof, however often it is asked
//! for); the same id with other inputs is a new job that proves them. A request
//! whose job failed or was cancelled starts a new job when it comes again, so
//! that a retry can succeed.
//!
//! The table lives in memory only. A restarted daemon knows none of its
//! predecessor's jobs: a request_id the old process completed is proved again as
//! a new job (one more proof, equally valid), and an old job id is NOT_FOUND.
//! Job ids carry an epoch taken when the table is created (microseconds since
//! 1970, strictly increasing within a process), so that a job id of an earlier
//! run, or of another server in the same process, never names a new job.

use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossgroth::engine::{JobCanceller, Priority};
use crossgroth_filecoin::{CircuitParams, FilecoinProver, Output, ProofKind, Request};
use futures::FutureExt;
use tokio::sync::watch;

use crate::decode::{Circuit, Decoded, InputsDigest};
use crate::metrics::Metrics;

/// Where a job is.
#[derive(Clone, Debug)]
pub enum Phase {
    Queued,
    Running,
    Done(Arc<Finished>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Completed(Vec<u8>),
    Failed(String),
    Cancelled,
}

/// Times of one job, as AwaitProofResponse reports them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Times {
    /// In the daemon's queue, and in the engine's before synthesis (a partition's mean).
    pub queue_wait: Duration,
    pub srs_load: Duration,
    /// Building the circuits from the inputs, and synthesis of all partitions, summed.
    pub synthesis: Duration,
    /// The device's part of all partitions (H and the G1 MSMs), summed.
    pub gpu: Duration,
    /// From submission to the verified proof.
    pub total: Duration,
}

impl Times {
    /// The stages by the names the metrics use.
    pub fn stages(&self) -> [(&'static str, Duration); 5] {
        [
            ("queue_wait", self.queue_wait),
            ("srs_load", self.srs_load),
            ("synthesis", self.synthesis),
            ("gpu", self.gpu),
            ("total", self.total),
        ]
    }
}

#[derive(Debug)]
pub struct Finished {
    pub outcome: Outcome,
    pub times: Times,
    at: Instant,
}

pub struct Job {
    pub id: String,
    pub request_id: String,
    /// What the request asks to prove (decode::inputs_digest).
    pub digest: InputsDigest,
    pub kind: ProofKind,
    pub priority: Priority,
    pub circuit: Option<Circuit>,
    submitted: Instant,
    request: Mutex<Option<Request>>,
    cancel: Mutex<Cancel>,
    phase: watch::Sender<Phase>,
    seq: u64,
}

/// A running job's cancellation: asked for, and what cancels it in the engine
/// once it is there (it may still be reading parameters or building circuits).
#[derive(Default)]
struct Cancel {
    asked: bool,
    engine: Option<JobCanceller>,
}

impl Job {
    pub fn phase(&self) -> Phase {
        self.phase.borrow().clone()
    }

    /// Waits until the job is done, at most `timeout` (None: for ever).
    pub async fn wait(&self, timeout: Option<Duration>) -> Option<Arc<Finished>> {
        let mut rx = self.phase.subscribe();
        let done = async {
            match rx.wait_for(|p| matches!(p, Phase::Done(_))).await {
                Ok(p) => match &*p {
                    Phase::Done(f) => Some(f.clone()),
                    _ => None,
                },
                Err(_) => None,
            }
        };
        match timeout {
            None => done.await,
            Some(t) => tokio::time::timeout(t, done).await.ok().flatten(),
        }
    }
}

/// Why a submission was refused.
#[derive(Debug)]
pub enum Refused {
    /// The queue is full (RESOURCE_EXHAUSTED).
    Full(String),
    /// The daemon is shutting down (UNAVAILABLE).
    Draining,
    /// No new job can be proved here, for the reason given (UNAVAILABLE).
    Unavailable(String),
}

pub struct Limits {
    pub max_queued: usize,
    pub jobs_in_flight: usize,
    pub keep_finished: Duration,
    pub max_finished: usize,
}

/// CRITICAL jobs accepted beyond the queue's bound: they must not be refused
/// because lower-priority work filled the queue. They start at once, past
/// `jobs_in_flight`, so the bound counts those running as well as those queued.
const MAX_CRITICAL: usize = 16;

struct Queued(Arc<Job>);

impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        self.0.seq == o.0.seq
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    /// Higher priority first, then first come.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0
            .priority
            .cmp(&o.0.priority)
            .then_with(|| o.0.seq.cmp(&self.0.seq))
    }
}

#[derive(Default)]
struct Table {
    jobs: HashMap<String, Arc<Job>>,
    /// (request_id, inputs digest) → job id.
    by_request: HashMap<(String, InputsDigest), String>,
    queue: BinaryHeap<Queued>,
    running: usize,
    /// Of `running`, CRITICAL jobs.
    running_critical: usize,
    finished: VecDeque<String>,
    seq: u64,
    draining: bool,
}

/// Counts for GetStatus and the metrics.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// Per kind: (queued, running).
    pub per_kind: Vec<(ProofKind, u32, u32)>,
    /// Per circuit: running jobs.
    pub circuits_in_use: HashMap<Circuit, u32>,
    pub running: usize,
    pub queued: usize,
}

pub struct Jobs {
    table: Mutex<Table>,
    prover: Arc<FilecoinProver>,
    limits: Limits,
    metrics: Arc<Metrics>,
    params: Mutex<HashMap<Circuit, CircuitParams>>,
    pub completed: AtomicU64,
    pub failed: AtomicU64,
    /// Tells a process-unique job id from one of an earlier run.
    epoch: u64,
    /// Where running jobs await the engine: the runtime the table was made on.
    runtime: tokio::runtime::Handle,
}

impl Jobs {
    /// A job table whose jobs run on the current tokio runtime (panics outside one).
    pub fn new(prover: Arc<FilecoinProver>, limits: Limits, metrics: Arc<Metrics>) -> Arc<Jobs> {
        let epoch = next_epoch();
        Arc::new(Jobs {
            runtime: tokio::runtime::Handle::current(),
            table: Mutex::new(Table::default()),
            prover,
            limits,
            metrics,
            params: Mutex::new(HashMap::new()),
            completed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            epoch,
        })
    }

    pub fn prover(&self) -> &Arc<FilecoinProver> {
        &self.prover
    }

    /// Queues a request, or returns the job its `request_id` already names; with
    /// the job's position in the queue (0: next, or already running). With
    /// `unavailable`, no new job is queued (a known request still finds its job).
    pub fn submit(
        self: &Arc<Self>,
        request_id: String,
        decoded: Decoded,
        unavailable: Option<String>,
    ) -> Result<(Arc<Job>, u32), Refused> {
        let mut t = self.table.lock().unwrap();
        if t.draining {
            return Err(Refused::Draining);
        }
        let key = (request_id.clone(), decoded.digest);
        if !request_id.is_empty() {
            let existing = t.by_request.get(&key).and_then(|id| t.jobs.get(id));
            if let Some(job) = existing {
                let reusable = match job.phase() {
                    Phase::Done(f) => matches!(f.outcome, Outcome::Completed(_)),
                    _ => true,
                };
                if reusable {
                    let job = job.clone();
                    let pos = position(&t, &job);
                    log::info!(
                        "job={} request_id={:?} resubmitted with the same inputs: the same job",
                        job.id,
                        request_id
                    );
                    return Ok((job, pos));
                }
            }
            let other = t
                .jobs
                .values()
                .filter(|j| j.request_id == request_id && j.digest != decoded.digest)
                .map(|j| j.id.as_str())
                .min();
            if let Some(other) = other {
                log::info!(
                    "request_id={:?} comes again with other inputs than job={other}: a new job proves them",
                    crate::decode::abbreviate(&request_id)
                );
            }
        }
        if let Some(why) = unavailable {
            return Err(Refused::Unavailable(why));
        }
        let critical = decoded.priority == Priority::Critical;
        let queued_critical = t
            .queue
            .iter()
            .filter(|q| q.0.priority == Priority::Critical)
            .count();
        let queued_other = t.queue.len() - queued_critical;
        let critical_in_flight = queued_critical + t.running_critical;
        if critical && critical_in_flight >= MAX_CRITICAL {
            return Err(Refused::Full(format!(
                "{critical_in_flight} CRITICAL jobs are already queued or running (at most {MAX_CRITICAL}); retry later"
            )));
        }
        if !critical && queued_other >= self.limits.max_queued {
            return Err(Refused::Full(format!(
                "the queue is full: {queued_other} jobs wait (daemon.max_queued = {}); retry later",
                self.limits.max_queued
            )));
        }
        t.seq += 1;
        let seq = t.seq;
        let (phase, _) = watch::channel(Phase::Queued);
        let job = Arc::new(Job {
            id: format!("cg-{:x}-{seq}", self.epoch),
            request_id: request_id.clone(),
            digest: decoded.digest,
            kind: decoded.kind,
            priority: decoded.priority,
            circuit: decoded.circuit,
            submitted: Instant::now(),
            request: Mutex::new(Some(decoded.request)),
            cancel: Mutex::new(Cancel::default()),
            phase,
            seq,
        });
        t.jobs.insert(job.id.clone(), job.clone());
        if !request_id.is_empty() {
            t.by_request.insert(key, job.id.clone());
        }
        t.queue.push(Queued(job.clone()));
        let pos = position(&t, &job);
        log::info!(
            "job={} request_id={:?} kind={} priority={:?} queued at {pos}",
            job.id,
            job.request_id,
            crate::decode::queue_name(job.kind),
            job.priority
        );
        self.pump(&mut t);
        drop(t);
        self.refresh_gauges();
        Ok((job, pos))
    }

    pub fn get(&self, job_id: &str) -> Option<Arc<Job>> {
        self.table.lock().unwrap().jobs.get(job_id).cloned()
    }

    /// Cancels a job: a queued one is dropped at once, a running one is stopped in
    /// the engine (its memory freed). Some(true) if it was running; None if unknown.
    pub fn cancel(self: &Arc<Self>, job_id: &str) -> Option<bool> {
        let mut t = self.table.lock().unwrap();
        let job = t.jobs.get(job_id)?.clone();
        match job.phase() {
            Phase::Done(_) => Some(false),
            Phase::Queued => {
                let q = std::mem::take(&mut t.queue);
                t.queue = q.into_iter().filter(|q| q.0.id != job.id).collect();
                job.request.lock().unwrap().take();
                self.finish_locked(&mut t, &job, Outcome::Cancelled, Times::default());
                drop(t);
                self.refresh_gauges();
                log::info!("job={} cancelled while queued", job.id);
                Some(false)
            }
            Phase::Running => {
                drop(t);
                let mut cancel = job.cancel.lock().unwrap();
                cancel.asked = true;
                if let Some(engine) = &cancel.engine {
                    engine.cancel();
                }
                log::info!("job={} cancelled while running", job.id);
                Some(true)
            }
        }
    }

    /// Stops taking jobs: new submissions are refused and queued jobs cancelled;
    /// running ones go on.
    pub fn drain(self: &Arc<Self>) {
        let mut t = self.table.lock().unwrap();
        t.draining = true;
        let queued: Vec<_> = std::mem::take(&mut t.queue).into_iter().collect();
        for q in queued {
            q.0.request.lock().unwrap().take();
            self.finish_locked(&mut t, &q.0, Outcome::Cancelled, Times::default());
        }
        drop(t);
        self.refresh_gauges();
    }

    /// Cancels every running job (the grace period is over).
    pub fn cancel_running(self: &Arc<Self>) {
        let running: Vec<_> = {
            let t = self.table.lock().unwrap();
            t.jobs
                .values()
                .filter(|j| matches!(j.phase(), Phase::Running))
                .map(|j| j.id.clone())
                .collect()
        };
        for id in running {
            self.cancel(&id);
        }
    }

    /// Whether the daemon stopped taking jobs (it is shutting down).
    pub fn is_draining(&self) -> bool {
        self.table.lock().unwrap().draining
    }

    pub fn running(&self) -> usize {
        self.table.lock().unwrap().running
    }

    pub fn counts(&self) -> Counts {
        let t = self.table.lock().unwrap();
        let mut per_kind: Vec<(ProofKind, u32, u32)> =
            ProofKind::ALL.iter().map(|&k| (k, 0, 0)).collect();
        let mut circuits_in_use = HashMap::new();
        for j in t.jobs.values() {
            let slot = per_kind.iter_mut().find(|(k, _, _)| *k == j.kind).unwrap();
            match j.phase() {
                Phase::Queued => slot.1 += 1,
                Phase::Running => {
                    slot.2 += 1;
                    if let Some(c) = j.circuit {
                        *circuits_in_use.entry(c).or_insert(0) += 1;
                    }
                }
                Phase::Done(_) => {}
            }
        }
        Counts {
            per_kind,
            circuits_in_use,
            running: t.running,
            queued: t.queue.len(),
        }
    }

    /// filecoin-proofs' parameter set of a circuit (its cache id takes hashing the
    /// public parameters: computed once).
    pub fn circuit_params(&self, c: Circuit) -> Result<CircuitParams, String> {
        if let Some(p) = self.params.lock().unwrap().get(&c) {
            return Ok(p.clone());
        }
        let p = c.params()?;
        self.params.lock().unwrap().insert(c, p.clone());
        Ok(p)
    }

    /// The circuit of a loaded parameter set, by filecoin-proofs' cache id, among
    /// the circuits this daemon has named.
    pub fn circuit_of(&self, cache_id: &str) -> Option<Circuit> {
        let params = self.params.lock().unwrap();
        params
            .iter()
            .find(|(_, p)| p.cache_id == cache_id)
            .map(|(c, _)| *c)
    }

    /// Starts queued jobs while there is room (CRITICAL ones always).
    fn pump(self: &Arc<Self>, t: &mut Table) {
        loop {
            let Some(top) = t.queue.peek() else { return };
            let critical = top.0.priority == Priority::Critical;
            if !critical && t.running >= self.limits.jobs_in_flight {
                return;
            }
            let job = t.queue.pop().unwrap().0;
            let Some(request) = job.request.lock().unwrap().take() else {
                continue;
            };
            t.running += 1;
            if critical {
                t.running_critical += 1;
            }
            job.phase.send_replace(Phase::Running);
            let me = self.clone();
            self.runtime.spawn(me.run(job.clone(), request));
        }
    }

    async fn run(self: Arc<Self>, job: Arc<Job>, request: Request) {
        let started = Instant::now();
        let daemon_wait = started - job.submitted;
        let stages = self.prover.engine().watch(&job.id);
        if let Some(c) = job.circuit {
            // Names the set for GetStatus before it is loaded.
            let _ = self.circuit_params(c);
        }
        let result = self.prove(&job, request).await;
        let units = match &result {
            Ok(Ok(o)) => o.partitions.max(1),
            _ => 1,
        } as f64;
        let secs = Duration::from_secs_f64;
        let mut times = Times {
            queue_wait: daemon_wait + secs(stages.seconds("queue_synthesis") / units),
            srs_load: Duration::ZERO,
            synthesis: secs(stages.seconds("synthesis")),
            gpu: secs(stages.seconds("g1_side")),
            total: job.submitted.elapsed(),
        };
        let cancelled = job.cancel.lock().unwrap().asked;
        let outcome = match result {
            Ok(Ok(out)) => {
                times.srs_load = out.timings.params_load;
                times.synthesis += out.timings.prepare;
                Outcome::Completed(out.proof)
            }
            Ok(Err(_)) if cancelled => Outcome::Cancelled,
            Ok(Err(e)) => Outcome::Failed(e.to_string()),
            Err(panic) => Outcome::Failed(panic_reply(job.kind, panic.as_ref())),
        };
        let mut t = self.table.lock().unwrap();
        t.running -= 1;
        if job.priority == Priority::Critical {
            t.running_critical -= 1;
        }
        self.finish_locked(&mut t, &job, outcome, times);
        self.pump(&mut t);
        drop(t);
        self.refresh_gauges();
    }

    /// Proves a job's request: its circuits are built and handed to the engine
    /// on a blocking thread (parameters may be read meanwhile), then the
    /// engine's future is awaited here. A panic comes back as the outer Err.
    async fn prove(
        &self,
        job: &Arc<Job>,
        request: Request,
    ) -> Result<crossgroth_filecoin::Result<Output>, Box<dyn std::any::Any + Send>> {
        let prover = self.prover.clone();
        let (id, priority) = (job.id.clone(), job.priority);
        let submitted =
            tokio::task::spawn_blocking(move || prover.submit(&id, &request, priority)).await;
        let submitted = match submitted {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Ok(Err(e)),
            Err(e) if e.is_panic() => return Err(e.into_panic()),
            Err(e) => {
                return Ok(Err(crossgroth_filecoin::FilecoinError::Proving(
                    crossgroth::Error::Invalid(format!("the job's task ended: {e}")),
                )))
            }
        };
        {
            let mut cancel = job.cancel.lock().unwrap();
            let engine = submitted.canceller();
            if cancel.asked {
                engine.cancel();
            }
            cancel.engine = Some(engine);
        }
        std::panic::AssertUnwindSafe(submitted.finish())
            .catch_unwind()
            .await
    }

    fn finish_locked(&self, t: &mut Table, job: &Arc<Job>, outcome: Outcome, times: Times) {
        let status = match &outcome {
            Outcome::Completed(p) => {
                self.completed.fetch_add(1, Ordering::Relaxed);
                log::info!(
                    "job={} kind={} completed: {} bytes queue_ms={} srs_ms={} synthesis_ms={} gpu_ms={} total_ms={}",
                    job.id,
                    crate::decode::queue_name(job.kind),
                    p.len(),
                    times.queue_wait.as_millis(),
                    times.srs_load.as_millis(),
                    times.synthesis.as_millis(),
                    times.gpu.as_millis(),
                    times.total.as_millis()
                );
                "completed"
            }
            Outcome::Failed(e) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                log::warn!(
                    "job={} kind={} failed: {e}",
                    job.id,
                    crate::decode::queue_name(job.kind)
                );
                "failed"
            }
            Outcome::Cancelled => "cancelled",
        };
        self.metrics.finished(job.kind, status, &times.stages());
        job.phase.send_replace(Phase::Done(Arc::new(Finished {
            outcome,
            times,
            at: Instant::now(),
        })));
        t.finished.push_back(job.id.clone());
        self.prune(t);
    }

    /// Forgets finished jobs past their keeping time, and the oldest beyond the count.
    fn prune(&self, t: &mut Table) {
        let now = Instant::now();
        while let Some(id) = t.finished.front().cloned() {
            let old = t.jobs.get(&id).is_none_or(|j| match j.phase() {
                Phase::Done(f) => now.duration_since(f.at) > self.limits.keep_finished,
                _ => true,
            });
            if !old && t.finished.len() <= self.limits.max_finished {
                break;
            }
            t.finished.pop_front();
            if let Some(j) = t.jobs.remove(&id) {
                let key = (j.request_id.clone(), j.digest);
                if t.by_request.get(&key) == Some(&j.id) {
                    t.by_request.remove(&key);
                }
            }
        }
    }

    fn refresh_gauges(&self) {
        let c = self.counts();
        for (kind, queued, running) in c.per_kind {
            self.metrics.queue(kind, queued, running);
        }
    }
}

/// A job-id epoch: microseconds since 1970, strictly increasing in this process
/// (two tables created in the same microsecond, or a clock stepped back, still
/// get different ones).
fn next_epoch() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let prev = LAST
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
            Some(now.max(last + 1))
        })
        .unwrap();
    now.max(prev + 1)
}

/// Jobs ahead of `job` in the queue (0 when it runs).
fn position(t: &Table, job: &Arc<Job>) -> u32 {
    if !matches!(job.phase(), Phase::Queued) {
        return 0;
    }
    let me = Queued(job.clone());
    t.queue.iter().filter(|q| **q > me).count() as u32
}

/// The one-line reply to a request that made the prover panic. Every input is
/// checked before circuits are built, so what still panics is the circuit code
/// or filecoin-proofs meeting an input they do not expect: the request is
/// refused as such, with the panic's first line for whoever reads the log.
fn panic_reply(kind: ProofKind, panic: &(dyn std::any::Any + Send)) -> String {
    let first = crossgroth_filecoin::panic_first_line(panic).unwrap_or("no message");
    let first: String = first.chars().take(160).collect();
    format!(
        "the {} request's inputs (its vanilla proofs or C1 output) are not what its circuit expects: \
         building or proving it stopped on {first:?}",
        crate::decode::queue_name(kind)
    )
}

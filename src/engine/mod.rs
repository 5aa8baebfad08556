//! The proving engine: many proofs back to back, pipelined, within a memory budget.
//!
//! ```text
//! submit ─▶ synthesis workers (CPU, bounded pool, admitted by the memory budget)
//!        ─▶ device workers, one per backend device: the critical path (H, G1 MSMs)
//!        ─▶ finalizers: B_G2 (CPU or device), assembly, batch verification, future
//!   every buffer freed on the way ─▶ deallocator threads (bounded queue) ─▶ budget credit
//! ```
//!
//! What a production prover's out-of-memory hunt taught, as mechanisms: each unit of work owns
//! (Arc) everything it still reads; a, b, c are handed to the deallocator as soon as
//! H exists and the assignment after its last MSM; every queue is bounded; a unit's
//! memory charge travels with it from admission to its last free, so no permit is
//! released before the next stage has the work; admission reads measured resident
//! memory as well as the charges, so estimates that undercount cannot overrun.

mod job;
mod memory;
mod queue;
mod stats;
mod workers;

pub use job::{Job, JobHandle, Priority, Synthesizer};
pub use memory::{resident_anon_bytes, Budget, MemoryState};
pub use stats::{DeviceSummary, RunSummary, StageSummary};

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{bounded, Sender};
use futures::channel::oneshot;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::groth16::placement::{DevicePlacement, PlacementConfig};
use crate::groth16::{Parameters, PreparedParams};
use crate::synthesis::Assignment;
use job::{JobResults, JobState};
use memory::ResidentSamples;
use stats::Stats;
use workers::{DeviceTask, Disposal, FinalTask, SynthTask};

/// How an engine runs.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Circuits synthesized at once (CPU threads doing synthesis).
    pub synthesis_workers: usize,
    /// Threads running B_G2, assembly and verification, highest priority first
    /// (two by default, so that a CRITICAL proof's B_G2 does not wait for a long
    /// one already running).
    pub finalizer_workers: usize,
    /// Upper bound for the process's anonymous resident memory, in bytes.
    pub memory_budget: usize,
    /// Synthesized circuits that may wait for a device, per device.
    pub device_queue_per_device: usize,
    /// Threads freeing buffers.
    pub deallocators: usize,
    /// Where parameter bases live on each device: the share of its memory
    /// they may fill, and whether G1 bases are kept as tables of precomputed
    /// copies.
    pub placement: PlacementConfig,
    /// Set glibc's mmap threshold to 1 MiB for the whole process (default on), so
    /// freed buffers leave resident memory at once instead of staying in arenas.
    pub tune_allocator: bool,
    /// Whether what the process holds beside its jobs can be freed on demand (a
    /// daemon evicting idle parameter sets under pressure). Off, a circuit that
    /// cannot fit beside it is refused at submission; on, it is admitted alone
    /// and the eviction makes room.
    pub held_memory_evictable: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        EngineConfig {
            synthesis_workers: cores.max(1),
            finalizer_workers: 2,
            memory_budget: default_budget(),
            device_queue_per_device: 2,
            deallocators: 2,
            placement: PlacementConfig::default(),
            tune_allocator: true,
            held_memory_evictable: false,
        }
    }
}

/// 80% of the memory this process could hold when the engine starts: what is
/// available plus what it already holds (the budget bounds the process's whole
/// resident memory, parameters loaded before the engine included). 4 GiB if unknown.
pub fn default_budget() -> usize {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<usize>().ok())
    });
    available.map_or(4 << 30, |kb| {
        (kb * 1024 + resident_anon_bytes().unwrap_or(0)) / 10 * 8
    })
}

/// A snapshot for operators: queue depths, memory, per-stage counters.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EngineStatus {
    pub jobs_in_flight: usize,
    pub synthesis_queue: usize,
    pub device_queue: usize,
    pub finalize_queue: usize,
    pub dealloc_queue: usize,
    pub memory: MemoryState,
    pub memory_budget: usize,
    pub proofs_done: usize,
    pub stage_counts: HashMap<String, usize>,
    /// Per device: backend, device, busy seconds so far, circuits done.
    pub devices: Vec<DeviceSummary>,
    /// Per device: true once taken out of service after repeated failures.
    pub out_of_service: Vec<bool>,
    /// Per device: the job whose circuit is on it now.
    pub on_device: Vec<Option<String>>,
}

/// State the synthesis workers and the budget share, under one lock so that waiting
/// for a task and waiting for memory are one wait with no lost wakeup.
struct Admission {
    budget: Budget,
    mem: MemoryState,
    queue: BinaryHeap<SynthTask>,
    seq: u64,
    /// Bytes per circuit, by parameter set and whether its circuits are
    /// witness-only, calibrated from measured assignments.
    estimates: HashMap<(usize, bool), usize>,
}

impl Admission {
    /// Bytes one circuit of `job` is expected to need: calibrated from measured
    /// runs once there are some, else its witness for a witness-only job, else
    /// estimated from the parameters' shape.
    fn estimate(&self, job: &JobState, backends: &[Arc<dyn Backend>]) -> usize {
        let key = (
            Arc::as_ptr(&job.params) as usize,
            job.witness_bytes.is_some(),
        );
        self.estimates
            .get(&key)
            .copied()
            .unwrap_or_else(|| match job.witness_bytes {
                Some(bytes) => bytes,
                None => {
                    initial_estimate(&job.params) + h_host_bytes(backends, job.params.h.len() + 1)
                }
            })
    }
}

/// Host bytes kept for the H vectors `backends` hand back for witness-only
/// circuits of `rows` constraints: one H (m − 1 coefficients) a device.
fn h_reserve_bytes(backends: &[Arc<dyn Backend>], rows: usize) -> usize {
    rows.max(1).next_power_of_two() * std::mem::size_of::<crate::Scalar>() * backends.len()
}

/// Whether every device computes a, b and c of `shape` from a witness (the
/// engine then keeps its assignments witness-only until a device takes them).
fn abc_on_devices(backends: &[Arc<dyn Backend>], shape: &crate::synthesis::RecordedShape) -> bool {
    backends.iter().all(|b| b.matrices_bytes(shape).is_some())
}

/// Host bytes the H computation of a circuit of `rows` constraints adds, on
/// whichever of `backends` takes it.
fn h_host_bytes(backends: &[Arc<dyn Backend>], rows: usize) -> usize {
    backends
        .iter()
        .map(|b| b.h_host_bytes(rows))
        .max()
        .unwrap_or(0)
}

pub(crate) struct Shared {
    config: EngineConfig,
    backends: Vec<Arc<dyn Backend>>,
    admission: Mutex<Admission>,
    admission_cv: Condvar,
    device_queue: Mutex<BinaryHeap<DeviceTask>>,
    device_cv: Condvar,
    final_queue: queue::PriorityQueue<FinalTask>,
    dealloc_tx: Sender<Disposal>,
    jobs: Mutex<HashMap<String, Arc<JobState>>>,
    /// Per device: parameter sets placed on it. The lock is held while
    /// preparing, so a set is uploaded once even when the device worker and a
    /// finalizer ask for it together.
    prepared: Vec<Mutex<DevicePlacement>>,
    stats: Mutex<Stats>,
    resident: Mutex<ResidentSamples>,
    stop: AtomicBool,
    idle_cv: Condvar,
    /// Devices still in service.
    live_devices: AtomicUsize,
    /// Order of arrival in the device queue.
    device_seq: std::sync::atomic::AtomicU64,
    /// Per device: taken out of service after repeated failures.
    retired: Mutex<Vec<bool>>,
    /// Per device: the job whose critical path it runs now.
    on_device: Mutex<Vec<Option<String>>>,
    /// Device workers still warming their backend up (see Engine::wait_ready).
    warming: Mutex<usize>,
    warmed_cv: Condvar,
    /// Per job id: where a caller that asked (Engine::watch) collects its stage times.
    watches: Mutex<HashMap<String, Weak<JobStages>>>,
}

/// Seconds one job spent in each engine stage ("queue_synthesis", "synthesis",
/// "queue_device", "g1_side", "b_g2", "assemble", "verify"), summed over its circuits.
#[derive(Debug, Default)]
pub struct JobStages {
    seconds: Mutex<HashMap<String, f64>>,
}

impl JobStages {
    /// Seconds spent in `stage` so far (0 when none).
    pub fn seconds(&self, stage: &str) -> f64 {
        self.seconds
            .lock()
            .unwrap()
            .get(stage)
            .copied()
            .unwrap_or(0.0)
    }

    pub fn snapshot(&self) -> HashMap<String, f64> {
        self.seconds.lock().unwrap().clone()
    }
}

/// The charge one circuit holds against the budget, from admission to its last free.
/// Freed buffers credit it; dropping it credits what is left.
pub(crate) struct Charge {
    shared: Arc<Shared>,
    remaining: AtomicUsize,
}

impl Charge {
    fn credit(&self, bytes: usize) {
        let mut cur = self.remaining.load(Ordering::Acquire);
        loop {
            let take = bytes.min(cur);
            match self.remaining.compare_exchange(
                cur,
                cur - take,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.shared.release(take, false);
                    return;
                }
                Err(now) => cur = now,
            }
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        let rest = *self.remaining.get_mut();
        self.shared.release(rest, true);
    }
}

impl Shared {
    fn release(&self, bytes: usize, unit_done: bool) {
        let mut adm = self.admission.lock().unwrap();
        adm.mem.charged -= bytes.min(adm.mem.charged);
        if unit_done {
            adm.mem.units_in_flight -= 1;
        }
        drop(adm);
        self.admission_cv.notify_all();
    }

    /// Hands a spent buffer to the deallocators; its bytes are credited once freed.
    /// Charges `bytes` a circuit allocated beyond its charge, so that the
    /// budget stays truthful.
    fn charge_growth(&self, charge: &Charge, bytes: usize) {
        if bytes > 0 {
            self.admission.lock().unwrap().mem.charged += bytes;
            charge.remaining.fetch_add(bytes, Ordering::AcqRel);
        }
    }

    fn dispose<T: Send + 'static>(&self, item: T, bytes: usize, charge: &Arc<Charge>) {
        let disposal = Disposal {
            item: Box::new(item),
            bytes,
            charge: charge.clone(),
        };
        if let Err(e) = self.dealloc_tx.send(disposal) {
            // Only after shutdown: free here.
            drop(e.into_inner());
        }
    }

    /// Takes a device that keeps failing out of service. Its work goes to the other
    /// devices; when none is left, the circuits waiting for one fail.
    fn retire_device(&self, d: usize, reason: &str) {
        log::error!(
            "device {d} ({}) {reason}: taken out of service (restart the process to use \
             it again: some device errors, such as a CUDA kernel fault, spoil the device \
             for the whole process)",
            self.backends[d].device(),
        );
        self.retired.lock().unwrap()[d] = true;
        let mut queue = self.device_queue.lock().unwrap();
        if self.live_devices.fetch_sub(1, Ordering::AcqRel) == 1 {
            let waiting: Vec<_> = std::mem::take(&mut *queue).into_vec();
            drop(queue);
            for t in waiting {
                self.fail(
                    &t.job,
                    Error::Invalid("every device of the engine is out of service".into()),
                );
                self.dispose_assignment(t.asg, &t.charge);
            }
        } else {
            drop(queue);
        }
        self.device_cv.notify_all();
    }

    /// Hands a whole assignment to the deallocators.
    fn dispose_assignment(&self, asg: Assignment, charge: &Arc<Charge>) {
        let bytes = assignment_bytes(&asg);
        self.dispose(asg, bytes, charge);
    }

    fn record(&self, stage: &str, job: &str, unit: usize, began: Instant) {
        let secs = began.elapsed().as_secs_f64();
        crate::groth16::steps::log_stage(job, unit, stage, secs);
        self.stats.lock().unwrap().record(stage, began, secs);
        let watch = self
            .watches
            .lock()
            .unwrap()
            .get(job)
            .and_then(Weak::upgrade);
        if let Some(w) = watch {
            *w.seconds
                .lock()
                .unwrap()
                .entry(stage.to_string())
                .or_default() += secs;
        }
    }

    fn prepared(&self, device: usize, params: &Arc<Parameters>) -> Result<Arc<PreparedParams>> {
        let prepared = self.prepared[device].lock().unwrap().prepared(
            self.backends[device].as_ref(),
            params,
            &self.config.placement,
        )?;
        if self.config.placement.release_host_copies && params.h.is_on_host() {
            self.release_host_copies(params);
        }
        Ok(prepared)
    }

    /// Frees the host copy of `params`' G1 queries once every device holds
    /// them alone, and takes what that frees off the budget's baseline.
    fn release_host_copies(&self, params: &Arc<Parameters>) {
        let everywhere = self
            .prepared
            .iter()
            .all(|p| p.lock().unwrap().holds_g1_alone(params));
        if !everywhere {
            return;
        }
        let freed: usize = params.g1_queries().iter().map(|q| q.release_host()).sum();
        log::info!(
            "host copies of the parameters' H, L, A and B_G1 released ({}): every device holds them",
            bytesize::ByteSize(freed as u64)
        );
        let mut adm = self.admission.lock().unwrap();
        adm.mem.baseline = adm.mem.baseline.saturating_sub(freed);
        drop(adm);
        self.admission_cv.notify_all();
    }

    /// `shape`'s constraint matrices on a device, placed on first use (None:
    /// its a, b and c are computed on the host).
    fn matrices(
        &self,
        device: usize,
        shape: &Arc<crate::synthesis::RecordedShape>,
        params: &Parameters,
    ) -> Option<Arc<crate::backend::DeviceMatrices>> {
        self.prepared[device].lock().unwrap().matrices(
            self.backends[device].as_ref(),
            shape,
            params,
            &self.config.placement,
        )
    }

    /// Drops what is prepared on a device after it failed: if the failure rebuilt
    /// its context, the old bases are gone, and the next circuit prepares again.
    fn forget_prepared(&self, device: usize) {
        self.prepared[device].lock().unwrap().forget();
    }

    /// Resolves a job with an error. The id is released first, so whoever the
    /// resolution wakes may reuse it at once.
    fn fail(&self, job: &JobState, e: Error) {
        self.forget(job);
        if job.resolve(Err(e)) {
            self.stats.lock().unwrap().jobs_failed += 1;
        }
    }

    /// Releases the job's id — only if it still names this job: a failed job's
    /// late units must not release a new job that reused the id.
    fn forget(&self, job: &JobState) {
        let mut jobs = self.jobs.lock().unwrap();
        if jobs
            .get(&job.id)
            .is_some_and(|j| std::ptr::eq(Arc::as_ptr(j), job))
        {
            jobs.remove(&job.id);
        }
        if jobs.is_empty() {
            self.idle_cv.notify_all();
        }
    }

    pub(crate) fn cancel(&self, id: &str) -> bool {
        let job = self.jobs.lock().unwrap().get(id).cloned();
        match job {
            Some(job) => {
                self.fail(&job, Error::Cancelled(id.to_string()));
                // Drop its queued circuits now: they hold no memory yet.
                let mut adm = self.admission.lock().unwrap();
                let queue = std::mem::take(&mut adm.queue);
                adm.queue = queue
                    .into_iter()
                    .filter(|t| !Arc::ptr_eq(&t.job, &job))
                    .collect();
                drop(adm);
                self.admission_cv.notify_all();
                true
            }
            None => false,
        }
    }
}

/// Estimated peak bytes of one circuit of `params`' shape before its H
/// computation: a, b, c of at most the domain's length each, and the variables
/// (twice: vectors grow by doubling).
fn initial_estimate(params: &Parameters) -> usize {
    let m = params.h.len() + 1;
    let vars = params.vk.ic.len() + params.l.len();
    (3 * m + 2 * vars) * std::mem::size_of::<crate::Scalar>()
}

pub struct Engine {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Engine {
    /// Starts an engine with one device worker per backend.
    pub fn start(config: EngineConfig, backends: Vec<Arc<dyn Backend>>) -> Result<Engine> {
        if backends.is_empty() {
            return Err(Error::Invalid(
                "an engine needs at least one backend".into(),
            ));
        }
        if config.synthesis_workers == 0
            || config.finalizer_workers == 0
            || config.deallocators == 0
        {
            return Err(Error::Invalid("worker counts must be at least 1".into()));
        }
        if config.tune_allocator {
            workers::tune_allocator();
        }
        let (dealloc_tx, dealloc_rx) = bounded(64);
        let shared = Arc::new(Shared {
            admission: Mutex::new(Admission {
                budget: Budget::new(config.memory_budget),
                mem: MemoryState::default(),
                queue: BinaryHeap::new(),
                seq: 0,
                estimates: HashMap::new(),
            }),
            admission_cv: Condvar::new(),
            device_queue: Mutex::new(BinaryHeap::new()),
            device_cv: Condvar::new(),
            final_queue: queue::PriorityQueue::new(backends.len() * 2),
            dealloc_tx,
            jobs: Mutex::new(HashMap::new()),
            prepared: (0..backends.len())
                .map(|_| Mutex::new(DevicePlacement::default()))
                .collect(),
            stats: Mutex::new(Stats::new(backends.len())),
            resident: Mutex::new(ResidentSamples::default()),
            stop: AtomicBool::new(false),
            idle_cv: Condvar::new(),
            live_devices: AtomicUsize::new(backends.len()),
            device_seq: std::sync::atomic::AtomicU64::new(0),
            retired: Mutex::new(vec![false; backends.len()]),
            on_device: Mutex::new(vec![None; backends.len()]),
            warming: Mutex::new(backends.len()),
            warmed_cv: Condvar::new(),
            watches: Mutex::new(HashMap::new()),
            backends,
            config,
        });
        let mut threads = vec![];
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name)
                .spawn(f)
                .map_err(|e| Error::Invalid(format!("cannot start an engine thread: {e}")))
        };
        for i in 0..shared.config.synthesis_workers {
            let s = shared.clone();
            threads.push(spawn(
                format!("synthesis-{i}"),
                Box::new(move || workers::synthesis(s)),
            )?);
        }
        for d in 0..shared.backends.len() {
            let s = shared.clone();
            threads.push(spawn(
                format!("device-{d}"),
                Box::new(move || workers::device(s, d)),
            )?);
        }
        for i in 0..shared.config.finalizer_workers {
            let s = shared.clone();
            threads.push(spawn(
                format!("finalize-{i}"),
                Box::new(move || workers::finalize(s)),
            )?);
        }
        for i in 0..shared.config.deallocators {
            let (s, rx) = (shared.clone(), dealloc_rx.clone());
            threads.push(spawn(
                format!("dealloc-{i}"),
                Box::new(move || workers::dealloc(s, rx)),
            )?);
        }
        let s = shared.clone();
        threads.push(spawn(
            "memory-sampler".into(),
            Box::new(move || workers::sample(s)),
        )?);
        Ok(Engine { shared, threads })
    }

    /// Submits a job. Fails at once for a duplicate id, an empty job, mismatched
    /// randomness, or a circuit larger than the whole memory budget.
    pub fn submit(&self, mut job: Job) -> Result<JobHandle> {
        if job.units.is_empty() {
            return Err(Error::EmptyBatch);
        }
        let (r, s) = job.take_randomness()?;
        let (tx, rx) = oneshot::channel();
        let n = job.units.len();
        // Witness-only circuits hand their H back through a per-device reserve.
        let witness_only = job
            .shape
            .as_ref()
            .filter(|shape| abc_on_devices(&self.shared.backends, shape));
        let h_reserve = witness_only.map_or(0, |shape| {
            h_reserve_bytes(&self.shared.backends, shape.num_rows())
        });
        let state = Arc::new(JobState {
            id: job.id.clone(),
            priority: job.priority,
            params: job.params.clone(),
            r,
            s,
            checked: job.checked,
            witness_bytes: witness_only.map(|shape| {
                (shape.num_inputs() + shape.num_aux()) * std::mem::size_of::<crate::Scalar>()
            }),
            cancelled: AtomicBool::new(false),
            results: Mutex::new(JobResults {
                proofs: vec![None; n],
                public_inputs: vec![vec![]; n],
                remaining: n,
                tx: Some(tx),
            }),
        });
        // A unit is always admitted when none is in flight, so a circuit that
        // cannot fit beside what the process already holds is refused here,
        // unless that can be evicted.
        let (needed, held) = {
            let adm = self.shared.admission.lock().unwrap();
            let held = if adm.mem.units_in_flight == 0 {
                memory::resident_anon_bytes().unwrap_or(0)
            } else {
                adm.mem.baseline
            };
            let reserve_growth = h_reserve.saturating_sub(adm.mem.device_reserve);
            (
                adm.estimate(&state, &self.shared.backends) + reserve_growth,
                held,
            )
        };
        let budget = self.shared.config.memory_budget;
        let counted = if self.shared.config.held_memory_evictable {
            0
        } else {
            held
        };
        if counted + needed > budget {
            return Err(Error::JobTooLarge {
                id: job.id,
                needed,
                held,
                budget,
            });
        }
        {
            let mut jobs = self.shared.jobs.lock().unwrap();
            if jobs.contains_key(&job.id) {
                return Err(Error::DuplicateJob(job.id));
            }
            jobs.insert(job.id.clone(), state.clone());
        }
        let mut adm = self.shared.admission.lock().unwrap();
        adm.mem.device_reserve = adm.mem.device_reserve.max(h_reserve);
        for (index, synth) in job.units.into_iter().enumerate() {
            adm.seq += 1;
            let seq = adm.seq;
            adm.queue.push(SynthTask {
                job: state.clone(),
                index,
                synth,
                seq,
                queued: Instant::now(),
            });
        }
        drop(adm);
        self.shared.admission_cv.notify_all();
        Ok(JobHandle {
            id: job.id,
            rx,
            engine: Arc::downgrade(&self.shared),
        })
    }

    /// Collects the stage times of the job `id` (submitted now or later) for as
    /// long as the caller holds the returned value.
    pub fn watch(&self, id: &str) -> Arc<JobStages> {
        let stages = Arc::new(JobStages::default());
        let mut watches = self.shared.watches.lock().unwrap();
        watches.retain(|_, w| w.strong_count() > 0);
        watches.insert(id.to_string(), Arc::downgrade(&stages));
        stages
    }

    /// Cancels a job by id; false if no such job is in flight.
    pub fn cancel(&self, id: &str) -> bool {
        self.shared.cancel(id)
    }

    /// Whether any device is still in service: one atomic read, for callers that
    /// ask on every request (a full [`Engine::status`] takes every lock).
    pub fn has_device_in_service(&self) -> bool {
        self.shared.live_devices.load(Ordering::Acquire) > 0
    }

    pub fn status(&self) -> EngineStatus {
        let adm = self.shared.admission.lock().unwrap();
        let stats = self.shared.stats.lock().unwrap();
        let stage_counts = [
            "synthesis",
            "g1_side",
            "b_g2",
            "assemble",
            "verify",
            "dealloc",
        ]
        .iter()
        .map(|s| (s.to_string(), stats.count(s)))
        .collect();
        let devices = self
            .shared
            .backends
            .iter()
            .zip(&stats.device_busy)
            .map(|(b, busy)| busy.summary(b.name().to_string(), b.device()))
            .collect();
        EngineStatus {
            devices,
            out_of_service: self.shared.retired.lock().unwrap().clone(),
            on_device: self.shared.on_device.lock().unwrap().clone(),
            jobs_in_flight: self.shared.jobs.lock().unwrap().len(),
            synthesis_queue: adm.queue.len(),
            device_queue: self.shared.device_queue.lock().unwrap().len(),
            finalize_queue: self.shared.final_queue.len(),
            dealloc_queue: self.shared.dealloc_tx.len(),
            memory: adm.mem,
            memory_budget: adm.budget.limit,
            proofs_done: stats.proofs,
            stage_counts,
        }
    }

    /// Blocks until every device worker has warmed its backend up (wgpu: built
    /// its pipelines, seconds on some drivers), successfully or not. Jobs may be
    /// submitted before; a device that is still warming up takes none, so a
    /// caller that wants the work spread over all devices from the first job,
    /// or a first proof's latency without the warm-up, waits here first.
    pub fn wait_ready(&self) {
        let mut warming = self.shared.warming.lock().unwrap();
        while *warming > 0 {
            warming = self.shared.warmed_cv.wait(warming).unwrap();
        }
    }

    /// Blocks until no job is in flight and every buffer has been freed.
    pub fn wait_idle(&self) {
        let mut jobs = self.shared.jobs.lock().unwrap();
        while !jobs.is_empty() {
            jobs = self.shared.idle_cv.wait(jobs).unwrap();
        }
        drop(jobs);
        let mut adm = self.shared.admission.lock().unwrap();
        while adm.mem.units_in_flight > 0 {
            adm = self.shared.admission_cv.wait(adm).unwrap();
        }
    }

    /// Per-stage percentiles, peak resident memory and device busy time so far.
    pub fn summary(&self) -> RunSummary {
        let resident = self.shared.resident.lock().unwrap();
        let devices = self
            .shared
            .backends
            .iter()
            .map(|b| (b.name().to_string(), b.device()))
            .collect();
        self.shared.stats.lock().unwrap().summary(
            resident.peak(),
            self.shared.config.memory_budget,
            resident.samples.clone(),
            devices,
        )
    }

    /// Waits for the jobs in flight, stops every thread and returns the summary.
    pub fn shutdown(mut self) -> RunSummary {
        self.wait_idle();
        let summary = self.summary();
        self.stop();
        summary
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.admission_cv.notify_all();
        self.shared.device_cv.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Jobs still queued resolve with an error when their senders drop.
        self.stop();
    }
}

/// Bytes an assignment's vectors hold that the engine charges.
fn assignment_bytes(asg: &Assignment) -> usize {
    asg.heap_bytes()
}

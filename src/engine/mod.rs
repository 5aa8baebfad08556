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

mod admission;
mod handle;
mod job;
mod memory;
mod queue;
mod resident;
mod shared;
mod stats;
mod tasks;
mod workers;

pub use handle::{JobCanceller, JobHandle};
pub use job::{Job, Priority, Synthesizer};
pub use memory::{process_status_bytes, resident_anon_bytes, Budget, BudgetUse, MemoryState};
pub use resident::{recording_estimate, Eviction, ResidentSet, SetCounts, SetLease};
pub use stats::{DeviceSummary, JobStages, RunSummary, StageSummary};

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::bounded;
use futures::channel::oneshot;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::groth16::placement::PlacementConfig;
use crate::groth16::Parameters;
use crate::synthesis::RecordedShape;
use admission::{abc_on_devices, h_reserve_bytes, Admission};
use job::{JobResults, JobState};
use memory::ResidentSamples;
use shared::{DeviceSlot, Shared};
use stats::Stats;
use tasks::SynthTask;

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
    /// Evict a resident parameter set that no job has used for this long when
    /// work waits for memory (a daemon serving several kinds). None: sets stay
    /// until evicted by name, and a circuit that cannot fit beside what the
    /// process holds is refused at submission.
    pub evict_idle_sets_after: Option<Duration>,
    /// How much each of the engine's records keeps: resident memory samples
    /// (one every 20 ms) and the waits for memory (their first ones), stage
    /// intervals for plots (their first ones), and each stage's times for its
    /// percentiles (the latest ones). Default 100,000: half an hour of a run's
    /// plot. A daemon keeps a few thousand, so that nothing it records grows
    /// with the proofs it has made.
    pub kept_samples: usize,
    /// Send the next circuit's witness (cuda) or its a, b and c (wgpu, once
    /// the current one's H exists) to its device while the current one's
    /// MSMs run there, so that the upload is off the device's critical path
    /// (default on). The device then holds them beside the current proof's
    /// buffers, which placement leaves room for.
    pub stage_witnesses: bool,
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
            evict_idle_sets_after: None,
            kept_samples: 100_000,
            stage_witnesses: true,
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
    /// The parameter sets kept between jobs.
    pub sets: Vec<ResidentSet>,
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
                running: Vec::new(),
            }),
            admission_cv: Condvar::new(),
            device_queue: Mutex::new(BinaryHeap::new()),
            device_cv: Condvar::new(),
            final_queue: queue::PriorityQueue::new(backends.len() * 2),
            dealloc_tx,
            jobs: Mutex::new(HashMap::new()),
            devices: (0..backends.len()).map(|_| DeviceSlot::default()).collect(),
            residency: resident::Residency::default(),
            stats: Mutex::new(Stats::new(backends.len(), config.kept_samples)),
            resident: Mutex::new(ResidentSamples::new(config.kept_samples)),
            stop: AtomicBool::new(false),
            idle_cv: Condvar::new(),
            live_devices: AtomicUsize::new(backends.len()),
            device_seq: std::sync::atomic::AtomicU64::new(0),
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
        // The H computations' host bytes come from a per-device reserve.
        let witness_only = job
            .shape
            .as_ref()
            .filter(|shape| abc_on_devices(&self.shared.backends, shape));
        let h_reserve = match witness_only {
            Some(shape) => h_reserve_bytes(&self.shared.backends, shape.num_rows(), true),
            None => h_reserve_bytes(&self.shared.backends, job.params.h.len() + 1, false),
        };
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
                adm.mem.baseline + adm.mem.sets
            };
            let reserve_growth = h_reserve.saturating_sub(adm.mem.device_reserve);
            (adm.estimate(&state) + reserve_growth, held)
        };
        let budget = self.shared.config.memory_budget;
        let counted = if self.shared.config.evict_idle_sets_after.is_some() {
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

    /// The parameter set `name` for a job, loaded by `load` unless it is
    /// resident: concurrent callers wait for one load, and `expected_bytes`
    /// (the file's size is a good guess) are reserved in the memory budget
    /// before it starts. The set stays resident while the lease lives, and
    /// after, until evicted. Also returns the time this call waited and loaded.
    pub fn acquire_set(
        &self,
        name: &str,
        expected_bytes: usize,
        load: impl FnOnce() -> Result<Parameters>,
    ) -> Result<(SetLease, Duration)> {
        self.shared
            .acquire_set(name, expected_bytes, || load().map(|p| (p, None)))
    }

    /// As [`Engine::acquire_set`], where `load` may also bring the set's
    /// recorded shape (read beside the parameters, from where it was kept):
    /// it is held with the set from the moment the set is resident, its device
    /// matrices are released with the set's bases, and `expected_bytes` should
    /// count it too unless the caller already holds it.
    pub fn acquire_set_with_shape(
        &self,
        name: &str,
        expected_bytes: usize,
        load: impl FnOnce() -> Result<(Parameters, Option<Arc<RecordedShape>>)>,
    ) -> Result<(SetLease, Duration)> {
        self.shared.acquire_set(name, expected_bytes, load)
    }

    /// Evicts the parameter set `name` and its recorded shape: its host copy
    /// and every device's bases and matrices are freed now when no job holds
    /// it, else when its last job ends (`deferred_users` says how many hold
    /// it; a job that needs it meanwhile keeps it). None if it is not resident.
    pub fn evict_set(&self, name: &str) -> Option<Eviction> {
        self.shared.evict_set(name, false)
    }

    /// Per device: (free, total) memory as its driver reports it (None where
    /// the backend has no device memory to report).
    pub fn device_memory(&self) -> Vec<Option<(usize, usize)>> {
        self.shared.backends.iter().map(|b| b.memory()).collect()
    }

    /// The parameter sets kept between jobs.
    pub fn resident_sets(&self) -> Vec<ResidentSet> {
        self.shared.resident_sets()
    }

    /// How often parameter sets were read, released, and read again after a
    /// device fault lost the only copy of their bases.
    pub fn set_counts(&self) -> SetCounts {
        self.shared.residency.sets.lock().unwrap().counts
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

    /// How many devices are still in service.
    pub fn devices_in_service(&self) -> usize {
        self.shared.live_devices.load(Ordering::Acquire)
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
            out_of_service: (self.shared.devices.iter())
                .map(|d| d.retired.load(Ordering::Acquire))
                .collect(),
            on_device: (self.shared.devices.iter())
                .map(|d| d.running.lock().unwrap().clone())
                .collect(),
            sets: self.shared.resident_sets(),
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
            resident.budget_use_while_waiting(self.shared.config.memory_budget),
            resident.at_peak(),
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

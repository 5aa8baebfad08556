//! What the engine's threads share: the configuration and backends, the queues,
//! the budget's admission state, placements, statistics, and the charge each
//! circuit holds against the budget until its last buffer is freed.

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Instant;

use crossbeam_channel::Sender;

use super::admission::Admission;
use super::job::JobState;
use super::memory::ResidentSamples;
use super::queue;
use super::resident::Residency;
use super::stats::{JobStages, Stats};
use super::tasks::{DeviceTask, Disposal, FinalTask};
use super::EngineConfig;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::groth16::placement::DevicePlacement;
use crate::groth16::{Parameters, PreparedParams};
use crate::synthesis::Assignment;

pub(crate) struct Shared {
    pub(super) config: EngineConfig,
    pub(super) backends: Vec<Arc<dyn Backend>>,
    pub(super) admission: Mutex<Admission>,
    pub(super) admission_cv: Condvar,
    pub(super) device_queue: Mutex<BinaryHeap<DeviceTask>>,
    pub(super) device_cv: Condvar,
    pub(super) final_queue: queue::PriorityQueue<FinalTask>,
    pub(super) dealloc_tx: Sender<Disposal>,
    pub(super) jobs: Mutex<HashMap<String, Arc<JobState>>>,
    /// Per device (as `backends`): what is placed on it and its state.
    pub(super) devices: Vec<DeviceSlot>,
    /// The parameter sets and shapes kept between jobs (resident.rs).
    pub(super) residency: Residency,
    pub(super) stats: Mutex<Stats>,
    pub(super) resident: Mutex<ResidentSamples>,
    pub(super) stop: AtomicBool,
    pub(super) idle_cv: Condvar,
    /// Devices still in service.
    pub(super) live_devices: AtomicUsize,
    /// Order of arrival in the device queue.
    pub(super) device_seq: std::sync::atomic::AtomicU64,
    /// Device workers still warming their backend up (see Engine::wait_ready).
    pub(super) warming: Mutex<usize>,
    pub(super) warmed_cv: Condvar,
    /// Per job id: where a caller that asked (Engine::watch) collects its stage times.
    pub(super) watches: Mutex<HashMap<String, Weak<JobStages>>>,
}

/// One device as the engine's threads share it.
#[derive(Default)]
pub(crate) struct DeviceSlot {
    /// Parameter sets and shapes placed on it. The lock is held while
    /// preparing, so a set is uploaded once even when the device worker and a
    /// finalizer ask for it together.
    pub(super) placement: Mutex<DevicePlacement>,
    /// Taken out of service after repeated failures.
    pub(super) retired: AtomicBool,
    /// The job whose critical path it runs now.
    pub(super) running: Mutex<Option<String>>,
}

/// The charge one circuit holds against the budget, from admission to its last free.
/// Freed buffers credit it; dropping it credits what is left.
pub(crate) struct Charge {
    pub(super) shared: Arc<Shared>,
    pub(super) remaining: AtomicUsize,
}

impl Charge {
    pub(super) fn credit(&self, bytes: usize) {
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
    pub(super) fn release(&self, bytes: usize, unit_done: bool) {
        let mut adm = self.admission.lock().unwrap();
        adm.mem.charged -= bytes.min(adm.mem.charged);
        if unit_done {
            adm.mem.units_in_flight -= 1;
        }
        drop(adm);
        self.admission_cv.notify_all();
    }

    /// Charges `bytes` a circuit allocated beyond its charge, so that the
    /// budget stays truthful.
    pub(super) fn charge_growth(&self, charge: &Charge, bytes: usize) {
        if bytes > 0 {
            self.admission.lock().unwrap().mem.charged += bytes;
            charge.remaining.fetch_add(bytes, Ordering::AcqRel);
        }
    }

    /// Hands a spent buffer to the deallocators; its bytes are credited once freed.
    pub(super) fn dispose<T: Send + 'static>(&self, item: T, bytes: usize, charge: &Arc<Charge>) {
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

    /// Gives the circuit that device `d` was proving when it was lost to the
    /// other devices: back to the device queue, in its place by priority and
    /// age, where another device is in service, its assignment can still give
    /// a, b and c, and it has not moved before (a circuit that two devices
    /// lost may be what faults them). Returns the task where it cannot move.
    /// Called before `d` is retired.
    pub(super) fn move_after_loss(&self, d: usize, task: DeviceTask) -> Option<DeviceTask> {
        if task.moved || !task.asg.can_give_abc() {
            return Some(task);
        }
        let mut queue = self.device_queue.lock().unwrap();
        let in_service = |o: usize| o != d && !self.devices[o].retired.load(Ordering::Acquire);
        if !(0..self.devices.len()).any(in_service) {
            return Some(task);
        }
        log::warn!(
            "job {} circuit {}: device {d} ({}) was lost while proving it; another device proves it",
            task.job.id,
            task.index,
            self.backends[d].device(),
        );
        queue.push(DeviceTask {
            moved: true,
            ..task
        });
        drop(queue);
        self.device_cv.notify_all();
        None
    }

    /// Takes a device that keeps failing out of service. Its work goes to the other
    /// devices; when none is left, the circuits waiting for one fail.
    pub(super) fn retire_device(&self, d: usize, reason: &str) {
        log::error!(
            "device {d} ({}) {reason}: taken out of service (restart the process to use \
             it again: some device errors, such as a CUDA kernel fault, spoil the device \
             for the whole process)",
            self.backends[d].device(),
        );
        self.devices[d].retired.store(true, Ordering::Release);
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
    pub(super) fn dispose_assignment(&self, asg: Assignment, charge: &Arc<Charge>) {
        let bytes = assignment_bytes(&asg);
        self.dispose(asg, bytes, charge);
    }

    pub(super) fn record(&self, stage: &str, job: &str, unit: usize, began: Instant) {
        self.record_secs(stage, job, unit, began, began.elapsed().as_secs_f64());
    }

    /// [`Self::record`] of a stage whose time was measured elsewhere (B_G2 made
    /// with the G1 side).
    pub(super) fn record_secs(
        &self,
        stage: &str,
        job: &str,
        unit: usize,
        began: Instant,
        secs: f64,
    ) {
        crate::groth16::steps::log_stage(job, unit, stage, secs);
        self.stats.lock().unwrap().record(stage, began, secs);
        let watch = self
            .watches
            .lock()
            .unwrap()
            .get(job)
            .and_then(Weak::upgrade);
        if let Some(w) = watch {
            w.add(stage, secs);
        }
    }

    pub(super) fn prepared(
        &self,
        device: usize,
        params: &Arc<Parameters>,
    ) -> Result<Arc<PreparedParams>> {
        let prepared = self.devices[device].placement.lock().unwrap().prepared(
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
    /// them alone, and takes what that frees off the budget.
    pub(super) fn release_host_copies(&self, params: &Arc<Parameters>) {
        let everywhere = self
            .devices
            .iter()
            .all(|d| d.placement.lock().unwrap().holds_g1_alone(params));
        if !everywhere {
            return;
        }
        let freed: usize = params.g1_queries().iter().map(|q| q.release_host()).sum();
        log::info!(
            "host copies of the parameters' H, L, A and B_G1 released ({}): every device holds them",
            bytesize::ByteSize(freed as u64)
        );
        // A resident set's bytes are read from its queries: recounted.
        self.refresh_set_bytes();
    }

    /// `shape`'s constraint matrices on a device, placed on first use (None:
    /// its a, b and c are computed on the host).
    pub(super) fn matrices(
        &self,
        device: usize,
        shape: &Arc<crate::synthesis::RecordedShape>,
        params: &Parameters,
    ) -> Option<Arc<crate::backend::DeviceMatrices>> {
        self.devices[device].placement.lock().unwrap().matrices(
            self.backends[device].as_ref(),
            shape,
            params,
            &self.config.placement,
        )
    }

    /// Drops what is prepared on a device after it failed: if the failure rebuilt
    /// its context, the old bases are gone, and the next circuit prepares again.
    pub(super) fn forget_prepared(&self, device: usize) {
        self.devices[device].placement.lock().unwrap().forget();
        if self.config.placement.release_host_copies {
            self.drop_lost_sets();
        }
    }

    /// Resolves a job with an error. The id is released first, so whoever the
    /// resolution wakes may reuse it at once.
    pub(super) fn fail(&self, job: &JobState, e: Error) {
        self.forget(job);
        if job.resolve(Err(e)) {
            self.stats.lock().unwrap().jobs_failed += 1;
        }
    }

    /// Releases the job's id — only if it still names this job: a failed job's
    /// late units must not release a new job that reused the id.
    pub(super) fn forget(&self, job: &JobState) {
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

/// Bytes an assignment's vectors hold that the engine charges.
pub(super) fn assignment_bytes(asg: &Assignment) -> usize {
    asg.heap_bytes()
}

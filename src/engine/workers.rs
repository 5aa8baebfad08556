//! The engine's threads: synthesis, one device worker per backend, finalizers,
//! deallocators and the resident-memory sampler.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use rand_core::OsRng;

use super::admission::Writing;
use super::job::JobState;
use super::memory::{resident_anon_bytes, SAMPLE_EVERY};
use super::shared::{assignment_bytes, Charge, Shared};
use super::tasks::{DeviceTask, Disposal, FinalTask, SynthTask};
use crate::backend::StagedWitness;
use crate::error::Error;
use crate::groth16::steps;
use crate::groth16::{prepare_verifying_key, verify_proofs_batch, Proof};
use crate::synthesis::{check_witness, Assignment};
use crate::Scalar;

fn scalar_bytes(v: &Vec<Scalar>) -> usize {
    v.capacity() * std::mem::size_of::<Scalar>()
}

/// Takes the highest-priority circuit whose memory the budget admits, waiting for
/// a task or for memory as needed. None once the engine stops.
fn admit(s: &Arc<Shared>) -> Option<(SynthTask, Arc<Charge>, Arc<Writing>)> {
    let mut adm = s.admission.lock().unwrap();
    loop {
        if s.stop.load(Ordering::Acquire) {
            return None;
        }
        while adm.queue.peek().is_some_and(|t| t.job.is_cancelled()) {
            adm.queue.pop();
        }
        adm.mem.waiting = false;
        if let Some(head) = adm.queue.peek() {
            let estimate = adm.estimate(&head.job);
            let budget = adm.budget;
            // Read now rather than from the sampler: at start there is no sample
            // yet, and the first units of a burst must see what is already held.
            if let Some(r) = resident_anon_bytes() {
                adm.mem.resident = r;
                adm.mem.resident_known = true;
                if adm.mem.units_in_flight == 0 {
                    adm.mem.baseline = r.saturating_sub(adm.mem.sets);
                }
            }
            adm.refresh_pending();
            let admitted = budget.admits(&mut adm.mem, estimate);
            adm.mem.waiting = !admitted;
            if admitted {
                let task = adm.queue.pop().unwrap();
                adm.mem.charged += estimate;
                adm.mem.units_in_flight += 1;
                let charge = Arc::new(Charge {
                    shared: s.clone(),
                    remaining: AtomicUsize::new(estimate),
                });
                let writing = adm.start_writing(estimate);
                return Some((task, charge, writing));
            }
        }
        // Woken by new tasks, credits and resident-memory samples.
        adm = s.admission_cv.wait(adm).unwrap();
    }
}

pub(crate) fn synthesis(s: Arc<Shared>) {
    while let Some((task, charge, writing)) = admit(&s) {
        let estimate = writing.estimate;
        let SynthTask {
            job,
            index,
            synth,
            queued,
            ..
        } = task;
        s.record("queue_synthesis", &job.id, index, queued);
        let began = Instant::now();
        let written = writing.written.clone();
        let mut result = catch_unwind(AssertUnwindSafe(|| {
            crate::synthesis::progress::reporting(written, synth)
        }))
        .unwrap_or_else(|_| {
            Err(Error::CircuitPanicked(
                "a synthesis function panicked".into(),
            ))
        });
        if let Ok(asg) = &mut result {
            // Witness-only stays so only where the job was submitted so.
            if asg.pending.is_some() && job.witness_bytes.is_none() {
                asg.evaluate();
            }
        }
        let actual = result.as_ref().map_or(0, assignment_bytes);
        {
            let mut adm = s.admission.lock().unwrap();
            adm.stop_writing(&writing);
            if actual > estimate {
                // Allocated already: charge the excess so the budget stays truthful.
                adm.mem.charged += actual - estimate;
                charge
                    .remaining
                    .fetch_add(actual - estimate, Ordering::AcqRel);
            }
            if let Ok(asg) = &result {
                // Calibrate by the measured vectors; what the H computation
                // adds is the device reserve's.
                let h = super::admission::h_reserve_bytes(
                    &s.backends,
                    asg.num_rows(),
                    asg.is_witness_only(),
                );
                adm.mem.device_reserve = adm.mem.device_reserve.max(h);
                let key = (Arc::as_ptr(&job.params) as usize, asg.is_witness_only());
                let e = adm.estimates.entry(key).or_insert(0);
                *e = (*e).max(actual);
            }
        }
        // The charge is what the circuit holds until a device takes it: an
        // estimate above that is given back now, not when the circuit ends.
        if actual < estimate {
            charge.credit(estimate - actual);
        }
        s.admission_cv.notify_all();
        let asg = match result {
            Ok(asg) => asg,
            Err(e) => {
                s.fail(&job, e);
                continue;
            }
        };
        s.record("synthesis", &job.id, index, began);
        // Parameters of another circuit are named before any device work, not found
        // out by the final verification.
        if let Err(e) = job.params.check_shape(&asg.shape()) {
            s.fail(&job, e);
            s.dispose_assignment(asg, &charge);
            continue;
        }
        if let Some(row) = check_witness_of(&job, &asg) {
            s.fail(
                &job,
                Error::Unsatisfied {
                    row,
                    path: None,
                    circuit: Some(index),
                },
            );
            s.dispose_assignment(asg, &charge);
            continue;
        }
        if job.is_cancelled() {
            s.dispose_assignment(asg, &charge);
            continue;
        }
        let cap = s.config.device_queue_per_device * s.backends.len();
        let mut dq = s.device_queue.lock().unwrap();
        // Checked under the queue's lock, which retiring the last device also takes:
        // a circuit is never queued for a device that no longer exists.
        while s.live_devices.load(Ordering::Acquire) > 0
            && dq.len() >= cap
            && !s.stop.load(Ordering::Acquire)
        {
            dq = s.device_cv.wait(dq).unwrap();
        }
        if s.live_devices.load(Ordering::Acquire) == 0 {
            drop(dq);
            s.fail(
                &job,
                Error::Invalid("every device of the engine is out of service".into()),
            );
            s.dispose_assignment(asg, &charge);
            continue;
        }
        // Not the admission lock: status() takes it before the device queue's.
        let seq = s.device_seq.fetch_add(1, Ordering::AcqRel);
        dq.push(DeviceTask {
            job,
            index,
            asg,
            charge,
            seq,
            queued: Instant::now(),
            moved: false,
        });
        drop(dq);
        s.device_cv.notify_all();
    }
}

/// Consecutive failed critical paths after which a device is taken out of service.
pub(crate) const RETIRE_AFTER_FAILURES: usize = 3;

pub(crate) fn device(s: Arc<Shared>, d: usize) {
    // What the backend builds on first use (wgpu: seconds of pipelines) is built
    // while the first circuits are still being synthesized, not on the first
    // proof's critical path. A failure here shows again on the first job.
    {
        // Counted as warmed up however warm_up ends, a panic included, so that
        // Engine::wait_ready cannot hang.
        struct Warmed<'a>(&'a Shared);
        impl Drop for Warmed<'_> {
            fn drop(&mut self) {
                let mut warming = self.0.warming.lock().unwrap_or_else(|p| p.into_inner());
                *warming = warming.saturating_sub(1);
                self.0.warmed_cv.notify_all();
            }
        }
        let _warmed = Warmed(&s);
        if let Err(e) = s.backends[d].warm_up() {
            log::warn!("device {d}: warm-up failed: {e}");
        }
    }
    let mut failures = 0;
    // The next circuit, taken from the queue while the current one ran, with
    // its witness where it was sent ahead to the device.
    let mut ahead: Option<(DeviceTask, Option<StagedWitness>)> = None;
    loop {
        let (task, staged) = match ahead.take() {
            Some(a) => unless_outranked(&s, a),
            None => {
                let mut dq = s.device_queue.lock().unwrap();
                loop {
                    if let Some(t) = dq.pop() {
                        break (t, None);
                    }
                    if s.stop.load(Ordering::Acquire) {
                        return;
                    }
                    dq = s.device_cv.wait(dq).unwrap();
                }
            }
        };
        s.device_cv.notify_all();
        let DeviceTask {
            job,
            index,
            mut asg,
            charge,
            queued,
            seq,
            moved,
        } = task;
        s.record("queue_device", &job.id, index, queued);
        if job.is_cancelled() {
            s.dispose_assignment(asg, &charge);
            continue;
        }
        let prepared = match s.prepared(d, &job.params) {
            Ok(p) => p,
            Err(e) => {
                s.fail(&job, e);
                s.dispose_assignment(asg, &charge);
                continue;
            }
        };
        // Kept so that a witness-only circuit whose a, b and c were made here
        // can be proved on another device if this one is lost.
        let shape = asg.pending.clone();
        let matrices = shape.clone().and_then(|p| s.matrices(d, &p.0, &job.params));
        if asg.is_witness_only() && matrices.is_none() {
            // The matrices did not fit on this device: a, b, c on the host,
            // charged as they are allocated.
            let before = assignment_bytes(&asg);
            let evaluated = steps::evaluate_on_host(&mut asg, job.checked);
            s.charge_growth(&charge, assignment_bytes(&asg).saturating_sub(before));
            if let Err(e) = evaluated {
                s.fail(&job, of_circuit(e, index));
                s.dispose_assignment(asg, &charge);
                continue;
            }
        }
        let pending = steps::Pending {
            matrices: matrices.as_deref(),
            check: job.checked,
            staged,
        };
        let began = Instant::now();
        let backend = s.backends[d].as_ref();
        *s.devices[d].running.lock().unwrap() = Some(job.id.clone());
        // What the H computation adds lives in the device reserve: a, b and c
        // give back no more than their charge (a witness-only circuit's H,
        // made on the device, none).
        let mut in_charge = if asg.is_witness_only() && matrices.is_some() {
            0
        } else {
            [&asg.a, &asg.b, &asg.c].into_iter().map(scalar_bytes).sum()
        };
        // The next circuit, if one of the same parameters waits, has its
        // witness (or its a, b and c) sent to the device while this one's
        // MSMs run.
        let next = s
            .config
            .stage_witnesses
            .then(|| next_to_stage(&s, backend, matrices.as_deref(), &job, &asg))
            .flatten();
        let h_done = Gate::default();
        let result = std::thread::scope(|scope| {
            let staging = next.as_ref().map(|(m, next)| {
                let h_done = &h_done;
                let s = &*s;
                scope.spawn(move || stage(s, *m, next, h_done, d))
            });
            let result = steps::g1_side(
                backend,
                &prepared,
                &mut asg,
                pending,
                &mut |v: Vec<Scalar>| {
                    // b and c are handed back once H exists.
                    h_done.open();
                    let bytes = scalar_bytes(&v).min(in_charge);
                    in_charge -= bytes;
                    s.dispose(v, bytes, &charge)
                },
            );
            h_done.open();
            let staged = staging.and_then(|h| h.join().ok().flatten());
            (result, staged)
        });
        let (result, staged) = result;
        ahead = next.map(|(_, t)| (t, staged));
        *s.devices[d].running.lock().unwrap() = None;
        {
            // Device events where the backend records them, else the host clock.
            let host = began.elapsed().as_secs_f64();
            let busy = result.as_ref().ok().and_then(|g| g.times.device);
            let mut stats = s.stats.lock().unwrap();
            let dev = &mut stats.device_busy[d];
            dev.busy_s += busy.unwrap_or(host);
            dev.units += 1;
            dev.event_timed &= busy.is_some();
        }
        s.record("g1_side", &job.id, index, began);
        match result {
            Ok(g1) => {
                failures = 0;
                let mut at = began;
                for (step, secs) in g1.times.g1_steps() {
                    if secs > 0.0 {
                        steps::log_stage(&job.id, index, step, secs);
                        s.stats.lock().unwrap().record(step, at, secs);
                        at += Duration::from_secs_f64(secs);
                    }
                }
                let task = FinalTask {
                    job,
                    index,
                    asg,
                    g1,
                    charge,
                    device: d,
                    seq,
                };
                if let Err(t) = s.final_queue.push(task, &s.stop) {
                    s.fail(&t.job, Error::Invalid("the engine is shutting down".into()));
                }
            }
            Err(e @ Error::Unsatisfied { .. }) => {
                // The witness, not the device: found by the device's row check.
                s.fail(&job, of_circuit(e, index));
                s.dispose_assignment(asg, &charge);
            }
            Err(e) => {
                // A lost device fails everything after this: no point in two more tries.
                let lost = matches!(e, Error::DeviceLost { .. });
                let reason = if lost {
                    format!("is lost ({e})")
                } else {
                    format!("failed {RETIRE_AFTER_FAILURES} critical paths in a row")
                };
                let task = DeviceTask {
                    job,
                    index,
                    asg: asg.with_pending_restored(shape),
                    charge,
                    seq,
                    queued: Instant::now(),
                    moved,
                };
                // The device, not the circuit, failed: where its witness can
                // still give a, b and c, another device proves it.
                let unmoved = if lost {
                    s.move_after_loss(d, task)
                } else {
                    Some(task)
                };
                if let Some(t) = unmoved {
                    s.fail(&t.job, e);
                    s.dispose_assignment(t.asg, &t.charge);
                }
                s.forget_prepared(d);
                failures += 1;
                if lost || failures >= RETIRE_AFTER_FAILURES {
                    // The circuit taken ahead goes back for another device.
                    if let Some((t, _)) = ahead.take() {
                        s.device_queue.lock().unwrap().push(t);
                    }
                    s.retire_device(d, &reason);
                    return;
                }
            }
        }
    }
}

/// The queue's next circuit, taken now, where its vectors can be sent to the
/// device ahead (with the matrices to stage its witness on, where that is
/// what goes): a witness-only one of the same parameters and shape as `asg`
/// on a backend that stages witnesses, or one of the same parameters whose
/// a, b and c exist on a backend that stages those; and nothing outranks it.
fn next_to_stage<'m>(
    s: &Shared,
    backend: &dyn crate::backend::Backend,
    matrices: Option<&'m crate::backend::DeviceMatrices>,
    job: &Arc<JobState>,
    asg: &Assignment,
) -> Option<(Option<&'m crate::backend::DeviceMatrices>, DeviceTask)> {
    let witness = matrices.filter(|_| backend.stages_witnesses());
    let stageable = |head: &DeviceTask| match witness {
        Some(_) => asg.pending.is_some() && head.asg.pending == asg.pending,
        None => backend.stages_abc() && head.asg.pending.is_none(),
    };
    let mut dq = s.device_queue.lock().unwrap();
    let head = dq.peek()?;
    if !Arc::ptr_eq(&head.job.params, &job.params) || head.job.is_cancelled() || !stageable(head) {
        return None;
    }
    let task = dq.pop();
    drop(dq);
    s.device_cv.notify_all();
    task.map(|t| (witness, t))
}

/// Opened once the current proof's H exists, or its critical path ended: a,
/// b and c sent ahead before then would share the device's transfers and
/// memory with the current proof's own.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }
}

/// `task`'s witness (on `matrices`), or its a, b and c once `h_done` opens,
/// sent ahead to device `d` (recorded as the stage "sent_ahead"); None where
/// that failed (they then go up with its H, and a device fault shows there).
fn stage(
    s: &Shared,
    matrices: Option<&crate::backend::DeviceMatrices>,
    task: &DeviceTask,
    h_done: &Gate,
    d: usize,
) -> Option<StagedWitness> {
    let backend = s.backends[d].as_ref();
    let mut began = Instant::now();
    let staged = catch_unwind(AssertUnwindSafe(|| match matrices {
        Some(m) => backend.stage_witness(m, &task.asg.input, &task.asg.aux),
        None => {
            h_done.wait();
            began = Instant::now();
            let next = &task.asg;
            backend.stage_abc(&next.a, &next.b, &next.c)
        }
    }));
    match staged {
        Ok(Ok(w)) => {
            if w.is_some() {
                s.record("sent_ahead", &task.job.id, task.index, began);
            }
            w
        }
        Ok(Err(e)) => {
            log::warn!("device {d}: a proof's vectors not sent ahead ({e}); they go up with its H");
            None
        }
        Err(_) => {
            log::warn!(
                "device {d}: sending a proof's vectors ahead panicked; they go up with its H"
            );
            None
        }
    }
}

/// The circuit taken ahead, unless one of higher priority came since: that
/// one runs first, and the one taken ahead goes back to the queue (its staged
/// witness freed).
fn unless_outranked(
    s: &Shared,
    (task, staged): (DeviceTask, Option<StagedWitness>),
) -> (DeviceTask, Option<StagedWitness>) {
    let mut dq = s.device_queue.lock().unwrap();
    if let Some(mut head) = dq.peek_mut() {
        if *head > task {
            // The queue's order is restored when `head` is dropped.
            return (std::mem::replace(&mut *head, task), None);
        }
    }
    (task, staged)
}

fn next<T>(s: &Shared, rx: &Receiver<T>) -> Option<T> {
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(t) => return Some(t),
            Err(RecvTimeoutError::Timeout) if !s.stop.load(Ordering::Acquire) => continue,
            Err(_) => return None,
        }
    }
}

pub(crate) fn finalize(s: Arc<Shared>) {
    while let Some(task) = s.final_queue.pop(&s.stop) {
        let FinalTask {
            job,
            index,
            asg,
            g1,
            charge,
            device,
            ..
        } = task;
        if job.is_cancelled() {
            s.dispose_assignment(asg, &charge);
            continue;
        }
        let began = Instant::now();
        let b_g2 = match g1.b_g2 {
            // Made with the G1 side: its stage time is the one measured there.
            Some(done) => {
                s.record_secs("b_g2", &job.id, index, began, g1.times.b_g2);
                Ok(done)
            }
            None => {
                let backend = s.backends[device].as_ref();
                let run = || {
                    let prepared = || s.prepared(device, &job.params);
                    steps::b_g2(backend, &g1, prepared, &job.params, &asg)
                };
                let b_g2 = if steps::b_g2_on_device(backend, &asg) {
                    // The device's busy time counts it too, where the backend
                    // measures it apart from the critical paths.
                    let mut made = None;
                    let busy = backend.busy_time(&mut || {
                        made = Some(run()?);
                        Ok(())
                    });
                    busy.map(|busy| {
                        if let Some(busy) = busy {
                            let mut stats = s.stats.lock().unwrap();
                            stats.device_busy[device].busy_s += busy.as_secs_f64();
                        }
                        made
                    })
                    .and_then(|made| {
                        made.ok_or_else(|| Error::Invalid("B_G2 was timed but not made".into()))
                    })
                } else {
                    run()
                };
                s.record("b_g2", &job.id, index, began);
                b_g2
            }
        };
        let b_g2 = match b_g2 {
            Ok(p) => p,
            Err(e) => {
                s.forget_prepared(device);
                s.fail(&job, e);
                s.dispose_assignment(asg, &charge);
                continue;
            }
        };
        let began = Instant::now();
        let proof = steps::assemble(&job.params.vk, &g1, &b_g2, job.r[index], job.s[index]);
        s.record("assemble", &job.id, index, began);
        let public = asg.input[1..].to_vec();
        s.dispose_assignment(asg, &charge);
        drop(charge);
        let done = {
            let mut res = job.results.lock().unwrap();
            res.proofs[index] = Some(proof);
            res.public_inputs[index] = public;
            res.remaining -= 1;
            res.remaining == 0
        };
        if done {
            complete(&s, &job);
        }
    }
}

/// An unsatisfied row's error, naming the circuit of the job it came from.
fn of_circuit(e: Error, index: usize) -> Error {
    match e {
        Error::Unsatisfied { row, path, .. } => Error::Unsatisfied {
            row,
            path,
            circuit: Some(index),
        },
        e => e,
    }
}

/// The first unsatisfied row of a checked job's assignment (a witness-only
/// one is checked where its a, b and c are computed).
fn check_witness_of(job: &JobState, asg: &Assignment) -> Option<usize> {
    if job.checked && !asg.is_witness_only() {
        check_witness(asg)
    } else {
        None
    }
}

/// Verifies every proof of a finished job in one batch check and resolves it.
fn complete(s: &Shared, job: &JobState) {
    let began = Instant::now();
    let (proofs, inputs): (Vec<Proof>, Vec<Vec<Scalar>>) = {
        let res = job.results.lock().unwrap();
        (
            res.proofs
                .iter()
                .map(|p| p.expect("every unit finished"))
                .collect(),
            res.public_inputs.clone(),
        )
    };
    let verdict = if job.checked {
        let pvk = prepare_verifying_key(&job.params.vk);
        let refs: Vec<&Proof> = proofs.iter().collect();
        verify_proofs_batch(&pvk, &mut OsRng, &refs, &inputs)
    } else {
        Ok(true)
    };
    s.record("verify", &job.id, 0, began);
    match verdict {
        Ok(true) => {
            let n = proofs.len();
            s.stats.lock().unwrap().completed(n);
            s.forget(job);
            job.resolve(Ok(proofs));
        }
        Ok(false) => s.fail(
            job,
            Error::Invalid(format!("job {}: a proof failed self-verification", job.id)),
        ),
        Err(e) => s.fail(job, e),
    }
}

/// Freed bytes after which a deallocator asks the allocator to return free pages.
const TRIM_AFTER: usize = 4 << 20;

/// Returns free heap pages to the operating system. glibc keeps freed memory in
/// per-thread arenas (and raises its mmap threshold after large frees), so buffers
/// allocated by many synthesis threads and freed here would otherwise stay resident.
pub(super) fn trim_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Makes glibc serve every allocation of 1 MiB or more with its own mapping, so
/// that freeing it returns the pages at once. By default glibc raises this threshold
/// after each large free (up to 32 MiB), after which large buffers come from arenas
/// and stay resident once freed: the budget would then measure the allocator's
/// retention, not the engine's work.
pub(crate) fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

pub(crate) fn dealloc(s: Arc<Shared>, rx: Receiver<Disposal>) {
    let mut untrimmed = 0usize;
    while let Some(d) = next(&s, &rx) {
        let began = Instant::now();
        drop(d.item);
        untrimmed += d.bytes;
        if untrimmed >= TRIM_AFTER || rx.is_empty() {
            trim_allocator();
            untrimmed = 0;
        }
        let secs = began.elapsed().as_secs_f64();
        log::debug!(
            "crossgroth-stage stage=dealloc bytes={} ms={:.3}",
            d.bytes,
            secs * 1e3
        );
        s.stats.lock().unwrap().record("dealloc", began, secs);
        d.charge.credit(d.bytes);
    }
}

pub(crate) fn sample(s: Arc<Shared>) {
    while !s.stop.load(Ordering::Acquire) {
        let r = resident_anon_bytes().unwrap_or(0);
        let (waiting, memory_wanted, state) = {
            let mut adm = s.admission.lock().unwrap();
            adm.mem.resident = r;
            adm.mem.resident_known = r > 0;
            adm.refresh_pending();
            (
                adm.mem.waiting.then(|| adm.mem.committed()),
                adm.mem.waiting || adm.mem.loads_waiting > 0,
                adm.mem,
            )
        };
        s.resident.lock().unwrap().record(r, waiting, &state);
        if let (true, Some(min_idle)) = (memory_wanted, s.config.evict_idle_sets_after) {
            if let Some((name, e)) = s.evict_idle_set(min_idle) {
                log::info!(
                    "evicted the idle parameter set {name} for memory that work waits for: \
                     {} of host and {} of device memory freed",
                    bytesize::ByteSize(e.host_bytes as u64),
                    bytesize::ByteSize(e.device_bytes as u64)
                );
            }
        }
        s.admission_cv.notify_all();
        std::thread::sleep(SAMPLE_EVERY);
    }
}

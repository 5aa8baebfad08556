//! Parameter sets and their recorded shapes, from load to eviction: the one
//! owner of what a long-running prover keeps resident between jobs.
//!
//! A set is named by its caller (Filecoin: filecoin-proofs' cache id). It is
//! loaded once — concurrent callers wait for the one load — after its bytes are
//! reserved in the memory budget, so that a load never runs the process past it.
//! Jobs hold it through a [`SetLease`]; an evicted set is released everywhere it
//! lives (its host copy, its recorded shape and every device's bases and
//! matrices), at once when no job holds it, else when its last job ends.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use super::shared::Shared;
use crate::error::{Error, Result};
use crate::groth16::Parameters;
use crate::synthesis::RecordedShape;

/// The sets an engine holds, under one lock, and the condition callers wait on
/// while a set or shape is being loaded by someone else.
#[derive(Default)]
pub(crate) struct Residency {
    pub(super) sets: Mutex<Sets>,
    pub(super) loaded_cv: Condvar,
}

#[derive(Default)]
pub(crate) struct Sets {
    entries: HashMap<String, Entry>,
    /// Sets dropped because no device held the only copy of their bases any more
    /// (a device fault after their host copy was released).
    lost: HashSet<String>,
    pub(super) counts: SetCounts,
    /// Bytes reserved for loads and recordings in progress.
    pub(super) reserved: usize,
}

enum Entry {
    /// Someone is reading it; others wait on `loaded_cv`.
    Loading,
    Loaded(Loaded),
}

struct Loaded {
    params: Arc<Parameters>,
    shape: ShapeSlot,
    /// Leases held now.
    users: usize,
    last_used: Instant,
    /// Evicted while in use: released when its last lease ends.
    evict_when_unused: bool,
}

enum ShapeSlot {
    None,
    Recording,
    Ready(Arc<RecordedShape>),
}

impl Loaded {
    fn host_bytes(&self) -> usize {
        self.params.heap_bytes()
            + match &self.shape {
                ShapeSlot::Ready(s) => s.heap_bytes(),
                _ => 0,
            }
    }
}

/// Bytes a recording of a circuit of `params`' shape is expected to hold
/// while it runs: its assignment (as a circuit's first estimate) and half that
/// again for the constraint matrices it keeps.
pub fn recording_estimate(params: &Parameters) -> usize {
    super::admission::initial_estimate(params) / 2 * 3
}

/// How often sets were read and released, for metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SetCounts {
    /// Sets read from their loader (once however many callers waited for it).
    pub loads: u64,
    /// Sets released (requested, idle, or lost to a device fault).
    pub evictions: u64,
    /// Sets read again after a device fault lost the only copy of their bases.
    pub reloads_after_loss: u64,
}

/// What one resident set holds, for status pages.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ResidentSet {
    pub name: String,
    /// Host bytes of its parameters and recorded shape.
    pub host_bytes: usize,
    /// Leases held now (jobs using it).
    pub users: usize,
    /// Seconds since a lease last ended or began.
    pub idle_s: f64,
    pub has_shape: bool,
}

/// What an eviction returned, measured where it lived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Eviction {
    /// Host bytes of the parameters and shape freed by this eviction.
    pub host_bytes: usize,
    /// Device bytes of bases and matrices freed, over every device.
    pub device_bytes: usize,
    /// Jobs still holding the set: it is released when the last one ends, and
    /// nothing was freed now.
    pub deferred_users: usize,
}

impl Eviction {
    pub fn freed_bytes(&self) -> usize {
        self.host_bytes + self.device_bytes
    }
}

/// A job's hold on a resident set: the set stays loaded while any lease lives.
pub struct SetLease {
    name: String,
    params: Arc<Parameters>,
    shared: Weak<Shared>,
}

impl std::fmt::Debug for SetLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetLease")
            .field("name", &self.name)
            .finish()
    }
}

impl SetLease {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn params(&self) -> &Arc<Parameters> {
        &self.params
    }

    /// The set's recorded shape, if one was recorded.
    pub fn shape(&self) -> Option<Arc<RecordedShape>> {
        let shared = self.shared.upgrade()?;
        let sets = shared.residency.sets.lock().unwrap();
        match sets.entries.get(&self.name) {
            Some(Entry::Loaded(Loaded {
                shape: ShapeSlot::Ready(s),
                ..
            })) => Some(s.clone()),
            _ => None,
        }
    }

    /// The set's recorded shape, recorded by `record` when there is none yet:
    /// one recording at a time (others wait for it), its `estimate` of bytes
    /// reserved in the budget before it starts. The caller that recorded it also
    /// gets what `record` returned beside the shape.
    pub fn shape_or_record<T>(
        &self,
        estimate: usize,
        record: impl FnOnce() -> Result<(RecordedShape, T)>,
    ) -> Result<(Arc<RecordedShape>, Option<T>)> {
        let shared = self
            .shared
            .upgrade()
            .ok_or_else(|| Error::Invalid("the engine has stopped".into()))?;
        let residency = &shared.residency;
        {
            let mut sets = residency.sets.lock().unwrap();
            loop {
                let Some(Entry::Loaded(l)) = sets.entries.get_mut(&self.name) else {
                    // Dropped after a device loss while this lease lived: the
                    // caller's job fails on its parameters; no shape is kept.
                    return Err(Error::Invalid(format!(
                        "parameter set {} is no longer resident",
                        self.name
                    )));
                };
                match &l.shape {
                    ShapeSlot::Ready(s) => return Ok((s.clone(), None)),
                    ShapeSlot::Recording => sets = residency.loaded_cv.wait(sets).unwrap(),
                    ShapeSlot::None => {
                        l.shape = ShapeSlot::Recording;
                        break;
                    }
                }
            }
        }
        let recorded = shared
            .reserve(&self.name, estimate, "recording its shape")
            .and_then(|()| {
                let r = record();
                shared.unreserve(estimate);
                r
            });
        let mut sets = residency.sets.lock().unwrap();
        let slot = match sets.entries.get_mut(&self.name) {
            Some(Entry::Loaded(l)) => Some(&mut l.shape),
            _ => None,
        };
        let out = match (recorded, slot) {
            (Ok((shape, t)), Some(slot)) => {
                let shape = Arc::new(shape);
                *slot = ShapeSlot::Ready(shape.clone());
                Ok((shape, Some(t)))
            }
            (Ok((shape, t)), None) => Ok((Arc::new(shape), Some(t))),
            (Err(e), slot) => {
                if let Some(slot) = slot {
                    *slot = ShapeSlot::None;
                }
                Err(e)
            }
        };
        drop(sets);
        residency.loaded_cv.notify_all();
        shared.refresh_set_bytes();
        out
    }
}

impl Drop for SetLease {
    fn drop(&mut self) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let evict = {
            let mut sets = shared.residency.sets.lock().unwrap();
            match sets.entries.get_mut(&self.name) {
                Some(Entry::Loaded(l)) if Arc::ptr_eq(&l.params, &self.params) => {
                    l.users -= 1;
                    l.last_used = Instant::now();
                    l.users == 0 && l.evict_when_unused
                }
                _ => false,
            }
        };
        if evict {
            let freed = shared.evict_set(&self.name, true);
            if let Some(e) = freed {
                log::info!(
                    "released the {} parameters after their last job: {} of host and {} of device memory",
                    self.name,
                    bytesize::ByteSize(e.host_bytes as u64),
                    bytesize::ByteSize(e.device_bytes as u64)
                );
            }
        }
    }
}

impl Shared {
    /// The set `name`, loaded by `load` unless resident: one load at a time per
    /// name (others wait for it), `expected_bytes` reserved in the budget before
    /// it starts. Returns the lease and how long this call waited and loaded.
    pub(super) fn acquire_set(
        self: &Arc<Self>,
        name: &str,
        expected_bytes: usize,
        load: impl FnOnce() -> Result<(Parameters, Option<Arc<RecordedShape>>)>,
    ) -> Result<(SetLease, Duration)> {
        let began = Instant::now();
        let residency = &self.residency;
        {
            let mut sets = residency.sets.lock().unwrap();
            loop {
                match sets.entries.get_mut(name) {
                    Some(Entry::Loaded(l)) => {
                        l.users += 1;
                        l.last_used = Instant::now();
                        if l.evict_when_unused {
                            log::info!("{name}: needed again, no longer to be evicted");
                            l.evict_when_unused = false;
                        }
                        let lease = SetLease {
                            name: name.to_string(),
                            params: l.params.clone(),
                            shared: Arc::downgrade(self),
                        };
                        return Ok((lease, began.elapsed()));
                    }
                    Some(Entry::Loading) => sets = residency.loaded_cv.wait(sets).unwrap(),
                    None => {
                        sets.entries.insert(name.to_string(), Entry::Loading);
                        break;
                    }
                }
            }
        }
        let loaded = self
            .reserve(name, expected_bytes, "reading it")
            .and_then(|()| {
                let r = load();
                self.unreserve(expected_bytes);
                r
            });
        let mut sets = residency.sets.lock().unwrap();
        let out = match loaded {
            Ok((params, shape)) => {
                let params = Arc::new(params);
                sets.counts.loads += 1;
                if sets.lost.remove(name) {
                    sets.counts.reloads_after_loss += 1;
                }
                sets.entries.insert(
                    name.to_string(),
                    Entry::Loaded(Loaded {
                        params: params.clone(),
                        shape: shape.map_or(ShapeSlot::None, ShapeSlot::Ready),
                        users: 1,
                        last_used: Instant::now(),
                        evict_when_unused: false,
                    }),
                );
                Ok((
                    SetLease {
                        name: name.to_string(),
                        params,
                        shared: Arc::downgrade(self),
                    },
                    began.elapsed(),
                ))
            }
            Err(e) => {
                sets.entries.remove(name);
                Err(e)
            }
        };
        drop(sets);
        residency.loaded_cv.notify_all();
        self.refresh_set_bytes();
        out
    }

    /// Evicts the set `name`: released everywhere now if no job holds it;
    /// else, unless `unused_only`, marked to be released when its last job
    /// ends. None if it is not loaded (or held, with `unused_only`).
    pub(super) fn evict_set(&self, name: &str, unused_only: bool) -> Option<Eviction> {
        let loaded = {
            let mut sets = self.residency.sets.lock().unwrap();
            match sets.entries.get_mut(name) {
                Some(Entry::Loaded(l)) if l.users > 0 => {
                    if unused_only {
                        return None;
                    }
                    l.evict_when_unused = true;
                    return Some(Eviction {
                        deferred_users: l.users,
                        ..Eviction::default()
                    });
                }
                Some(Entry::Loaded(_)) => match sets.entries.remove(name) {
                    Some(Entry::Loaded(l)) => l,
                    _ => unreachable!("matched as loaded under the same lock"),
                },
                _ => return None,
            }
        };
        let eviction = self.free_set(loaded);
        self.refresh_set_bytes();
        Some(eviction)
    }

    /// Frees a set taken out of the registry: every device's bases and
    /// matrices, then the host copy; counts what was really freed (a buffer
    /// someone else still holds is freed when they let go, and not counted).
    fn free_set(&self, loaded: Loaded) -> Eviction {
        self.residency.sets.lock().unwrap().counts.evictions += 1;
        let Loaded { params, shape, .. } = loaded;
        let shape = match shape {
            ShapeSlot::Ready(s) => Some(s),
            _ => None,
        };
        let mut device_bytes = 0;
        for device in &self.devices {
            device_bytes += device
                .placement
                .lock()
                .unwrap()
                .release(&params, shape.as_ref());
        }
        let mut host_bytes = 0;
        let params_bytes = params.heap_bytes();
        let params_weak = Arc::downgrade(&params);
        drop(params);
        let shape_bytes = shape.as_ref().map_or(0, |s| s.heap_bytes());
        let shape_weak = shape.as_ref().map(Arc::downgrade);
        drop(shape);
        // A finalizer or deallocator may still be letting go of its reference.
        let deadline = Instant::now() + Duration::from_secs(2);
        while (params_weak.strong_count() > 0
            || shape_weak.as_ref().is_some_and(|w| w.strong_count() > 0))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        if params_weak.strong_count() == 0 {
            host_bytes += params_bytes;
        }
        if shape_weak.is_some_and(|w| w.strong_count() == 0) {
            host_bytes += shape_bytes;
        }
        super::workers::trim_allocator();
        Eviction {
            host_bytes,
            device_bytes,
            deferred_users: 0,
        }
    }

    /// The least recently used set no job holds, idle for at least `min_idle`,
    /// evicted; its name and what that freed. None if there is no such set.
    pub(super) fn evict_idle_set(&self, min_idle: Duration) -> Option<(String, Eviction)> {
        let victim = {
            let sets = self.residency.sets.lock().unwrap();
            sets.entries
                .iter()
                .filter_map(|(name, e)| match e {
                    Entry::Loaded(l) if l.users == 0 && l.last_used.elapsed() >= min_idle => {
                        Some((l.last_used, name.clone()))
                    }
                    _ => None,
                })
                .min()
                .map(|(_, name)| name)
        }?;
        let eviction = self.evict_set(&victim, true)?;
        Some((victim, eviction))
    }

    /// Drops every set whose G1 bases lived only on a device that has just
    /// lost them (their host copy was released): whoever needs one next reads
    /// it again. Jobs holding such a set fail on its released queries.
    pub(super) fn drop_lost_sets(&self) {
        let lost: Vec<Loaded> = {
            let mut sets = self.residency.sets.lock().unwrap();
            let names: Vec<String> = sets
                .entries
                .iter()
                .filter_map(|(name, e)| match e {
                    Entry::Loaded(l) if !l.params.h.is_on_host() => Some(name.clone()),
                    _ => None,
                })
                .collect();
            names
                .into_iter()
                .filter_map(|name| {
                    sets.lost.insert(name.clone());
                    match sets.entries.remove(&name) {
                        Some(Entry::Loaded(l)) => Some(l),
                        _ => None,
                    }
                })
                .collect()
        };
        for l in lost {
            log::warn!(
                "a device lost the only copy of some parameters' bases (their host copy was released): \
                 the set is dropped and read again by its next job"
            );
            self.free_set(l);
        }
        self.refresh_set_bytes();
    }

    /// The resident sets, for status pages.
    pub(super) fn resident_sets(&self) -> Vec<ResidentSet> {
        let sets = self.residency.sets.lock().unwrap();
        let mut out: Vec<ResidentSet> = sets
            .entries
            .iter()
            .filter_map(|(name, e)| match e {
                Entry::Loaded(l) => Some(ResidentSet {
                    name: name.clone(),
                    host_bytes: l.host_bytes(),
                    users: l.users,
                    idle_s: l.last_used.elapsed().as_secs_f64(),
                    has_shape: matches!(l.shape, ShapeSlot::Ready(_)),
                }),
                Entry::Loading => None,
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Writes what the sets hold on the host, and what loads in progress
    /// reserved, into the budget's state.
    pub(super) fn refresh_set_bytes(&self) {
        let sets = self.residency.sets.lock().unwrap();
        let held: usize = sets
            .entries
            .values()
            .map(|e| match e {
                Entry::Loaded(l) => l.host_bytes(),
                Entry::Loading => 0,
            })
            .sum();
        let mut adm = self.admission.lock().unwrap();
        adm.mem.sets = held + sets.reserved;
        adm.mem.loading = sets.reserved;
        drop(adm);
        drop(sets);
        self.admission_cv.notify_all();
    }

    /// Waits until the budget has room for `bytes` more, then reserves them
    /// (the caller gives them back with [`Self::unreserve`] once what it loaded
    /// is counted). Room is made by evicting idle sets where the engine may;
    /// with nothing else in flight and nothing to evict the reservation is
    /// granted, as one circuit always is, so that the engine cannot wait for
    /// itself. A set larger than the whole budget is refused.
    fn reserve(&self, name: &str, bytes: usize, doing: &str) -> Result<()> {
        let limit = self.config.memory_budget;
        if bytes > limit {
            return Err(Error::Invalid(format!(
                "{name}: {doing} needs {}, over the whole memory budget of {}",
                bytesize::ByteSize(bytes as u64),
                bytesize::ByteSize(limit as u64)
            )));
        }
        let mut logged = false;
        loop {
            let mut sets = self.residency.sets.lock().unwrap();
            let mut adm = self.admission.lock().unwrap();
            // Idle sets that may be evicted are made room of first.
            let evictable = self.config.evict_idle_sets_after.is_some()
                && sets
                    .entries
                    .values()
                    .any(|e| matches!(e, Entry::Loaded(l) if l.users == 0));
            let alone = adm.mem.units_in_flight == 0 && sets.reserved == 0 && !evictable;
            if alone || adm.mem.committed() + bytes <= limit {
                sets.reserved += bytes;
                adm.mem.sets += bytes;
                adm.mem.loading += bytes;
                adm.mem.loads_waiting = adm.mem.loads_waiting.saturating_sub(logged as usize);
                return Ok(());
            }
            if !logged {
                adm.mem.loads_waiting += 1;
                log::info!(
                    "{name}: waiting for {} of the memory budget before {doing} ({} of {} committed)",
                    bytesize::ByteSize(bytes as u64),
                    bytesize::ByteSize(adm.mem.committed() as u64),
                    bytesize::ByteSize(limit as u64)
                );
                logged = true;
            }
            drop(sets);
            // Woken by credits and by the sampler, which also evicts idle sets
            // while a load waits.
            let _ = self
                .admission_cv
                .wait_timeout(adm, Duration::from_millis(100))
                .unwrap();
        }
    }

    fn unreserve(&self, bytes: usize) {
        let mut sets = self.residency.sets.lock().unwrap();
        sets.reserved = sets.reserved.saturating_sub(bytes);
        drop(sets);
        self.refresh_set_bytes();
    }
}

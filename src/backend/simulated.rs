//! A backend that models a device for tests and benchmarks: the device steps
//! of one proof hold one device slot for a configured time, and return what a
//! real device would. Results are computed once per distinct input on the CPU
//! (outside the slot) and replayed, so every proof still verifies and a replayed
//! proof costs almost no CPU.
//!
//! It can also be told to fail, to test that one job's backend error leaves the
//! others alone.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{
    Backend, Bases, BasesRef, CpuBackend, DeviceBases, DeviceMatrices, DeviceWitness, HostBases,
    MsmInput, MsmPlan, MsmScalars, Placement, StagedWitness, Sums, WitnessH, G1, G2,
};
use crate::error::{Error, Result};
use crate::synthesis::RecordedShape;
use crate::Scalar;

pub struct SimulatedDevice {
    /// Which device this is: bases it prepares carry this tag, and it refuses bases
    /// tagged by another device (a job's buffers never cross devices).
    pub id: usize,
    /// Time the critical path of one proof holds the device.
    pub g1_time: Duration,
    /// Time device work off a critical path (`busy_time`: a B_G2 after it)
    /// holds the device.
    pub off_path_time: Duration,
    /// Total device memory it reports, if any.
    pub memory_total: Option<usize>,
    slot: Mutex<()>,
    /// Results by a digest of their inputs.
    msm_cache: Mutex<HashMap<u64, Sums>>,
    h_cache: Mutex<HashMap<u64, Vec<Scalar>>>,
    /// Critical paths (1-based) from this one to `fail_until` fail, when set.
    fail_call: Option<usize>,
    fail_until: usize,
    /// Whether its failures are a lost device (Error::DeviceLost).
    fail_lost: bool,
    /// Whether a failing call runs its work first (a fault in the middle of a
    /// proof, after its steps took the assignment's a, b and c).
    fail_after_work: bool,
    calls: AtomicUsize,
    /// Whether it can stream bases from host memory, and how many base sets it
    /// prepared that way.
    streams: bool,
    streamed_sets: AtomicUsize,
    /// How long `warm_up` takes.
    warm_up_time: Duration,
    /// Device bytes a resident base set takes, as a multiple of its host bytes
    /// (cuda tables of precomputed copies: more than 1), and the bytes in use.
    resident_factor: usize,
    in_use: AtomicUsize,
    /// Device bytes a circuit shape's constraint matrices take, where it
    /// computes a, b and c from witnesses (as the cuda backend does); and how
    /// many shapes' matrices it was given.
    matrices_bytes: Option<usize>,
    matrices_prepared: AtomicUsize,
    /// Whether it sends a, b and c ahead (as the wgpu backend does).
    stages_abc: bool,
    /// Witnesses (or a, b and c) sent ahead, and how many of them an H
    /// computation used.
    staged: AtomicUsize,
    staged_used: AtomicUsize,
    /// Calls of `memory` made while a proof held the device: on a GPU those
    /// wait for its work (see `Backend::memory`).
    memory_waits: AtomicUsize,
    /// Whether it makes MSM plans (as the wgpu backend splits scalars ahead),
    /// how many it made and how many MSM inputs came with one of them.
    plans_msms: bool,
    plans_made: AtomicUsize,
    plans_used: AtomicUsize,
}

impl SimulatedDevice {
    pub fn new(g1_time: Duration) -> Self {
        SimulatedDevice {
            id: 0,
            g1_time,
            off_path_time: Duration::ZERO,
            memory_total: None,
            slot: Mutex::new(()),
            msm_cache: Mutex::new(HashMap::new()),
            h_cache: Mutex::new(HashMap::new()),
            fail_call: None,
            fail_until: 0,
            fail_lost: false,
            fail_after_work: false,
            calls: AtomicUsize::new(0),
            streams: false,
            streamed_sets: AtomicUsize::new(0),
            warm_up_time: Duration::ZERO,
            resident_factor: 1,
            in_use: AtomicUsize::new(0),
            matrices_bytes: None,
            matrices_prepared: AtomicUsize::new(0),
            stages_abc: false,
            staged: AtomicUsize::new(0),
            staged_used: AtomicUsize::new(0),
            memory_waits: AtomicUsize::new(0),
            plans_msms: false,
            plans_made: AtomicUsize::new(0),
            plans_used: AtomicUsize::new(0),
        }
    }

    /// A device that makes plans of MSMs with host scalars, as the wgpu
    /// backend splits them ahead (counted by [`Self::msm_plans`]); an input
    /// with a plan made for another count of scalars or bases is refused.
    pub fn with_msm_plans(mut self) -> Self {
        self.plans_msms = true;
        self
    }

    /// MSM plans made, and MSM inputs that came with one.
    pub fn msm_plans(&self) -> (usize, usize) {
        (
            self.plans_made.load(Ordering::Acquire),
            self.plans_used.load(Ordering::Acquire),
        )
    }

    /// A device that holds circuit shapes' constraint matrices (`bytes` each)
    /// and computes a, b and c of witness-only assignments from them.
    pub fn with_matrices(mut self, bytes: usize) -> Self {
        self.matrices_bytes = Some(bytes);
        self
    }

    /// A device that takes a, b and c sent ahead of their H, as the wgpu
    /// backend does (counted by [`Self::witnesses_staged`]).
    pub fn with_abc_staging(mut self) -> Self {
        self.stages_abc = true;
        self
    }

    /// How many shapes' matrices it was given.
    pub fn matrices_prepared(&self) -> usize {
        self.matrices_prepared.load(Ordering::Acquire)
    }

    /// The shape whose matrices this device prepared as `matrices`.
    fn shape_of<'a>(&self, matrices: &'a DeviceMatrices) -> Result<&'a RecordedShape> {
        match matrices.device.downcast_ref::<(usize, RecordedShape)>() {
            Some((id, shape)) if *id == self.id => Ok(shape),
            _ => Err(Error::Backend {
                backend: "simulated",
                message: format!("matrices not prepared by device {}", self.id),
            }),
        }
    }

    /// Witnesses sent ahead of their H (a device with matrices stages them, as
    /// the cuda backend does), and how many of them were used.
    pub fn witnesses_staged(&self) -> (usize, usize) {
        (
            self.staged.load(Ordering::Acquire),
            self.staged_used.load(Ordering::Acquire),
        )
    }

    /// How many `memory` queries came while a proof held the device (each
    /// one a wait for its work on a GPU).
    pub fn memory_waits(&self) -> usize {
        self.memory_waits.load(Ordering::Acquire)
    }

    fn free_memory(&self) -> Option<(usize, usize)> {
        let used = self.in_use.load(Ordering::Acquire);
        self.memory_total.map(|t| (t.saturating_sub(used), t))
    }

    /// A device that can stream bases from host memory (like the cuda backend).
    pub fn with_streaming(mut self) -> Self {
        self.streams = true;
        self
    }

    /// How many base sets were prepared to be streamed.
    pub fn streamed_sets(&self) -> usize {
        self.streamed_sets.load(Ordering::Acquire)
    }

    /// A device whose `n`-th critical path (1-based) reports an error.
    pub fn failing_at(g1_time: Duration, n: usize) -> Self {
        SimulatedDevice {
            fail_call: Some(n),
            fail_until: n,
            ..Self::new(g1_time)
        }
    }

    /// A device whose every critical path from the `n`-th on fails.
    pub fn failing_from(g1_time: Duration, n: usize) -> Self {
        SimulatedDevice {
            fail_call: Some(n),
            fail_until: usize::MAX,
            ..Self::new(g1_time)
        }
    }

    /// A device lost at its `n`-th critical path (a CUDA kernel fault): that
    /// call and every later one fail with Error::DeviceLost.
    pub fn lost_at(g1_time: Duration, n: usize) -> Self {
        SimulatedDevice {
            fail_lost: true,
            ..Self::failing_from(g1_time, n)
        }
    }

    /// A device lost in the middle of its `n`-th critical path: that call's
    /// steps run (taking the assignment's a, b and c, as a GPU's would before
    /// a kernel fault), then it and every later call fail with
    /// Error::DeviceLost.
    pub fn lost_during(g1_time: Duration, n: usize) -> Self {
        SimulatedDevice {
            fail_after_work: true,
            ..Self::lost_at(g1_time, n)
        }
    }

    /// A device that device work off a critical path (a B_G2 in the
    /// finalizer) holds for `time`.
    pub fn with_off_path_time(mut self, time: Duration) -> Self {
        self.off_path_time = time;
        self
    }

    /// Device number `id` (for engines with several devices).
    pub fn with_id(mut self, id: usize) -> Self {
        self.id = id;
        self
    }

    /// A device whose warm-up (wgpu: building its pipelines) takes `time`.
    pub fn with_warm_up(mut self, time: Duration) -> Self {
        self.warm_up_time = time;
        self
    }

    /// Resident bases take `factor` times their host bytes of the device memory
    /// it reports (like a cuda backend keeping precomputed copies).
    pub fn with_resident_copies(mut self, factor: usize) -> Self {
        self.resident_factor = factor;
        self
    }

    /// Reports `total` bytes of device memory (for device-budget tests).
    pub fn with_memory(mut self, total: usize) -> Self {
        self.memory_total = Some(total);
        self
    }

    /// Counts a resident base set of `bytes` host bytes as device memory in
    /// use (never given back: the engine keeps prepared sets for its life).
    fn hold(&self, bytes: usize) {
        self.in_use
            .fetch_add(bytes * self.resident_factor, Ordering::AcqRel);
    }

    pub fn shared(self) -> Arc<dyn Backend> {
        Arc::new(self)
    }
}

/// The tag a simulated device puts on the bases it prepares, with its own
/// copy of resident ones (its "device memory": they then need no host copy).
struct DeviceTag {
    id: usize,
    copy: Option<HostBases>,
}

impl SimulatedDevice {
    fn tag(&self, copy: Option<HostBases>) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        Some(Arc::new(DeviceTag { id: self.id, copy }))
    }

    fn check_binding<'a>(
        &self,
        device: &'a Option<Arc<dyn std::any::Any + Send + Sync>>,
    ) -> Result<&'a DeviceTag> {
        match device.as_ref().and_then(|d| d.downcast_ref::<DeviceTag>()) {
            Some(tag) if tag.id == self.id => Ok(tag),
            Some(DeviceTag { id, .. }) => Err(Error::Backend {
                backend: "simulated",
                message: format!("bases resident on device {id} used on device {}", self.id),
            }),
            None => Err(Error::Backend {
                backend: "simulated",
                message: format!("bases not prepared by a device used on device {}", self.id),
            }),
        }
    }
}

/// A digest of values (a cache key).
fn digest(parts: &[&[Scalar]], extra: &[usize]) -> u64 {
    // The limbs as stored (Montgomery form, one per value), folded by
    // multiply-and-rotate: converting every scalar to bytes, or SipHash over
    // them, would cost the device worker a good part of the device time it
    // models. A collision would replay a wrong result, which the engine's
    // verification of every proof reports.
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut acc = 0u64;
    let mut fold = |w: u64| acc = (acc.rotate_left(5) ^ w).wrapping_mul(K);
    for p in parts {
        fold(p.len() as u64);
        // SAFETY: Scalar is repr(transparent) over blst_fr.
        let words =
            unsafe { std::slice::from_raw_parts(p.as_ptr() as *const blst::blst_fr, p.len()) };
        for v in words {
            v.l.iter().for_each(|&w| fold(w));
        }
    }
    extra.iter().for_each(|&e| fold(e as u64));
    acc
}

impl Backend for SimulatedDevice {
    fn name(&self) -> &'static str {
        "simulated"
    }
    fn device(&self) -> String {
        format!("simulated device {}, {:?} per proof", self.id, self.g1_time)
    }
    /// A device beside the host's cores, as the one it models: B_G2 runs
    /// where a GPU's would (replayed on the device, or on the CPU for
    /// Filecoin-like scalars), not beside the G1 MSMs as on the cpu backend.
    fn has_device(&self) -> bool {
        true
    }
    fn memory(&self) -> Option<(usize, usize)> {
        if self.slot.try_lock().is_err() {
            self.memory_waits.fetch_add(1, Ordering::AcqRel);
        }
        self.free_memory()
    }
    fn memory_report(&self) -> Option<(usize, usize)> {
        self.free_memory()
    }
    fn warm_up(&self) -> Result<()> {
        std::thread::sleep(self.warm_up_time);
        Ok(())
    }
    fn streams_bases(&self) -> bool {
        self.streams
    }
    fn copies_resident_bases(&self) -> bool {
        true
    }
    fn prepare(&self, bases: &HostBases, placement: Placement) -> Result<DeviceBases> {
        let bytes = self.resident_bytes(bases.group(), bases.len(), 1);
        if placement == Placement::Streamed && self.streams {
            self.streamed_sets.fetch_add(1, Ordering::AcqRel);
            Ok(self.tag(None))
        } else {
            self.hold(bytes);
            Ok(self.tag(Some(bases.clone())))
        }
    }
    fn ntt(&self, values: &mut [Scalar], inverse: bool) -> Result<()> {
        CpuBackend.ntt(values, inverse)
    }
    fn compute_h(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()> {
        let key = digest(&[a, b, c], &[]);
        if let Some(h) = self.h_cache.lock().unwrap().get(&key) {
            a.clear();
            a.extend_from_slice(h);
            return Ok(());
        }
        CpuBackend.compute_h(a, b, c)?;
        self.h_cache.lock().unwrap().insert(key, a.clone());
        Ok(())
    }
    fn matrices_bytes(&self, _shape: &RecordedShape) -> Option<usize> {
        self.matrices_bytes
    }
    fn prepare_matrices(&self, shape: &RecordedShape) -> Result<DeviceMatrices> {
        let bytes = self
            .matrices_bytes
            .ok_or_else(|| super::abc_on_the_host(self.name()))?;
        self.in_use.fetch_add(bytes, Ordering::AcqRel);
        self.matrices_prepared.fetch_add(1, Ordering::AcqRel);
        Ok(DeviceMatrices {
            device: Arc::new((self.id, shape.clone())),
            bytes,
            rows: shape.num_rows(),
        })
    }
    fn stages_witnesses(&self) -> bool {
        self.matrices_bytes.is_some()
    }
    fn msm_plan(&self, bases_len: usize, input: &MsmInput<'_>) -> Result<Option<MsmPlan>> {
        match input.scalars {
            MsmScalars::Host(s) if self.plans_msms => {
                self.plans_made.fetch_add(1, Ordering::AcqRel);
                let made_for = (s.len(), bases_len, input.base_offset);
                let plan = MsmPlan::new("simulated", s, input, bases_len, Box::new(made_for));
                Ok(Some(plan))
            }
            _ => Ok(None),
        }
    }
    fn stages_abc(&self) -> bool {
        self.stages_abc
    }
    fn stage_abc(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Option<StagedWitness>> {
        if !self.stages_abc {
            return Ok(None);
        }
        self.staged.fetch_add(1, Ordering::AcqRel);
        Ok(Some(StagedWitness {
            device: Box::new(self.id),
            backend: "simulated",
            generation: 0,
            of: StagedWitness::fingerprint(&[a, b, c]),
        }))
    }
    fn compute_h_on_device(
        &self,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
        staged: Option<StagedWitness>,
    ) -> Result<Option<DeviceWitness>> {
        if let Some(w) = staged {
            // a, b and c staged elsewhere, or from other vectors, are a bug
            // the engine's tests must see.
            if w.device.downcast_ref::<usize>() != Some(&self.id)
                || !w.is_of("simulated", 0, &[a, b, c])
            {
                return Err(Error::Backend {
                    backend: "simulated",
                    message: format!("a, b and c that device {} did not stage", self.id),
                });
            }
            self.staged_used.fetch_add(1, Ordering::AcqRel);
        }
        // H itself is computed on the host (the caller's compute_h).
        Ok(None)
    }
    fn stage_witness(
        &self,
        matrices: &DeviceMatrices,
        input: &[Scalar],
        aux: &[Scalar],
    ) -> Result<Option<StagedWitness>> {
        self.shape_of(matrices)?;
        self.staged.fetch_add(1, Ordering::AcqRel);
        Ok(Some(StagedWitness {
            device: Box::new((self.id, input.len(), aux.len())),
            backend: "simulated",
            generation: 0,
            of: StagedWitness::fingerprint(&[input, aux]),
        }))
    }
    fn compute_h_from_witness(
        &self,
        matrices: &DeviceMatrices,
        input: &[Scalar],
        aux: &[Scalar],
        staged: Option<StagedWitness>,
        check: bool,
    ) -> Result<WitnessH> {
        let shape = self.shape_of(matrices)?;
        if let Some(w) = staged {
            // A witness staged elsewhere, or for another witness, is a bug the
            // engine's tests must see.
            match w.device.downcast_ref::<(usize, usize, usize)>() {
                Some(&(id, i, a)) if id == self.id && (i, a) == (input.len(), aux.len()) => {
                    self.staged_used.fetch_add(1, Ordering::AcqRel);
                }
                _ => {
                    return Err(Error::Backend {
                        backend: "simulated",
                        message: format!("a staged witness that device {} did not stage", self.id),
                    })
                }
            }
        }
        let [mut a, mut b, mut c] = shape.evaluate(input, aux);
        if check {
            if let Some(row) = (0..a.len()).find(|&i| a[i] * b[i] != c[i]) {
                return Ok(WitnessH::Unsatisfied(row));
            }
        }
        self.compute_h(&mut a, &mut b, &mut c)?;
        Ok(WitnessH::H(a))
    }
    fn msm_sums(&self, bases: BasesRef<'_>, inputs: &[MsmInput<'_>]) -> Result<Sums> {
        let device = match bases {
            BasesRef::G1(b) => &b.device,
            BasesRef::G2(b) => &b.device,
        };
        let tag = self.check_binding(device)?;
        // What the device reads: its own copy of resident bases, else the host's.
        let (g1, g2);
        let (bases, points) = match (bases, &tag.copy) {
            (BasesRef::G1(_), Some(HostBases::G1(copy))) => {
                g1 = Bases::<G1> {
                    host: Some(copy.clone()),
                    device: None,
                };
                (BasesRef::G1(&g1), Arc::as_ptr(copy) as usize)
            }
            (BasesRef::G2(_), Some(HostBases::G2(copy))) => {
                g2 = Bases::<G2> {
                    host: Some(copy.clone()),
                    device: None,
                };
                (BasesRef::G2(&g2), Arc::as_ptr(copy) as usize)
            }
            (BasesRef::G1(b), _) => (bases, b.host()?.as_ref() as *const _ as usize),
            (BasesRef::G2(b), _) => (bases, b.host()?.as_ref() as *const _ as usize),
        };
        let bases_len = match bases {
            BasesRef::G1(b) => b.host()?.len(),
            BasesRef::G2(b) => b.host()?.len(),
        };
        for i in inputs {
            if let MsmScalars::Planned(s, plan) = i.scalars {
                let made_for = plan
                    .made_by("simulated", s, i, bases_len)?
                    .and_then(|p| p.downcast_ref::<(usize, usize, usize)>());
                if made_for != Some(&(s.len(), bases_len, i.base_offset)) {
                    return Err(Error::Invalid(format!(
                        "an MSM plan made for {made_for:?} was given to an MSM of {} scalars over {bases_len} bases from {}",
                        s.len(),
                        i.base_offset
                    )));
                }
                self.plans_used.fetch_add(1, Ordering::AcqRel);
            }
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        points.hash(&mut h);
        for i in inputs {
            i.base_offset.hash(&mut h);
            i.density.map(|d| d.words()).hash(&mut h);
            digest(&[i.scalars.host("simulated")?], &[]).hash(&mut h);
        }
        let key = h.finish();
        if let Some(s) = self.msm_cache.lock().unwrap().get(&key) {
            return Ok(s.clone());
        }
        let sums = CpuBackend.msm_sums(bases, inputs)?;
        self.msm_cache.lock().unwrap().insert(key, sums.clone());
        Ok(sums)
    }
    /// The device steps of one proof: computed (or replayed) first, then one
    /// slot held for `g1_time`; the configured failures happen here.
    fn device_time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Option<Duration>> {
        let call = self.calls.fetch_add(1, Ordering::AcqRel) + 1;
        if self
            .fail_call
            .is_some_and(|from| (from..=self.fail_until).contains(&call))
        {
            let message = format!("injected failure on call {call}");
            if self.fail_after_work && self.fail_call == Some(call) {
                // What the steps return no longer matters: the device is gone.
                let _ = work();
            }
            return Err(if self.fail_lost {
                Error::DeviceLost {
                    backend: "simulated",
                    message,
                }
            } else {
                Error::Backend {
                    backend: "simulated",
                    message,
                }
            });
        }
        work()?;
        let _slot = self.slot.lock().unwrap();
        std::thread::sleep(self.g1_time);
        Ok(Some(self.g1_time))
    }
    /// Device work off a critical path: computed, then the slot held for
    /// `off_path_time`; no failure is injected here.
    fn busy_time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Option<Duration>> {
        work()?;
        if !self.off_path_time.is_zero() {
            let _slot = self.slot.lock().unwrap();
            std::thread::sleep(self.off_path_time);
        }
        Ok(Some(self.off_path_time))
    }
}

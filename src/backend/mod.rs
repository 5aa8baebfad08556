//! The `Backend` trait and its types: the operations a device offers a proof.
//!
//! Fine operations only — NTT, H, and MSMs over either group — each callable on
//! its own by tests and benchmarks. The steps of a proof that compose them live
//! in [`crate::groth16::steps`]; where bases are kept is decided by the engine's
//! placement ([`crate::groth16::placement`]) and passed in as a [`Placement`].

pub mod cpu;
mod gpu;
mod group;
mod select;
pub mod simulated;

use std::sync::Arc;

use crate::density::Density;
use crate::error::{Error, Result};
use crate::synthesis::RecordedShape;
use crate::Scalar;

/// A circuit shape's constraint matrices held by one device
/// ([`Backend::prepare_matrices`]).
pub struct DeviceMatrices {
    pub(crate) device: Arc<dyn std::any::Any + Send + Sync>,
    /// Device bytes they hold.
    pub bytes: usize,
    /// Constraint rows (input rows included).
    pub rows: usize,
}

/// What a backend that cannot fault its device on purpose answers a drill.
pub(crate) fn cannot_fault(backend: &str) -> Error {
    Error::Invalid(format!(
        "the {backend} backend cannot fault its device on purpose"
    ))
}

/// The refusal of a backend that holds no constraint matrices.
pub(crate) fn abc_on_the_host(backend: &str) -> Error {
    Error::Invalid(format!(
        "the {backend} backend computes a, b and c on the host"
    ))
}

/// What [`Backend::compute_h_from_witness`] found.
#[derive(Debug)]
pub enum WitnessH {
    /// H's m − 1 coefficients.
    H(Vec<Scalar>),
    /// H computed on the device and kept there with the witness, for MSMs
    /// that read them in place ([`MsmScalars::Device`]).
    OnDevice(DeviceWitness),
    /// The first row with a·b ≠ c: no H was computed.
    Unsatisfied(usize),
}

/// A proof's vectors sent to a device ahead of its H while the previous
/// proof's kernels run there: a witness-only proof's input and aux
/// ([`Backend::stage_witness`], taken by [`Backend::compute_h_from_witness`]),
/// or a proof's a, b and c ([`Backend::stage_abc`], taken by
/// [`Backend::compute_h_on_device`]), in place of an upload. Dropping it
/// frees the device memory.
pub struct StagedWitness {
    pub(crate) device: Box<dyn std::any::Any + Send + Sync>,
    /// The backend and device context that hold it.
    pub(crate) backend: &'static str,
    pub(crate) generation: u64,
    /// [`StagedWitness::fingerprint`] of the vectors sent.
    pub(crate) of: u64,
}

impl StagedWitness {
    /// What identifies the host vectors a staged copy was made from: where
    /// they are, their lengths and a sample of their values, so that a copy
    /// handed to another proof's H is refused, not used.
    pub(crate) fn fingerprint(vectors: &[&[Scalar]]) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for v in vectors {
            (v.as_ptr() as usize, v.len()).hash(&mut h);
            let step = (v.len() / 16).max(1);
            for x in v.iter().step_by(step) {
                x.to_bytes_le().hash(&mut h);
            }
        }
        h.finish()
    }

    /// Whether this copy was made by `backend`'s context `generation` from
    /// `vectors`.
    pub(crate) fn is_of(&self, backend: &str, generation: u64, vectors: &[&[Scalar]]) -> bool {
        self.backend == backend
            && self.generation == generation
            && self.of == Self::fingerprint(vectors)
    }
}

impl std::fmt::Debug for StagedWitness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StagedWitness({})", self.backend)
    }
}

/// Which of a proof's vectors held on a device an MSM reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WitnessPart {
    Input,
    Aux,
    /// H's m − 1 coefficients.
    H,
}

/// A witness-only proof's input, aux and H held by one device
/// ([`WitnessH::OnDevice`]): uploaded once for every MSM of its critical path
/// instead of once an MSM, and H never brought back to the host; or H alone
/// ([`Backend::compute_h_on_device`]). Dropping it frees the device memory.
pub struct DeviceWitness {
    pub(crate) device: Box<dyn std::any::Any + Send + Sync>,
    /// The backend and device context that hold it.
    pub(crate) backend: &'static str,
    pub(crate) generation: u64,
    /// Scalars of the input, the aux and H; None for a part it does not hold.
    pub(crate) lens: [Option<usize>; 3],
}

impl DeviceWitness {
    /// Scalars in `part` (0 where it does not hold it).
    pub fn len(&self, part: WitnessPart) -> usize {
        self.lens[part as usize].unwrap_or(0)
    }

    /// Whether it holds `part`.
    pub fn holds(&self, part: WitnessPart) -> bool {
        self.lens[part as usize].is_some()
    }
}

impl std::fmt::Debug for DeviceWitness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = |part| match self.lens[part as usize] {
            Some(n) => n.to_string(),
            None => "no".into(),
        };
        write!(
            f,
            "DeviceWitness({}: {} inputs, {} aux, {} H coefficients)",
            self.backend,
            len(WitnessPart::Input),
            len(WitnessPart::Aux),
            len(WitnessPart::H)
        )
    }
}

/// An MSM's scalars: in host memory (with the host's share of their MSM made
/// ahead, or not), or one of a proof's vectors on the backend's device.
#[derive(Clone, Copy, Debug)]
pub enum MsmScalars<'a> {
    Host(&'a [Scalar]),
    /// Host scalars and their [`MsmPlan`], made from these scalars and the
    /// input's density and bases by [`Backend::msm_plan`].
    Planned(&'a [Scalar], &'a MsmPlan),
    Device(&'a DeviceWitness, WitnessPart),
}

/// The host's share of one MSM input, made ahead by [`Backend::msm_plan`] so
/// that it can run beside the device's work (wgpu: the scalars split into
/// zeros, ones and the rest). The backend that made it reads it for the
/// input it was made from and refuses it for another; other backends read the
/// scalars as they are.
pub struct MsmPlan {
    backend: &'static str,
    /// What identifies the input it was made from: [`Self::input_of`].
    of: u64,
    inner: Box<dyn std::any::Any + Send + Sync>,
}

impl MsmPlan {
    /// `backend`'s plan of `scalars` (the host scalars of `input`) over
    /// `bases_len` bases.
    pub fn new(
        backend: &'static str,
        scalars: &[Scalar],
        input: &MsmInput<'_>,
        bases_len: usize,
        inner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Self {
        let of = Self::input_of(scalars, input, bases_len);
        MsmPlan { backend, of, inner }
    }

    /// Where the scalars and the density are, their lengths, a sample of the
    /// scalars, the first base and the bases' count: what decides a plan.
    fn input_of(scalars: &[Scalar], input: &MsmInput<'_>, bases_len: usize) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        StagedWitness::fingerprint(&[scalars]).hash(&mut h);
        input
            .density
            .map(|d| (d.words().as_ptr() as usize, d.len()))
            .hash(&mut h);
        (input.base_offset, bases_len).hash(&mut h);
        h.finish()
    }

    /// What `backend` made for the input `scalars` and `input` over
    /// `bases_len` bases; None where another backend made the plan, an error
    /// where it was made for another input.
    pub fn made_by(
        &self,
        backend: &str,
        scalars: &[Scalar],
        input: &MsmInput<'_>,
        bases_len: usize,
    ) -> Result<Option<&(dyn std::any::Any + Send + Sync)>> {
        if self.backend != backend {
            return Ok(None);
        }
        if self.of != Self::input_of(scalars, input, bases_len) {
            return Err(Error::Invalid(format!(
                "an MSM plan of the {backend} backend was given to an MSM of other scalars, density or bases than it was made for"
            )));
        }
        Ok(Some(self.inner.as_ref()))
    }
}

impl std::fmt::Debug for MsmPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MsmPlan({})", self.backend)
    }
}

impl<'a> MsmScalars<'a> {
    pub fn len(&self) -> usize {
        match self {
            MsmScalars::Host(s) | MsmScalars::Planned(s, _) => s.len(),
            MsmScalars::Device(w, part) => w.len(*part),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The host scalars, or an error naming `backend` for scalars it cannot
    /// read (they are on a device).
    pub fn host(&self, backend: &str) -> Result<&'a [Scalar]> {
        match self {
            MsmScalars::Host(s) | MsmScalars::Planned(s, _) => Ok(s),
            MsmScalars::Device(w, part) => Err(Error::Invalid(format!(
                "the {backend} backend cannot read the {part:?} scalars held by the {} device",
                w.backend
            ))),
        }
    }
}

pub use cpu::CpuBackend;

/// The window table's length [`Backend::fixed_base_mul_g1`] takes.
pub use crossgroth_gpu_host::FIXED_BASE_TABLE_LEN;
pub use gpu::{
    AdapterChoice, CudaBackend, CudaOptions, DeviceApi, GpuBackend, WgpuBackend, WgpuOptions,
};
pub use group::{
    Bases, BasesRef, Curve, DeviceBases, G1Bases, G2Bases, Group, HostBases, MsmGroup, Placement,
    Sums, G1, G2,
};
pub use select::{
    available_backends, open_backend, open_backend_with, open_backends, BackendKind,
    BackendOptions, BackendReport,
};

/// One scalar vector of an MSM. With a density, `scalars` has one entry per variable
/// and the k-th variable whose bit is set pairs with base `base_offset + k`; without,
/// `scalars[i]` pairs with base `base_offset + i`.
#[derive(Clone, Copy)]
pub struct MsmInput<'a> {
    pub scalars: MsmScalars<'a>,
    pub density: Option<&'a Density>,
    pub base_offset: usize,
}

impl<'a> MsmInput<'a> {
    pub fn dense(scalars: &'a [Scalar]) -> Self {
        Self::dense_of(MsmScalars::Host(scalars))
    }

    /// Every scalar of `scalars`, wherever they are, with bases from 0.
    pub fn dense_of(scalars: MsmScalars<'a>) -> Self {
        MsmInput {
            scalars,
            density: None,
            base_offset: 0,
        }
    }

    /// Number of bases this input reads, checked against the scalar count.
    pub fn bases_needed(&self) -> Result<usize> {
        let used = match self.density {
            Some(d) => {
                if d.len() != self.scalars.len() {
                    return Err(Error::Invalid(format!(
                        "density of {} bits for {} scalars",
                        d.len(),
                        self.scalars.len()
                    )));
                }
                d.count()
            }
            None => self.scalars.len(),
        };
        Ok(self.base_offset + used)
    }
}

pub trait Backend: Send + Sync {
    /// Short name: `cpu`, `cuda`, `wgpu`.
    fn name(&self) -> &'static str;

    /// The device this backend runs on, in words.
    fn device(&self) -> String;

    /// Whether the work runs on a device beside the host's cores (so that moving
    /// a step to the CPU frees the device for the next proof).
    fn has_device(&self) -> bool {
        false
    }

    /// Whether bases placed resident are copied to the device, so that MSMs
    /// over them need no host copy (see `PlacementConfig::release_host_copies`).
    fn copies_resident_bases(&self) -> bool {
        false
    }

    /// Whether this backend's device runs a parameter setup's fixed-base
    /// products ([`Self::fixed_base_mul_g1`] and `_g2` answer Some).
    fn has_setup_kernels(&self) -> bool {
        false
    }

    /// `out[i] = scalars[i]·G` in affine form, G given by its window table of
    /// [`FIXED_BASE_TABLE_LEN`] points (entry w·256 + b is b·2^(8w)·G): the
    /// same points, bit for bit, as adding the entries on the host. None: the
    /// backend has no kernels for it (the caller uses the host's cores).
    fn fixed_base_mul_g1(
        &self,
        _table: &[crate::G1Affine],
        _scalars: &[Scalar],
        _out: &mut [crate::G1Affine],
    ) -> Option<Result<()>> {
        None
    }

    /// [`Self::fixed_base_mul_g1`] for G2.
    fn fixed_base_mul_g2(
        &self,
        _table: &[crate::G2Affine],
        _scalars: &[Scalar],
        _out: &mut [crate::G2Affine],
    ) -> Option<Result<()>> {
        None
    }

    /// Keeps a set of bases where `placement` says and returns what the device
    /// holds for them.
    fn prepare(&self, bases: &HostBases, placement: Placement) -> Result<DeviceBases>;

    /// Whether this backend can leave bases in host memory and stream them to
    /// its device per MSM ([`Placement::Streamed`]).
    fn streams_bases(&self) -> bool {
        false
    }

    /// The most precomputed copies per base this backend makes (1: none).
    fn max_table_copies(&self) -> u32 {
        1
    }

    /// Device bytes a resident set of `len` bases with at most `max_copies`
    /// copies per base takes.
    fn resident_bytes(&self, group: Group, len: usize, max_copies: u32) -> usize {
        let _ = max_copies;
        len * match group {
            Group::G1 => G1::AFFINE_BYTES,
            Group::G2 => G2::AFFINE_BYTES,
        }
    }

    /// Device bytes an MSM of `len` terms needs beside its bases.
    fn msm_scratch_bytes(&self, len: usize) -> usize {
        let _ = len;
        0
    }

    /// Host bytes [`Backend::compute_h`] allocates beyond the assignment's a, b and c
    /// of `rows` evaluations each (padding to the domain, host scratch), so that
    /// the engine's admission charges them. The CPU pads all three to the domain
    /// and keeps two coset tables of its size.
    fn h_host_bytes(&self, rows: usize) -> usize {
        let m = rows.max(1).next_power_of_two();
        (3 * (m - rows) + 2 * m) * std::mem::size_of::<Scalar>()
    }

    /// In-place radix-2 NTT of a power-of-two-length vector (inverse includes the
    /// division by its length).
    fn ntt(&self, values: &mut [Scalar], inverse: bool) -> Result<()>;

    /// H: the m − 1 coefficients of (A·B − C)/Z, for a, b, c of equal length
    /// n ≤ m = 2^⌈log2 n⌉. Works in place: on return `a` holds H, and `b` and `c`
    /// are spent scratch the caller releases (so that the engine can free them
    /// off the hot path).
    fn compute_h(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()>;

    /// [`Backend::compute_h`] with H kept on the device for the H MSM to read
    /// in place: a [`DeviceWitness`] that holds H alone. None where the
    /// backend brings H back (the caller then calls `compute_h`).
    ///
    /// `staged`: these a, b and c sent ahead by [`Backend::stage_abc`], used
    /// instead of writing them again.
    fn compute_h_on_device(
        &self,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
        staged: Option<StagedWitness>,
    ) -> Result<Option<DeviceWitness>> {
        let _ = (a, b, c, staged);
        Ok(None)
    }

    /// The host's share of an MSM of `input` over `bases_len` bases, made now
    /// on the calling thread, so that a caller can make it while the device
    /// runs other work and hand it to [`Msm::msm`] as
    /// [`MsmScalars::Planned`] with the same input. None where the backend
    /// has no such share or `input`'s scalars are not on the host.
    fn msm_plan(&self, bases_len: usize, input: &MsmInput<'_>) -> Result<Option<MsmPlan>> {
        let _ = (bases_len, input);
        Ok(None)
    }

    /// Whether [`Backend::stage_abc`] sends a, b and c ahead (the device then
    /// holds the next proof's a, b and c beside the current proof's H).
    fn stages_abc(&self) -> bool {
        false
    }

    /// Sends a proof's a, b and c to the device without waiting for the work
    /// other threads run there, so that a caller can write the next proof's
    /// while the current one's MSMs run; returns once they are on the device.
    /// None where the backend does not stage them.
    fn stage_abc(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Option<StagedWitness>> {
        let _ = (a, b, c);
        Ok(None)
    }

    /// Device bytes a circuit shape's constraint matrices take resident, where
    /// this backend computes a, b and c from a witness on its device; None
    /// where they are computed on the host.
    fn matrices_bytes(&self, shape: &RecordedShape) -> Option<usize> {
        let _ = shape;
        None
    }

    /// Keeps `shape`'s constraint matrices on the device, for
    /// [`Backend::compute_h_from_witness`].
    fn prepare_matrices(&self, shape: &RecordedShape) -> Result<DeviceMatrices> {
        let _ = shape;
        Err(abc_on_the_host(self.name()))
    }

    /// H (as [`Backend::compute_h`]) from a witness of the shape `matrices`
    /// were prepared from, a, b and c computed on the device; with `check`,
    /// the first row whose a·b ≠ c instead, where there is one. A backend
    /// whose MSMs read device scalars keeps H there with the witness
    /// ([`WitnessH::OnDevice`]).
    ///
    /// `staged`: the same witness sent ahead by [`Backend::stage_witness`] on
    /// this backend, used instead of uploading `input` and `aux` again.
    fn compute_h_from_witness(
        &self,
        matrices: &DeviceMatrices,
        input: &[Scalar],
        aux: &[Scalar],
        staged: Option<StagedWitness>,
        check: bool,
    ) -> Result<WitnessH> {
        let _ = (matrices, input, aux, staged, check);
        Err(abc_on_the_host(self.name()))
    }

    /// Whether [`Backend::stage_witness`] sends witnesses ahead (the device
    /// then holds one more witness beside a proof's working buffers).
    fn stages_witnesses(&self) -> bool {
        false
    }

    /// Sends a witness of `matrices`' shape to the device without waiting for
    /// the work other threads run there, so that a caller can upload the next
    /// proof's witness while the current one's MSMs run; returns once it is
    /// on the device. None where the backend does not stage witnesses.
    fn stage_witness(
        &self,
        matrices: &DeviceMatrices,
        input: &[Scalar],
        aux: &[Scalar],
    ) -> Result<Option<StagedWitness>> {
        let _ = (matrices, input, aux);
        Ok(None)
    }

    /// Several MSMs over one set of prepared bases (call it through [`Msm::msm`]).
    fn msm_sums(&self, bases: BasesRef<'_>, inputs: &[MsmInput<'_>]) -> Result<Sums>;

    /// Free and total device memory in bytes, where the backend has a device:
    /// what another allocation could get now. A backend may first wait for
    /// its device's queued work and give back memory it keeps for reuse, so
    /// this is for decisions (placement), not for frequent reports.
    fn memory(&self) -> Option<(usize, usize)> {
        None
    }

    /// Free and total device memory for a report (the daemon's status, which
    /// its clients ask for before every task): never waits for the device
    /// and changes nothing it keeps; memory the backend keeps for its own
    /// reuse counts as free.
    fn memory_report(&self) -> Option<(usize, usize)> {
        self.memory()
    }

    /// Builds now what the backend would build on first use (wgpu: its compute
    /// pipelines, seconds on some drivers), so that the first timed call
    /// measures its work alone.
    fn warm_up(&self) -> Result<()> {
        Ok(())
    }

    /// Runs `work` (one proof's device steps) and returns how long the device
    /// was busy with it, measured with device events (CUDA events, GPU
    /// timestamps); None for a backend without a device clock, whose callers
    /// time with the host clock.
    fn device_time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<std::time::Duration>> {
        work()?;
        Ok(None)
    }

    /// Runs device work off a proof's critical path (a B_G2 that runs on the
    /// device after it, in the finalizer) and returns how long the device was
    /// busy with it, for the device's busy time; not a critical path (a test
    /// double holds its device for one and injects its failures there, not
    /// here). None: not measured apart, and the caller adds nothing: the
    /// backend has no device clock, or its clock times everything on the
    /// device between a critical path's start and end (cuda's events on its
    /// stream), which already counts such work where the two overlap.
    fn busy_time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Option<std::time::Duration>> {
        work()?;
        Ok(None)
    }

    /// Spoils this backend's device for the rest of the process as a kernel
    /// fault would (cuda: a trapping kernel), for drills of a device lost in
    /// the middle of a run; an error where the backend cannot.
    #[doc(hidden)]
    fn inject_fault_for_tests(&self) -> Result<()> {
        Err(cannot_fault(self.name()))
    }
}

/// MSMs and bases of either group through any backend, typed by the group.
pub trait Msm {
    /// Bases of group `C` kept where `placement` says.
    fn prepare_bases<C: MsmGroup>(
        &self,
        bases: Arc<Vec<C::Base>>,
        placement: Placement,
    ) -> Result<Bases<C>>;

    /// Several MSMs over one set of bases of group `C`.
    fn msm<C: MsmGroup>(&self, bases: &Bases<C>, inputs: &[MsmInput<'_>])
        -> Result<Vec<C::Output>>;
}

impl<B: Backend + ?Sized> Msm for B {
    fn prepare_bases<C: MsmGroup>(
        &self,
        bases: Arc<Vec<C::Base>>,
        placement: Placement,
    ) -> Result<Bases<C>> {
        let device = self.prepare(&C::host(bases.clone()), placement)?;
        Ok(Bases {
            host: Some(bases),
            device,
        })
    }

    fn msm<C: MsmGroup>(
        &self,
        bases: &Bases<C>,
        inputs: &[MsmInput<'_>],
    ) -> Result<Vec<C::Output>> {
        C::unwrap(self.msm_sums(C::wrap(bases), inputs)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held_by(backend: &'static str) -> DeviceWitness {
        DeviceWitness {
            device: Box::new(()),
            backend,
            generation: 0,
            lens: [Some(2), Some(5), Some(7)],
        }
    }

    #[test]
    fn device_scalars_have_their_part_s_length() {
        let w = held_by("cuda");
        assert_eq!(MsmScalars::Device(&w, WitnessPart::Input).len(), 2);
        assert_eq!(MsmScalars::Device(&w, WitnessPart::Aux).len(), 5);
        assert_eq!(MsmScalars::Device(&w, WitnessPart::H).len(), 7);
        assert_eq!(MsmScalars::Host(&[]).len(), 0);
    }

    #[test]
    fn a_host_backend_refuses_device_scalars_by_name() {
        let w = held_by("cuda");
        let bases = CpuBackend
            .prepare_bases::<G1>(
                Arc::new(
                    vec![<crate::G1Affine as ::group::prime::PrimeCurveAffine>::generator(); 7],
                ),
                Placement::Streamed,
            )
            .unwrap();
        let input = MsmInput::dense_of(MsmScalars::Device(&w, WitnessPart::H));
        match CpuBackend.msm(&bases, &[input]) {
            Err(Error::Invalid(m)) => assert!(m.contains("cpu") && m.contains("cuda"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}

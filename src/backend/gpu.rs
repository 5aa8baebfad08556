//! Adapters from the GPU backend crates to the [`Backend`](super::Backend) trait.
//!
//! The crates speak blst's repr(C) types and know nothing of Groth16; both offer the
//! same operations, so one generic adapter, [`GpuBackend`], serves them through the
//! small [`DeviceApi`] trait. blstrs' types are `repr(transparent)` over blst's, so
//! slices are reinterpreted, never copied.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use blst::blst_fr;

use super::{
    cpu, Backend, Bases, BasesRef, Curve, DeviceBases, DeviceMatrices, DeviceWitness, Group,
    HostBases, MsmGroup, MsmInput, MsmScalars, Placement, Sums, WitnessH, WitnessPart, G1, G2,
};
use crate::error::{Error, Result};
use crate::synthesis::RecordedShape;
use crate::Scalar;

pub use cuda::CudaOptions;
pub use wgpu::{AdapterChoice, WgpuOptions};

/// What a GPU crate offers, in its own types and errors.
pub trait DeviceApi: Send + Sync + 'static {
    const NAME: &'static str;
    /// Bases of one group as the crate keeps them.
    type Bases<C: Curve>: Send + Sync + 'static;
    type Error: std::fmt::Display;

    /// Whether an error means "no such device here" rather than a failure.
    fn is_unavailable(e: &Self::Error) -> bool;
    /// Whether an error leaves the device context unusable (a CUDA launch error
    /// poisons the whole context; a lost wgpu device is gone): the adapter then
    /// rebuilds the context.
    fn is_fatal(e: &Self::Error) -> bool;
    fn describe(&self) -> String;
    /// Where a setup can run its fixed-base products on this device.
    fn setup_device(_device: &Arc<Self>) -> crate::groth16::SetupDevice {
        crate::groth16::SetupDevice::Cpu
    }
    /// Whether the crate can stream bases from host memory.
    const STREAMS: bool = false;
    /// The most precomputed copies per base the crate makes (1: none).
    fn max_table_copies(&self) -> u32 {
        1
    }
    /// Device bytes `len` resident bases with at most `max_copies` copies take.
    fn resident_bytes<C: Curve>(&self, len: usize, max_copies: u32) -> usize {
        let _ = max_copies;
        len * C::AFFINE_BYTES
    }
    /// Device bytes an MSM of `len` terms needs beside its bases.
    fn msm_scratch_bytes(&self, len: usize) -> usize {
        let _ = len;
        0
    }
    /// Bases kept where `placement` says (streamed only where [`Self::STREAMS`]).
    fn upload<C: MsmGroup>(
        &self,
        bases: &Arc<Vec<C::Base>>,
        placement: Placement,
    ) -> Result<Self::Bases<C>, Self::Error>;
    fn bases_len<C: Curve>(bases: &Self::Bases<C>) -> usize;
    /// Σ scalars[i] · bases[first + rank(i)] (rank: the crates' `msm`): an input
    /// whose bases begin at `first` (the auxiliary part of A and B, after the
    /// inputs' bases).
    fn msm<C: Curve>(
        &self,
        bases: &Self::Bases<C>,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<C::Point, Self::Error>;
    fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), Self::Error>;
    fn compute_h(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<Vec<blst_fr>, Self::Error>;
    /// compute_h with H's 2^log_m − 1 coefficients written over a (at least
    /// that long); a crate that can download into a's memory saves a fresh
    /// vector's page faults and a copy.
    fn compute_h_in_place(
        &self,
        a: &mut [blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<(), Self::Error> {
        let h = self.compute_h(a, b, c, log_m)?;
        a[..h.len()].copy_from_slice(&h);
        Ok(())
    }
    /// Device bytes `shape`'s constraint matrices take resident, where the
    /// crate computes a, b and c from a witness (None: it does not).
    fn matrices_bytes(&self, shape: &RecordedShape) -> Option<usize> {
        let _ = shape;
        None
    }
    /// `shape`'s matrices on the device (None: the crate does not hold them).
    fn upload_matrices(
        &self,
        shape: &RecordedShape,
    ) -> Option<Result<Arc<dyn Any + Send + Sync>, Self::Error>> {
        let _ = shape;
        None
    }
    /// H from a witness and matrices [`Self::upload_matrices`] made, kept on
    /// the device with the witness (the crate's witness type, for
    /// [`Self::msm_witness`]); with `check`, the first unsatisfied row instead
    /// where there is one. None: the crate does not hold matrices.
    #[allow(clippy::type_complexity)]
    fn witness_h(
        &self,
        matrices: &(dyn Any + Send + Sync),
        input: &[blst_fr],
        aux: &[blst_fr],
        log_m: u32,
        check: bool,
    ) -> Option<Result<Result<Box<dyn Any + Send + Sync>, usize>, Self::Error>> {
        let _ = (matrices, input, aux, log_m, check);
        None
    }
    /// [`Self::msm`] of one of the vectors of a witness [`Self::witness_h`]
    /// made, read on the device (None: not such a witness).
    fn msm_witness<C: Curve>(
        &self,
        bases: &Self::Bases<C>,
        first: usize,
        witness: &(dyn Any + Send + Sync),
        part: WitnessPart,
        density: Option<&[u64]>,
    ) -> Option<Result<C::Point, Self::Error>> {
        let _ = (bases, first, witness, part, density);
        None
    }
    /// Runs `work`, returning its result and the device time it took.
    fn time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<(Result<()>, Duration), Self::Error>;
    fn memory(&self) -> Option<(usize, usize)>;
    /// Builds what the crate would build on first use.
    fn warm_up(&self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The part of a [`DeviceApi`] impl that only forwards to the crate's methods of the
/// same shape (both GPU crates name them alike).
macro_rules! forward_device_api {
    ($dev:ty, $e:ty) => {
        fn bases_len<C: Curve>(bases: &Self::Bases<C>) -> usize {
            bases.len()
        }
        fn msm<C: Curve>(&self, b: &Self::Bases<C>, first: usize, s: &[blst_fr], d: Option<&[u64]>) -> Result<C::Point, $e> {
            <$dev>::msm::<C>(self, b, first, s, d)
        }
        fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), $e> {
            <$dev>::ntt(self, data, log_n, inverse)
        }
        fn compute_h(&self, a: &[blst_fr], b: &[blst_fr], c: &[blst_fr], log_m: u32) -> Result<Vec<blst_fr>, $e> {
            <$dev>::compute_h(self, a, b, c, log_m)
        }
        fn time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<(Result<()>, Duration), $e> {
            <$dev>::time(self, |_| Ok(work()))
        }
    };
}

pub(crate) mod cuda;
mod wgpu;

/// Opens (or reopens) the device context of a [`GpuBackend`].
type Opener<D> = Box<dyn Fn() -> Result<D, <D as DeviceApi>::Error> + Send + Sync>;

/// A GPU crate behind the `Backend` trait. After an error that leaves the context
/// unusable it opens a fresh one; bases prepared on the old context are then
/// refused (their generation is stale) and must be prepared again, which the
/// engine does after any device error.
pub struct GpuBackend<D: DeviceApi> {
    open: Opener<D>,
    inner: RwLock<Arc<D>>,
    generation: AtomicU64,
}

/// Device bases tagged with the context generation they were uploaded to.
struct Resident<T> {
    generation: u64,
    bases: T,
}

pub(crate) fn err<D: DeviceApi>(e: D::Error) -> Error {
    let reason = e.to_string();
    if D::is_unavailable(&e) {
        let reason = reason.strip_prefix("unavailable: ").unwrap_or(&reason);
        let reason = reason.strip_prefix("wgpu unavailable: ").unwrap_or(reason);
        Error::BackendUnavailable {
            backend: D::NAME,
            reason: reason.to_string(),
        }
    } else {
        Error::Backend {
            backend: D::NAME,
            message: reason,
        }
    }
}

fn fr(v: &[Scalar]) -> &[blst_fr] {
    // SAFETY: Scalar is repr(transparent) over blst_fr.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const blst_fr, v.len()) }
}

fn fr_mut(v: &mut [Scalar]) -> &mut [blst_fr] {
    // SAFETY: Scalar is repr(transparent) over blst_fr.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut blst_fr, v.len()) }
}

impl<D: DeviceApi> GpuBackend<D> {
    /// Opens the device with `open`, which is kept to rebuild the context.
    pub fn open_with_opener(
        open: impl Fn() -> Result<D, D::Error> + Send + Sync + 'static,
    ) -> Result<Self> {
        let inner = open().map_err(err::<D>)?;
        Ok(GpuBackend {
            open: Box::new(open),
            inner: RwLock::new(Arc::new(inner)),
            generation: AtomicU64::new(0),
        })
    }

    /// The crate's own handle (of the current context).
    pub fn device_handle(&self) -> Arc<D> {
        self.current().0
    }

    /// How many times the context was rebuilt.
    pub fn rebuilds(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn current(&self) -> (Arc<D>, u64) {
        let inner = self.inner.read().unwrap();
        (inner.clone(), self.generation.load(Ordering::Acquire))
    }

    /// Turns a device error into ours; a fatal one first replaces the context
    /// (once, however many calls saw it fail).
    fn fail(&self, e: D::Error, generation: u64) -> Error {
        if !D::is_fatal(&e) {
            return err::<D>(e);
        }
        let mut inner = self.inner.write().unwrap();
        let what_now = if self.generation.load(Ordering::Acquire) != generation {
            "the device context has since been rebuilt; prepare the bases again"
        } else {
            match (self.open)() {
                Ok(fresh) => {
                    *inner = Arc::new(fresh);
                    self.generation.fetch_add(1, Ordering::AcqRel);
                    log::warn!("{} context rebuilt after: {e}", D::NAME);
                    "the device context was rebuilt; prepare the bases again"
                }
                Err(again) => {
                    log::warn!("{}: opening a new device context failed: {again}", D::NAME);
                    return Error::DeviceLost {
                        backend: D::NAME,
                        message: format!("{e} (a new device context could not be opened either)"),
                    };
                }
            }
        };
        Error::Backend {
            backend: D::NAME,
            message: format!("{e} ({what_now})"),
        }
    }

    fn resident<'a, T: 'static>(&self, device: &'a DeviceBases, generation: u64) -> Result<&'a T> {
        self.resident_as(device.as_ref(), generation, "bases")
    }

    /// What this backend tagged with its context generation (`what`: bases,
    /// constraint matrices), refused if another backend or an earlier context
    /// made it.
    fn resident_as<'a, T: 'static>(
        &self,
        device: Option<&'a Arc<dyn Any + Send + Sync>>,
        generation: u64,
        what: &str,
    ) -> Result<&'a T> {
        let r = device
            .and_then(|d| d.downcast_ref::<Resident<T>>())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{what} were not prepared by the {} backend",
                    D::NAME
                ))
            })?;
        if r.generation != generation {
            return Err(Error::Backend {
                backend: D::NAME,
                message: format!(
                    "the {what} were prepared on a device context that has since been rebuilt"
                ),
            });
        }
        Ok(&r.bases)
    }

    fn prepare_placed<C: MsmGroup>(
        &self,
        bases: &Arc<Vec<C::Base>>,
        placement: Placement,
    ) -> Result<DeviceBases> {
        let (inner, generation) = self.current();
        let dev = inner
            .upload::<C>(bases, placement)
            .map_err(|e| self.fail(e, generation))?;
        Ok(Some(Arc::new(Resident {
            generation,
            bases: dev,
        })))
    }

    fn msm_on<C: MsmGroup>(
        &self,
        bases: &Bases<C>,
        inputs: &[MsmInput<'_>],
    ) -> Result<Vec<C::Output>> {
        let (inner, generation) = self.current();
        let dev: &D::Bases<C> = self.resident(&bases.device, generation)?;
        let bases_len = D::bases_len::<C>(dev);
        inputs
            .iter()
            .map(|input| {
                let needed = input.bases_needed()?;
                if needed > bases_len {
                    return Err(Error::Invalid(format!(
                        "MSM reads {needed} bases, only {bases_len} are present"
                    )));
                }
                let (first, density) = (input.base_offset, input.density.map(|d| d.words()));
                let sum = match input.scalars {
                    MsmScalars::Host(s) => inner.msm::<C>(dev, first, fr(s), density),
                    MsmScalars::Device(w, part) => {
                        let witness = self.witness_of(w, generation)?;
                        inner
                            .msm_witness::<C>(dev, first, witness, part, density)
                            .ok_or_else(|| self.not_ours(w))?
                    }
                };
                sum.map(C::from_raw).map_err(|e| self.fail(e, generation))
            })
            .collect()
    }

    /// The crate's witness inside `w`, refused if another backend or an
    /// earlier context made it.
    fn witness_of<'a>(
        &self,
        w: &'a DeviceWitness,
        generation: u64,
    ) -> Result<&'a (dyn Any + Send + Sync)> {
        if w.backend != D::NAME {
            return Err(self.not_ours(w));
        }
        if w.generation != generation {
            return Err(Error::Backend {
                backend: D::NAME,
                message: "the witness was uploaded to a device context that has since been rebuilt"
                    .into(),
            });
        }
        Ok(w.device.as_ref())
    }

    fn not_ours(&self, w: &DeviceWitness) -> Error {
        Error::Invalid(format!(
            "a witness held by the {} device was given to the {} backend",
            w.backend,
            D::NAME
        ))
    }
}

impl<D: DeviceApi> Backend for GpuBackend<D> {
    fn name(&self) -> &'static str {
        D::NAME
    }

    fn device(&self) -> String {
        self.current().0.describe()
    }

    fn setup_device(&self) -> crate::groth16::SetupDevice {
        D::setup_device(&self.current().0)
    }

    fn warm_up(&self) -> Result<()> {
        let (inner, generation) = self.current();
        inner.warm_up().map_err(|e| self.fail(e, generation))
    }

    fn has_device(&self) -> bool {
        true
    }

    fn copies_resident_bases(&self) -> bool {
        true
    }

    fn prepare(&self, bases: &HostBases, placement: Placement) -> Result<DeviceBases> {
        match bases {
            HostBases::G1(b) => self.prepare_placed::<G1>(b, placement),
            HostBases::G2(b) => self.prepare_placed::<G2>(b, placement),
        }
    }

    fn streams_bases(&self) -> bool {
        D::STREAMS
    }

    fn max_table_copies(&self) -> u32 {
        self.current().0.max_table_copies()
    }

    fn resident_bytes(&self, group: Group, len: usize, max_copies: u32) -> usize {
        let inner = self.current().0;
        match group {
            Group::G1 => inner.resident_bytes::<G1>(len, max_copies),
            Group::G2 => inner.resident_bytes::<G2>(len, max_copies),
        }
    }

    fn msm_scratch_bytes(&self, len: usize) -> usize {
        self.current().0.msm_scratch_bytes(len)
    }

    fn ntt(&self, values: &mut [Scalar], inverse: bool) -> Result<()> {
        if !values.len().is_power_of_two() {
            return Err(Error::Invalid(format!(
                "NTT length {} is not a power of two",
                values.len()
            )));
        }
        let log = values.len().trailing_zeros();
        let (inner, generation) = self.current();
        inner
            .ntt(fr_mut(values), log, inverse)
            .map_err(|e| self.fail(e, generation))
    }

    /// Only `a` grows on the host, to H's m − 1 coefficients; the device does the rest.
    fn h_host_bytes(&self, rows: usize) -> usize {
        let m = rows.max(1).next_power_of_two();
        (m - 1).saturating_sub(rows) * std::mem::size_of::<Scalar>()
    }

    fn compute_h(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()> {
        let log = crate::synthesis::log_domain(a.len())?;
        if log == 0 {
            // A one-point domain has no coefficient to return; nothing to offload.
            return cpu::ntt::compute_h(a, b, c);
        }
        if b.len() != a.len() || c.len() != a.len() {
            return Err(Error::Invalid("a, b, c have different lengths".into()));
        }
        let (inner, generation) = self.current();
        let coefficients = (1usize << log) - 1;
        if a.len() < coefficients {
            a.resize(coefficients, <Scalar as ff::Field>::ZERO);
        }
        inner
            .compute_h_in_place(fr_mut(a), fr(b), fr(c), log)
            .map_err(|e| self.fail(e, generation))?;
        a.truncate(coefficients);
        Ok(())
    }

    fn matrices_bytes(&self, shape: &RecordedShape) -> Option<usize> {
        self.current().0.matrices_bytes(shape)
    }

    fn prepare_matrices(&self, shape: &RecordedShape) -> Result<DeviceMatrices> {
        let (inner, generation) = self.current();
        let bytes = inner.matrices_bytes(shape).unwrap_or(0);
        match inner.upload_matrices(shape) {
            None => Err(super::abc_on_the_host(D::NAME)),
            Some(Err(e)) => Err(self.fail(e, generation)),
            Some(Ok(device)) => Ok(DeviceMatrices {
                device: Arc::new(Resident {
                    generation,
                    bases: device,
                }),
                bytes,
                rows: shape.num_rows(),
            }),
        }
    }

    fn compute_h_from_witness(
        &self,
        matrices: &DeviceMatrices,
        input: &[Scalar],
        aux: &[Scalar],
        check: bool,
    ) -> Result<WitnessH> {
        let (inner, generation) = self.current();
        let resident: &Arc<dyn Any + Send + Sync> =
            self.resident_as(Some(&matrices.device), generation, "constraint matrices")?;
        let log = crate::synthesis::log_domain(matrices.rows)?;
        match inner.witness_h(resident.as_ref(), fr(input), fr(aux), log, check) {
            None => Err(super::abc_on_the_host(D::NAME)),
            Some(Err(e)) => Err(self.fail(e, generation)),
            Some(Ok(Err(row))) => Ok(WitnessH::Unsatisfied(row)),
            Some(Ok(Ok(device))) => Ok(WitnessH::OnDevice(DeviceWitness {
                device,
                backend: D::NAME,
                generation,
                lens: [input.len(), aux.len(), (1usize << log) - 1],
            })),
        }
    }

    fn msm_sums(&self, bases: BasesRef<'_>, inputs: &[MsmInput<'_>]) -> Result<Sums> {
        Ok(match bases {
            BasesRef::G1(b) => Sums::G1(self.msm_on::<G1>(b, inputs)?),
            BasesRef::G2(b) => Sums::G2(self.msm_on::<G2>(b, inputs)?),
        })
    }

    fn device_time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Option<Duration>> {
        let (inner, generation) = self.current();
        let (r, took) = inner.time(work).map_err(|e| self.fail(e, generation))?;
        r?;
        Ok(Some(took))
    }

    fn memory(&self) -> Option<(usize, usize)> {
        self.current().0.memory()
    }
}

pub type CudaBackend = GpuBackend<crossgroth_cuda::CudaDevice>;
pub type WgpuBackend = GpuBackend<crossgroth_wgpu::WgpuDevice>;

#[cfg(test)]
mod tests {
    //! The context rebuild, with a device that computes on the CPU and can be told
    //! to poison its context.

    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::backend::{CpuBackend, Msm};
    use crate::{G1Affine, G1Projective};

    #[derive(Debug)]
    struct Poisoned;
    impl std::fmt::Display for Poisoned {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("illegal address")
        }
    }

    struct MockDevice {
        poison: Arc<AtomicBool>,
    }

    /// The host bases, G1 only.
    struct MockBases(Vec<G1Affine>);

    impl DeviceApi for MockDevice {
        const NAME: &'static str = "mock";
        type Bases<C: Curve> = MockBases;
        type Error = Poisoned;
        fn is_unavailable(_: &Poisoned) -> bool {
            false
        }
        fn is_fatal(_: &Poisoned) -> bool {
            true
        }
        fn describe(&self) -> String {
            "mock".into()
        }
        fn upload<C: MsmGroup>(
            &self,
            bases: &Arc<Vec<C::Base>>,
            _: Placement,
        ) -> Result<MockBases, Poisoned> {
            let any: &dyn std::any::Any = bases;
            let g1 = any.downcast_ref::<Arc<Vec<G1Affine>>>().ok_or(Poisoned)?;
            Ok(MockBases(g1.to_vec()))
        }
        fn bases_len<C: Curve>(b: &MockBases) -> usize {
            b.0.len()
        }
        fn msm<C: Curve>(
            &self,
            b: &MockBases,
            first: usize,
            s: &[blst_fr],
            d: Option<&[u64]>,
        ) -> Result<C::Point, Poisoned> {
            if self.poison.swap(false, Ordering::AcqRel) {
                return Err(Poisoned);
            }
            assert!(d.is_none() && C::GROUP == Group::G1);
            let scalars: Vec<Scalar> = s.iter().map(|x| Scalar::from(*x)).collect();
            let p: G1Projective =
                cpu::msm::msm::<G1>(&b.0[first..], &MsmInput::dense(&scalars)).unwrap();
            // SAFETY: G1Projective is repr(transparent) over blst_p1 (G1's point).
            let raw = unsafe { std::mem::transmute::<G1Projective, blst::blst_p1>(p) };
            let any: Box<dyn std::any::Any> = Box::new(raw);
            Ok(*any.downcast::<C::Point>().map_err(|_| Poisoned)?)
        }
        fn ntt(&self, _: &mut [blst_fr], _: u32, _: bool) -> Result<(), Poisoned> {
            Err(Poisoned)
        }
        fn compute_h(
            &self,
            _: &[blst_fr],
            _: &[blst_fr],
            _: &[blst_fr],
            _: u32,
        ) -> Result<Vec<blst_fr>, Poisoned> {
            Err(Poisoned)
        }
        fn time(
            &self,
            work: &mut dyn FnMut() -> Result<()>,
        ) -> Result<(Result<()>, Duration), Poisoned> {
            Ok((work(), Duration::ZERO))
        }
        fn memory(&self) -> Option<(usize, usize)> {
            None
        }
    }

    #[test]
    fn a_witness_of_another_backend_or_context_is_refused() {
        let gpu = GpuBackend::open_with_opener(|| {
            Ok(MockDevice {
                poison: Arc::new(AtomicBool::new(false)),
            })
        })
        .unwrap();
        let bases = Arc::new(vec![
            <G1Affine as group::prime::PrimeCurveAffine>::generator(
            );
            4
        ]);
        let prepared = gpu.prepare_bases::<G1>(bases, Placement::PLAIN).unwrap();
        let held = |backend, generation| DeviceWitness {
            device: Box::new(()),
            backend,
            generation,
            lens: [1, 3, 3],
        };
        let msm = |w: &DeviceWitness| {
            let input = MsmInput::dense_of(MsmScalars::Device(w, WitnessPart::Aux));
            gpu.msm(&prepared, &[input]).unwrap_err().to_string()
        };
        let e = msm(&held("cuda", 0));
        assert!(e.contains("cuda") && e.contains("mock"), "{e}");
        let e = msm(&held("mock", 1));
        assert!(e.contains("since been rebuilt"), "{e}");
        // The mock keeps no witnesses: one it did not make is not its own.
        let e = msm(&held("mock", 0));
        assert!(e.contains("given to the mock backend"), "{e}");
    }

    #[test]
    fn a_poisoned_context_is_rebuilt_and_old_bases_are_refused() {
        use group::Group;
        use rand_core::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let bases: Arc<Vec<G1Affine>> = Arc::new(
            (0..8)
                .map(|_| G1Affine::from(G1Projective::random(&mut rng)))
                .collect(),
        );
        let scalars: Vec<Scalar> = (0..8)
            .map(|_| <Scalar as ff::Field>::random(&mut rng))
            .collect();
        let expected = CpuBackend
            .msm::<G1>(
                &CpuBackend
                    .prepare_bases::<G1>(bases.clone(), Placement::PLAIN)
                    .unwrap(),
                &[MsmInput::dense(&scalars)],
            )
            .unwrap();

        let poison = Arc::new(AtomicBool::new(false));
        let p = poison.clone();
        let gpu =
            GpuBackend::open_with_opener(move || Ok(MockDevice { poison: p.clone() })).unwrap();
        let prepared = gpu
            .prepare_bases::<G1>(bases.clone(), Placement::PLAIN)
            .unwrap();
        assert_eq!(
            gpu.msm(&prepared, &[MsmInput::dense(&scalars)]).unwrap(),
            expected
        );

        poison.store(true, Ordering::Release);
        let e = gpu
            .msm(&prepared, &[MsmInput::dense(&scalars)])
            .unwrap_err();
        assert!(
            e.to_string().contains("illegal address") && e.to_string().contains("was rebuilt"),
            "{e}"
        );
        assert_eq!(gpu.rebuilds(), 1);

        let e = gpu
            .msm(&prepared, &[MsmInput::dense(&scalars)])
            .unwrap_err();
        assert!(e.to_string().contains("since been rebuilt"), "{e}");
        let prepared = gpu.prepare_bases::<G1>(bases, Placement::PLAIN).unwrap();
        assert_eq!(
            gpu.msm(&prepared, &[MsmInput::dense(&scalars)]).unwrap(),
            expected
        );
    }

    #[test]
    fn a_context_that_cannot_be_reopened_is_a_lost_device() {
        let opened = Arc::new(AtomicBool::new(false));
        let poison = Arc::new(AtomicBool::new(false));
        let p = poison.clone();
        // Like CUDA after a kernel fault: the first open works, no later one.
        let gpu = GpuBackend::open_with_opener(move || {
            if opened.swap(true, Ordering::AcqRel) {
                Err(Poisoned)
            } else {
                Ok(MockDevice { poison: p.clone() })
            }
        })
        .unwrap();
        let prepared = gpu
            .prepare_bases::<G1>(
                Arc::new(vec![G1Affine::from(
                    <G1Projective as group::Group>::generator(),
                )]),
                Placement::PLAIN,
            )
            .unwrap();
        poison.store(true, Ordering::Release);
        let e = gpu
            .msm(&prepared, &[MsmInput::dense(&[<Scalar as ff::Field>::ONE])])
            .unwrap_err();
        assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
        assert!(e.to_string().contains("could not be opened"), "{e}");
        assert_eq!(gpu.rebuilds(), 0);
    }
}

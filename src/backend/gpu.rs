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
    cpu, Backend, Bases, BasesRef, DeviceBases, DeviceMatrices, DeviceWitness, Group, HostBases,
    MsmGroup, MsmInput, MsmPlan, MsmScalars, Placement, StagedWitness, Sums, WitnessH, G1, G2,
};
use crate::error::{Error, Result};
use crate::synthesis::RecordedShape;
use crate::Scalar;

pub use cuda::CudaOptions;
pub use device_api::DeviceApi;
pub use wgpu::{AdapterChoice, WgpuOptions};

#[macro_use]
mod device_api;
pub(crate) mod cuda;
mod wgpu;

/// A parameter file's bases seen as blst's type, for streaming from host memory
/// without a copy (both GPU crates take it as their `HostBases`).
pub(crate) struct HostView<C: MsmGroup>(pub(crate) Arc<Vec<C::Base>>);

impl<C: MsmGroup> AsRef<[<C as super::Curve>::Affine]> for HostView<C> {
    fn as_ref(&self) -> &[<C as super::Curve>::Affine] {
        C::raw(&self.0)
    }
}

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

/// log2 of H's domain for a, b and c, which must be of one length.
fn h_domain(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<u32> {
    if b.len() != a.len() || c.len() != a.len() {
        return Err(Error::Invalid("a, b, c have different lengths".into()));
    }
    crate::synthesis::log_domain(a.len())
}

fn fr(v: &[Scalar]) -> &[blst_fr] {
    // SAFETY: Scalar is repr(transparent) over blst_fr.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const blst_fr, v.len()) }
}

/// `shape`'s A, B and C as the GPU crates take them, its coefficient table,
/// and the device bytes they take there; None for a one-row domain, which has
/// no H coefficient to compute on a device.
fn device_matrices(
    shape: &RecordedShape,
) -> Option<([crossgroth_gpu_host::CsrMatrix<'_>; 3], &[blst_fr], usize)> {
    if shape.num_rows() < 2 {
        return None;
    }
    // The recorder's column tag is the kernels'.
    const _: () = assert!(crate::synthesis::AUX_COLUMN == crossgroth_gpu_host::AUX_COLUMN);
    let (csr, table) = shape.matrices();
    let csr = csr.map(|m| {
        let (row_start, col, coeff) = m.parts();
        crossgroth_gpu_host::CsrMatrix {
            row_start,
            col,
            coeff,
        }
    });
    let (a, b, c) = shape.nonzeros();
    let bytes = crossgroth_gpu_host::matrices_bytes(shape.num_rows(), a + b + c, table.len());
    Some((csr, fr(table), bytes))
}

fn fr_mut(v: &mut [Scalar]) -> &mut [blst_fr] {
    // SAFETY: Scalar is repr(transparent) over blst_fr.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut blst_fr, v.len()) }
}

impl<D: DeviceApi> GpuBackend<D> {
    /// A setup's fixed-base products on the device, where the crate has them.
    fn fixed_base_mul<C: MsmGroup>(
        &self,
        table: &[C::Base],
        scalars: &[Scalar],
        out: &mut [C::Base],
    ) -> Option<Result<()>> {
        let (inner, generation) = self.current();
        inner
            .fixed_base_mul::<C>(C::raw(table), fr(scalars), C::raw_mut(out))
            .map(|r| r.map_err(|e| self.fail(e, generation)))
    }

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

    /// What the crate sent ahead from `vectors` on context `generation`, as a
    /// [`StagedWitness`] (None where it does not send them).
    fn staged(
        &self,
        sent: Option<std::result::Result<Box<dyn Any + Send + Sync>, D::Error>>,
        generation: u64,
        vectors: &[&[Scalar]],
    ) -> Result<Option<StagedWitness>> {
        match sent {
            None => Ok(None),
            Some(Err(e)) => Err(self.fail(e, generation)),
            Some(Ok(device)) => Ok(Some(StagedWitness {
                device,
                backend: D::NAME,
                generation,
                of: StagedWitness::fingerprint(vectors),
            })),
        }
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
                    MsmScalars::Planned(s, plan) => {
                        match plan.made_by(D::NAME, s, input, bases_len)? {
                            Some(split) => inner
                                .msm_split::<C>(dev, first, fr(s), split)
                                .ok_or_else(|| self.plan_not_ours())?,
                            None => inner.msm::<C>(dev, first, fr(s), density),
                        }
                    }
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

    fn plan_not_ours(&self) -> Error {
        Error::Invalid(format!(
            "an MSM plan of another kind was given to the {} backend",
            D::NAME
        ))
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

    fn has_setup_kernels(&self) -> bool {
        D::SETUP
    }

    fn fixed_base_mul_g1(
        &self,
        table: &[crate::G1Affine],
        scalars: &[Scalar],
        out: &mut [crate::G1Affine],
    ) -> Option<Result<()>> {
        self.fixed_base_mul::<G1>(table, scalars, out)
    }

    fn fixed_base_mul_g2(
        &self,
        table: &[crate::G2Affine],
        scalars: &[Scalar],
        out: &mut [crate::G2Affine],
    ) -> Option<Result<()>> {
        self.fixed_base_mul::<G2>(table, scalars, out)
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
        let log = h_domain(a, b, c)?;
        if log == 0 {
            // A one-point domain has no coefficient to return; nothing to offload.
            return cpu::ntt::compute_h(a, b, c);
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

    fn compute_h_on_device(
        &self,
        a: &[Scalar],
        b: &[Scalar],
        c: &[Scalar],
        staged: Option<StagedWitness>,
    ) -> Result<Option<DeviceWitness>> {
        let log = h_domain(a, b, c)?;
        if log == 0 {
            return Ok(None);
        }
        let (inner, generation) = self.current();
        // a, b and c staged by another backend, a context since rebuilt or
        // from other vectors are dropped, and these written again.
        let h = match staged.filter(|w| w.is_of(D::NAME, generation, &[a, b, c])) {
            Some(w) => inner.compute_h_staged(w.device),
            None => inner.compute_h_on_device(fr(a), fr(b), fr(c), log),
        };
        match h {
            None => Ok(None),
            Some(Err(e)) => Err(self.fail(e, generation)),
            Some(Ok(device)) => Ok(Some(DeviceWitness {
                device,
                backend: D::NAME,
                generation,
                lens: [None, None, Some((1usize << log) - 1)],
            })),
        }
    }

    fn msm_plan(&self, bases_len: usize, input: &MsmInput<'_>) -> Result<Option<MsmPlan>> {
        let MsmScalars::Host(s) = input.scalars else {
            return Ok(None);
        };
        let (inner, generation) = self.current();
        let density = input.density.map(|d| d.words());
        match inner.split_ahead(bases_len, input.base_offset, fr(s), density) {
            None => Ok(None),
            Some(Err(e)) => Err(self.fail(e, generation)),
            Some(Ok(split)) => Ok(Some(MsmPlan::new(D::NAME, s, input, bases_len, split))),
        }
    }

    fn stages_abc(&self) -> bool {
        D::STAGES_ABC
    }

    fn stage_abc(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Option<StagedWitness>> {
        let log = h_domain(a, b, c)?;
        if log == 0 {
            return Ok(None);
        }
        let (inner, generation) = self.current();
        let sent = inner.stage_abc(fr(a), fr(b), fr(c), log);
        self.staged(sent, generation, &[a, b, c])
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

    fn stages_witnesses(&self) -> bool {
        D::STAGES_WITNESSES
    }

    fn stage_witness(
        &self,
        matrices: &DeviceMatrices,
        input: &[Scalar],
        aux: &[Scalar],
    ) -> Result<Option<StagedWitness>> {
        let (inner, generation) = self.current();
        let resident: &Arc<dyn Any + Send + Sync> =
            self.resident_as(Some(&matrices.device), generation, "constraint matrices")?;
        let sent = inner.stage_witness(resident.as_ref(), fr(input), fr(aux));
        self.staged(sent, generation, &[input, aux])
    }

    fn compute_h_from_witness(
        &self,
        matrices: &DeviceMatrices,
        input: &[Scalar],
        aux: &[Scalar],
        staged: Option<StagedWitness>,
        check: bool,
    ) -> Result<WitnessH> {
        let (inner, generation) = self.current();
        let resident: &Arc<dyn Any + Send + Sync> =
            self.resident_as(Some(&matrices.device), generation, "constraint matrices")?;
        let log = crate::synthesis::log_domain(matrices.rows)?;
        // A witness staged by another backend or a context since rebuilt is
        // dropped, and this one uploaded again.
        let staged = staged
            .filter(|w| w.is_of(D::NAME, generation, &[input, aux]))
            .map(|w| w.device);
        match inner.witness_h(resident.as_ref(), fr(input), fr(aux), staged, log, check) {
            None => Err(super::abc_on_the_host(D::NAME)),
            Some(Err(e)) => Err(self.fail(e, generation)),
            Some(Ok(Err(row))) => Ok(WitnessH::Unsatisfied(row)),
            Some(Ok(Ok(device))) => {
                let kept = |len: usize| Some(len).filter(|_| D::WITNESS_KEEPS_INPUTS);
                Ok(WitnessH::OnDevice(DeviceWitness {
                    device,
                    backend: D::NAME,
                    generation,
                    lens: [
                        kept(input.len()),
                        kept(aux.len()),
                        Some((1usize << log) - 1),
                    ],
                }))
            }
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

    fn inject_fault_for_tests(&self) -> Result<()> {
        let (inner, generation) = self.current();
        match inner.inject_fault_for_tests() {
            None => Err(crate::backend::cannot_fault(D::NAME)),
            Some(r) => r.map_err(|e| self.fail(e, generation)),
        }
    }

    fn busy_time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Option<Duration>> {
        if D::CLOCK_PER_THREAD {
            return self.device_time(work);
        }
        work()?;
        Ok(None)
    }

    fn memory(&self) -> Option<(usize, usize)> {
        self.current().0.memory()
    }

    fn memory_report(&self) -> Option<(usize, usize)> {
        self.current().0.memory_report()
    }
}

pub type CudaBackend = GpuBackend<crossgroth_cuda::CudaDevice>;
pub type WgpuBackend = GpuBackend<crossgroth_wgpu::WgpuDevice>;

#[cfg(test)]
mod tests;

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

use blst::{blst_fr, blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};

use super::{compose_g1_side, cpu, Backend, G1Bases, G1Side, G2Bases, MsmInput, PreparedParams};
use crate::error::{Error, Result};
use crate::synthesis::Assignment;
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

pub use wgpu::WgpuOptions;

/// What a GPU crate offers, in its own types and errors.
pub trait DeviceApi: Send + Sync + 'static {
    const NAME: &'static str;
    type G1: Send + Sync + 'static;
    type G2: Send + Sync + 'static;
    type Error: std::fmt::Display;

    /// Whether an error means "no such device here" rather than a failure.
    fn is_unavailable(e: &Self::Error) -> bool;
    /// Whether an error leaves the device context unusable (a CUDA launch error
    /// poisons the whole context; a lost wgpu device is gone): the adapter then
    /// rebuilds the context.
    fn is_fatal(e: &Self::Error) -> bool;
    fn describe(&self) -> String;
    /// Bases for the device; `streamed` asks to leave them in host memory
    /// (honoured where [`Self::STREAMS`]).
    fn upload_g1(
        &self,
        bases: &Arc<Vec<G1Affine>>,
        streamed: bool,
    ) -> Result<Self::G1, Self::Error>;
    fn upload_g2(
        &self,
        bases: &Arc<Vec<G2Affine>>,
        streamed: bool,
    ) -> Result<Self::G2, Self::Error>;
    /// Whether the crate can stream bases from host memory.
    const STREAMS: bool = false;
    fn g1_len(bases: &Self::G1) -> usize;
    fn g2_len(bases: &Self::G2) -> usize;
    /// Σ scalars[i] · bases[first + rank(i)] (rank: see crossgroth-cuda's
    /// `msm_g1`): an input whose bases begin at `first` (the auxiliary part of A
    /// and B, after the inputs' bases).
    fn msm_g1(
        &self,
        bases: &Self::G1,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p1, Self::Error>;
    fn msm_g2(
        &self,
        bases: &Self::G2,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<blst_p2, Self::Error>;
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
    ($dev:ty, $g1:ty, $g2:ty, $e:ty) => {
        fn g1_len(bases: &$g1) -> usize {
            bases.len()
        }
        fn g2_len(bases: &$g2) -> usize {
            bases.len()
        }
        fn msm_g1(&self, b: &$g1, first: usize, s: &[blst_fr], d: Option<&[u64]>) -> Result<blst_p1, $e> {
            <$dev>::msm_g1_from(self, b, first, s, d)
        }
        fn msm_g2(&self, b: &$g2, first: usize, s: &[blst_fr], d: Option<&[u64]>) -> Result<blst_p2, $e> {
            <$dev>::msm_g2_from(self, b, first, s, d)
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

/// The bases as blst's type, borrowed from the vector (no copy).
pub(crate) fn raw_g1(bases: &[G1Affine]) -> &[blst_p1_affine] {
    // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
    unsafe { std::slice::from_raw_parts(bases.as_ptr() as *const blst_p1_affine, bases.len()) }
}

pub(crate) fn raw_g2(bases: &[G2Affine]) -> &[blst_p2_affine] {
    // SAFETY: G2Affine is repr(transparent) over blst_p2_affine.
    unsafe { std::slice::from_raw_parts(bases.as_ptr() as *const blst_p2_affine, bases.len()) }
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

    fn resident<'a, T: 'static>(
        &self,
        device: &'a Option<Arc<dyn Any + Send + Sync>>,
        generation: u64,
    ) -> Result<&'a T> {
        let r = device
            .as_ref()
            .and_then(|d| d.downcast_ref::<Resident<T>>())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "bases were not prepared by the {} backend",
                    D::NAME
                ))
            })?;
        if r.generation != generation {
            return Err(Error::Backend {
                backend: D::NAME,
                message: "the bases were prepared on a device context that has since been rebuilt"
                    .into(),
            });
        }
        Ok(&r.bases)
    }

    fn prepare_g1_placed(&self, bases: Arc<Vec<G1Affine>>, streamed: bool) -> Result<G1Bases> {
        let (inner, generation) = self.current();
        let dev = inner
            .upload_g1(&bases, streamed)
            .map_err(|e| self.fail(e, generation))?;
        Ok(G1Bases {
            host: bases,
            device: Some(Arc::new(Resident {
                generation,
                bases: dev,
            })),
        })
    }

    fn prepare_g2_placed(&self, bases: Arc<Vec<G2Affine>>, streamed: bool) -> Result<G2Bases> {
        let (inner, generation) = self.current();
        let dev = inner
            .upload_g2(&bases, streamed)
            .map_err(|e| self.fail(e, generation))?;
        Ok(G2Bases {
            host: bases,
            device: Some(Arc::new(Resident {
                generation,
                bases: dev,
            })),
        })
    }

    /// One MSM input through a device call taking (scalars, density) from base 0.
    fn msm_input<P>(
        &self,
        input: &MsmInput<'_>,
        bases_len: usize,
        generation: u64,
        run: impl Fn(usize, &[blst_fr], Option<&[u64]>) -> Result<P, D::Error>,
    ) -> Result<P> {
        let needed = input.bases_needed()?;
        if needed > bases_len {
            return Err(Error::Invalid(format!(
                "MSM reads {needed} bases, only {bases_len} are present"
            )));
        }
        run(
            input.base_offset,
            fr(input.scalars),
            input.density.map(|d| d.words()),
        )
        .map_err(|e| self.fail(e, generation))
    }
}

impl<D: DeviceApi> Backend for GpuBackend<D> {
    fn name(&self) -> &'static str {
        D::NAME
    }

    fn device(&self) -> String {
        self.current().0.describe()
    }

    fn warm_up(&self) -> Result<()> {
        let (inner, generation) = self.current();
        inner.warm_up().map_err(|e| self.fail(e, generation))
    }

    fn prepare_g1(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        self.prepare_g1_placed(bases, false)
    }

    fn prepare_g2(&self, bases: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
        self.prepare_g2_placed(bases, false)
    }

    fn streams_bases(&self) -> bool {
        D::STREAMS
    }

    fn prepare_g1_streamed(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        self.prepare_g1_placed(bases, true)
    }

    fn prepare_g2_streamed(&self, bases: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
        self.prepare_g2_placed(bases, true)
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

    fn msm_g1(&self, bases: &G1Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G1Projective>> {
        let (inner, generation) = self.current();
        let dev: &D::G1 = self.resident(&bases.device, generation)?;
        inputs
            .iter()
            .map(|input| {
                self.msm_input(input, D::g1_len(dev), generation, |first, s, d| {
                    inner.msm_g1(dev, first, s, d)
                })
                .map(cpu::msm::g1_from_raw)
            })
            .collect()
    }

    fn msm_g2(&self, bases: &G2Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G2Projective>> {
        let (inner, generation) = self.current();
        let dev: &D::G2 = self.resident(&bases.device, generation)?;
        inputs
            .iter()
            .map(|input| {
                self.msm_input(input, D::g2_len(dev), generation, |first, s, d| {
                    inner.msm_g2(dev, first, s, d)
                })
                .map(cpu::msm::g2_from_raw)
            })
            .collect()
    }

    /// The composed G1 side, timed on the device.
    fn g1_side(
        &self,
        prepared: &PreparedParams,
        asg: &mut Assignment,
        dispose: &mut dyn FnMut(Vec<Scalar>),
    ) -> Result<G1Side> {
        let mut side = None;
        let (inner, generation) = self.current();
        let (r, took) = inner
            .time(&mut || {
                side = Some(compose_g1_side(self, prepared, asg, dispose)?);
                Ok(())
            })
            .map_err(|e| self.fail(e, generation))?;
        r?;
        let mut side = side.expect("set when the work succeeded");
        side.device_seconds = Some(took.as_secs_f64());
        Ok(side)
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

    /// B_G2 pays on the device once many of its scalars are neither 0 nor 1.
    fn b_g2_on_device(&self, effective_terms: usize) -> bool {
        effective_terms >= 1 << 16
    }
}

pub type CudaBackend = GpuBackend<crossgroth_cuda::CudaBackend>;
pub type WgpuBackend = GpuBackend<crossgroth_wgpu::WgpuBackend>;

#[cfg(test)]
mod tests {
    //! The context rebuild, with a device that computes on the CPU and can be told
    //! to poison its context.

    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::backend::CpuBackend;

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

    fn g1s(v: &[blst_p1_affine]) -> Vec<G1Affine> {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
        v.iter()
            .map(|p| unsafe { std::mem::transmute::<blst_p1_affine, G1Affine>(*p) })
            .collect()
    }

    impl DeviceApi for MockDevice {
        const NAME: &'static str = "mock";
        type G1 = Vec<G1Affine>;
        type G2 = ();
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
        fn upload_g1(
            &self,
            bases: &Arc<Vec<G1Affine>>,
            _: bool,
        ) -> Result<Vec<G1Affine>, Poisoned> {
            Ok(g1s(raw_g1(bases)))
        }
        fn upload_g2(&self, _: &Arc<Vec<G2Affine>>, _: bool) -> Result<(), Poisoned> {
            Ok(())
        }
        fn g1_len(b: &Vec<G1Affine>) -> usize {
            b.len()
        }
        fn g2_len(_: &()) -> usize {
            0
        }
        fn msm_g1(
            &self,
            b: &Vec<G1Affine>,
            first: usize,
            s: &[blst_fr],
            d: Option<&[u64]>,
        ) -> Result<blst_p1, Poisoned> {
            if self.poison.swap(false, Ordering::AcqRel) {
                return Err(Poisoned);
            }
            assert!(d.is_none());
            let scalars: Vec<Scalar> = s.iter().map(|x| Scalar::from(*x)).collect();
            let p =
                crate::backend::cpu::msm::msm_g1(&b[first..], &MsmInput::dense(&scalars)).unwrap();
            // SAFETY: G1Projective is repr(transparent) over blst_p1.
            Ok(unsafe { std::mem::transmute::<G1Projective, blst_p1>(p) })
        }
        fn msm_g2(
            &self,
            _: &(),
            _: usize,
            _: &[blst_fr],
            _: Option<&[u64]>,
        ) -> Result<blst_p2, Poisoned> {
            Err(Poisoned)
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
            .msm_g1(
                &CpuBackend.prepare_g1(bases.clone()).unwrap(),
                &[MsmInput::dense(&scalars)],
            )
            .unwrap();

        let poison = Arc::new(AtomicBool::new(false));
        let p = poison.clone();
        let gpu =
            GpuBackend::open_with_opener(move || Ok(MockDevice { poison: p.clone() })).unwrap();
        let prepared = gpu.prepare_g1(bases.clone()).unwrap();
        assert_eq!(
            gpu.msm_g1(&prepared, &[MsmInput::dense(&scalars)]).unwrap(),
            expected
        );

        poison.store(true, Ordering::Release);
        let e = gpu
            .msm_g1(&prepared, &[MsmInput::dense(&scalars)])
            .unwrap_err();
        assert!(
            e.to_string().contains("illegal address") && e.to_string().contains("was rebuilt"),
            "{e}"
        );
        assert_eq!(gpu.rebuilds(), 1);

        let e = gpu
            .msm_g1(&prepared, &[MsmInput::dense(&scalars)])
            .unwrap_err();
        assert!(e.to_string().contains("since been rebuilt"), "{e}");
        let prepared = gpu.prepare_g1(bases).unwrap();
        assert_eq!(
            gpu.msm_g1(&prepared, &[MsmInput::dense(&scalars)]).unwrap(),
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
            .prepare_g1(Arc::new(vec![G1Affine::from(
                <G1Projective as group::Group>::generator(),
            )]))
            .unwrap();
        poison.store(true, Ordering::Release);
        let e = gpu
            .msm_g1(&prepared, &[MsmInput::dense(&[<Scalar as ff::Field>::ONE])])
            .unwrap_err();
        assert!(matches!(e, Error::DeviceLost { .. }), "{e:?}");
        assert!(e.to_string().contains("could not be opened"), "{e}");
        assert_eq!(gpu.rebuilds(), 0);
    }
}

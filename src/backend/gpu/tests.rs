//! The context rebuild, with a device that computes on the CPU and can be told
//! to poison its context.

use std::sync::atomic::AtomicBool;

use super::*;
use crate::backend::{CpuBackend, Curve, Msm, WitnessPart};
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
        lens: [Some(1), Some(3), Some(3)],
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
    let gpu = GpuBackend::open_with_opener(move || Ok(MockDevice { poison: p.clone() })).unwrap();
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

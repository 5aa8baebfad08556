//! The steps of one proof, for every caller: the [`Prover`](super::Prover) and
//! the engine's workers run exactly these.
//!
//! ```text
//! assignment ──▶ g1_side: H = (a·b − c)/Z, then the H, L, A and B_G1 MSMs (the critical path)
//!            ──▶ b_g2:    the B_G2 MSM, on the device or the CPU (one rule: b_g2_on_device);
//!                         in g1_side when the witness is on the device (its aux read there)
//!            ──▶ assemble: A, B, C from α, β, δ, r, s (bellperson's formulas, same bytes)
//! ```

use std::sync::Arc;
use std::time::Instant;

use ff::Field;
use group::Curve as _;

use super::aux_plans::{planned, AuxPlans};
use super::{Parameters, Proof, VerifyingKey};
use crate::backend::{
    Backend, CpuBackend, DeviceMatrices, DeviceWitness, G1Bases, G2Bases, Msm, MsmInput, MsmPlan,
    MsmScalars, Placement, StagedWitness, WitnessH, WitnessPart, G2,
};
use crate::error::{Error, Result};
use crate::synthesis::{check_witness, Assignment};
use crate::{G1Projective, G2Projective, Scalar};

/// A parameter set's bases prepared on one backend (placed by
/// [`crate::groth16::placement`]).
pub struct PreparedParams {
    pub params: Arc<Parameters>,
    pub h: G1Bases,
    pub l: G1Bases,
    pub a: G1Bases,
    pub b_g1: G1Bases,
    pub b_g2: G2Bases,
}

impl PreparedParams {
    /// Every G1 set where `g1` says and the B_G2 set where `g2` says (the
    /// engine's placement decides; tests ask for one placement directly).
    pub fn with_placement(
        backend: &dyn Backend,
        params: Arc<Parameters>,
        g1: Placement,
        g2: Placement,
    ) -> Result<Self> {
        Ok(PreparedParams {
            h: backend.prepare_bases(params.h.host()?, g1)?,
            l: backend.prepare_bases(params.l.host()?, g1)?,
            a: backend.prepare_bases(params.a.host()?, g1)?,
            b_g1: backend.prepare_bases(params.b_g1.host()?, g1)?,
            b_g2: backend.prepare_bases(params.b_g2.host()?, g2)?,
            params,
        })
    }

    /// The four G1 sets, in the file's order.
    pub fn g1_sets(&self) -> [&G1Bases; 4] {
        [&self.h, &self.l, &self.a, &self.b_g1]
    }
}

/// How long each step of one proof took, in seconds (0: not run or not
/// measured), and how long the device was busy with the critical path where
/// the backend measures that.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub h: f64,
    pub msm_h: f64,
    pub msm_l: f64,
    pub msm_a: f64,
    pub msm_b_g1: f64,
    pub b_g2: f64,
    pub assemble: f64,
    pub device: Option<f64>,
}

impl StageTimes {
    /// The G1 side's steps, in the order they run.
    pub fn g1_steps(&self) -> [(&'static str, f64); 5] {
        [
            ("h", self.h),
            ("msm_h", self.msm_h),
            ("msm_l", self.msm_l),
            ("msm_a", self.msm_a),
            ("msm_b_g1", self.msm_b_g1),
        ]
    }

    /// Every measured step, in the order they run.
    pub fn steps(&self) -> impl Iterator<Item = (&'static str, f64)> {
        let rest = [("b_g2", self.b_g2), ("assemble", self.assemble)];
        self.g1_steps()
            .into_iter()
            .chain(rest)
            .filter(|(_, secs)| *secs > 0.0)
    }

    /// One greppable line per measured step, the format every caller logs:
    /// `crossgroth-stage job=… unit=… stage=… ms=…`.
    pub fn log(&self, job: &str, unit: usize) {
        for (stage, secs) in self.steps() {
            log_stage(job, unit, stage, secs);
        }
    }
}

/// The stage-timing line (see [`StageTimes::log`]).
pub fn log_stage(job: &str, unit: usize, stage: &str, secs: f64) {
    log::info!(
        "crossgroth-stage job={job} unit={unit} stage={stage} ms={:.3}",
        secs * 1e3
    );
}

/// The G1 side of one proof: every MSM result the critical path produces.
#[derive(Clone, Debug)]
pub struct G1Side {
    pub h: G1Projective,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b_g1: G1Projective,
    /// B_G2, already computed beside the G1 MSMs on a backend without a device,
    /// or after them from a witness the device holds (see [`g1_side`]); `None`
    /// leaves it to [`b_g2`].
    pub b_g2: Option<G2Projective>,
    /// B's aux scalars split ahead for B_G1, kept for a B_G2 that [`b_g2`]
    /// makes later (the same scalars, density and base ranks).
    pub b_plan: Option<Arc<MsmPlan>>,
    pub times: StageTimes,
}

/// How the critical path gets a proof's a, b and c: for a witness-only
/// assignment (one whose a, b and c are
/// [pending](crate::synthesis::Assignment::pending)), where they are computed;
/// for any, what was already sent to the device.
pub struct Pending<'a> {
    /// Its shape's constraint matrices on this backend's device: a, b and c
    /// are computed there. None: on the host.
    pub matrices: Option<&'a DeviceMatrices>,
    /// Whether every row is checked (a·b = c) once a, b and c exist.
    pub check: bool,
    /// Its witness, already sent to the device ([`Backend::stage_witness`]);
    /// or, where a, b and c exist, those ([`Backend::stage_abc`]).
    pub staged: Option<StagedWitness>,
}

impl Default for Pending<'_> {
    fn default() -> Self {
        Pending {
            matrices: None,
            check: true,
            staged: None,
        }
    }
}

/// The critical path of one proof on `backend`: H, then the H, L, A and B_G1
/// MSMs. Takes a, b and c out of the assignment and hands every buffer to
/// `dispose` as soon as it is spent (b and c once H exists, H once its MSM
/// ran), so that the engine frees them off the hot path. A witness-only
/// assignment gets its a, b and c as `pending` says; an unsatisfied row
/// found then is [`Error::Unsatisfied`].
///
/// On a backend without a device every MSM runs on the host's cores: there H
/// and the five MSMs (B_G2 included) run together, because one small MSM
/// cannot keep many cores busy and a proof's latency would be their sum.
pub fn g1_side(
    backend: &dyn Backend,
    prepared: &PreparedParams,
    asg: &mut Assignment,
    pending: Pending<'_>,
    dispose: &mut dyn FnMut(Vec<Scalar>),
) -> Result<G1Side> {
    let mut side = None;
    let mut pending = Some(pending);
    let device = backend.device_time(&mut || {
        let pending = pending.take().ok_or_else(|| {
            Error::Invalid(format!(
                "the {} backend ran a proof's critical path twice",
                backend.name()
            ))
        })?;
        side = Some(compose_g1_side(backend, prepared, asg, pending, dispose)?);
        Ok(())
    })?;
    let mut side = side.ok_or_else(|| {
        Error::Invalid(format!(
            "the {} backend skipped a proof's critical path",
            backend.name()
        ))
    })?;
    side.times.device = device.map(|d| d.as_secs_f64());
    Ok(side)
}

/// Computes a witness-only assignment's a, b and c on the host and checks its
/// rows when asked; a no-op for any other assignment.
pub fn evaluate_on_host(asg: &mut Assignment, check: bool) -> Result<()> {
    let Some(pending) = asg.pending.clone() else {
        return Ok(());
    };
    asg.evaluate();
    if check {
        if let Some(row) = check_witness(asg) {
            return Err(unsatisfied(&pending.0, row));
        }
    }
    Ok(())
}

fn unsatisfied(shape: &crate::synthesis::RecordedShape, row: usize) -> Error {
    Error::Unsatisfied {
        row,
        path: shape.row_name(row),
        circuit: None,
    }
}

/// Where a proof's H is once computed: on the host, or on the device with the
/// witness it came from.
enum ComputedH {
    Host(Vec<Scalar>),
    Device(DeviceWitness),
}

/// H of a witness-only assignment from its shape's matrices on the device.
fn h_from_witness(
    backend: &dyn Backend,
    matrices: &DeviceMatrices,
    asg: &Assignment,
    staged: Option<StagedWitness>,
    check: bool,
) -> Result<ComputedH> {
    match backend.compute_h_from_witness(matrices, &asg.input, &asg.aux, staged, check)? {
        WitnessH::H(h) => Ok(ComputedH::Host(h)),
        WitnessH::OnDevice(w) => Ok(ComputedH::Device(w)),
        WitnessH::Unsatisfied(row) => Err(match &asg.pending {
            Some(p) => unsatisfied(&p.0, row),
            None => Error::Unsatisfied {
                row,
                path: None,
                circuit: None,
            },
        }),
    }
}

fn compose_g1_side(
    backend: &dyn Backend,
    prepared: &PreparedParams,
    asg: &mut Assignment,
    pending: Pending<'_>,
    dispose: &mut dyn FnMut(Vec<Scalar>),
) -> Result<G1Side> {
    let matrices = pending.matrices.filter(|_| asg.is_witness_only());
    if matrices.is_none() {
        evaluate_on_host(asg, pending.check)?;
    }
    if !backend.has_device() {
        return host_g1_side(backend, prepared, asg, matrices, pending.check, dispose);
    }
    let mut times = StageTimes::default();
    let mut lap = Lap::start();
    let h = match matrices {
        Some(m) => h_from_witness(backend, m, asg, pending.staged, pending.check)?,
        None => {
            let mut h = std::mem::take(&mut asg.a);
            let mut b = std::mem::take(&mut asg.b);
            let mut c = std::mem::take(&mut asg.c);
            // Where the device can keep H, it is neither read back nor sent
            // up again for its MSM.
            let kept = backend.compute_h_on_device(&h, &b, &c, pending.staged)?;
            if kept.is_none() {
                backend.compute_h(&mut h, &mut b, &mut c)?;
            }
            dispose(b);
            dispose(c);
            match kept {
                Some(w) => {
                    dispose(h);
                    ComputedH::Device(w)
                }
                None => ComputedH::Host(h),
            }
        }
    };
    times.h = lap.next();
    let asg = &*asg;
    // Only a witness the device keeps whole lets B_G2 run here (see
    // device_msms); otherwise the finalizer decides.
    let b_g2_may_run_here = matches!(&h, ComputedH::Device(w) if w.holds(WitnessPart::Aux));
    std::thread::scope(|scope| {
        // The aux MSMs' host share, and where B_G2 runs (a scan of B's
        // scalars), are made while the device runs H's MSM.
        let params = &prepared.params;
        let plans = scope.spawn(|| {
            let plans = AuxPlans::make(
                backend,
                [
                    (params.l.len(), MsmInput::dense(&asg.aux)),
                    (params.a.len(), a_inputs(asg)[1]),
                    (params.b_g1.len(), b_inputs(asg)[1]),
                ],
            )?;
            Ok((plans, b_g2_may_run_here && b_g2_on_device(backend, asg)))
        });
        let plans = move || {
            plans
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        device_msms(backend, prepared, asg, h, plans, times, lap, dispose)
    })
}

/// The MSMs of [`compose_g1_side`] once H is computed, with the aux MSMs'
/// plans and [`b_g2_on_device`]'s answer from `plans` (waited for after H's
/// MSM).
#[allow(clippy::too_many_arguments)]
fn device_msms(
    backend: &dyn Backend,
    prepared: &PreparedParams,
    asg: &Assignment,
    h: ComputedH,
    plans: impl FnOnce() -> Result<(AuxPlans, bool)>,
    mut times: StageTimes,
    mut lap: Lap,
    dispose: &mut dyn FnMut(Vec<Scalar>),
) -> Result<G1Side> {
    // A witness the device holds (with its H) is read there by every MSM.
    let (h_msm, on_device) = match h {
        ComputedH::Host(h) => {
            let sum = backend.msm(&prepared.h, &[MsmInput::dense(&h)])?[0];
            dispose(h);
            (sum, None)
        }
        ComputedH::Device(w) => {
            let h = MsmScalars::Device(&w, WitnessPart::H);
            let sum = backend.msm(&prepared.h, &[MsmInput::dense_of(h)])?[0];
            // H alone is freed now; a witness stays for the other MSMs.
            (sum, Some(w).filter(|w| w.holds(WitnessPart::Aux)))
        }
    };
    times.msm_h = lap.next();
    let (AuxPlans { l, a, b }, b_g2_here) = plans()?;
    let witness = WitnessScalars::of(asg, on_device.as_ref());
    let aux = planned(witness.aux, l.as_ref());
    let l = backend.msm(&prepared.l, &[MsmInput::dense_of(aux)])?[0];
    times.msm_l = lap.next();
    let a_parts = backend.msm(&prepared.a, &a_terms(asg, witness, a.as_ref()))?;
    drop(a);
    times.msm_a = lap.next();
    let b_parts = backend.msm(&prepared.b_g1, &b_terms(asg, witness, b.as_ref()))?;
    times.msm_b_g1 = lap.next();
    // B_G2 reads the aux the device holds, here, rather than in the finalizer
    // from the host copy: the aux then goes up once, and the device is what the
    // two would share anyway.
    let b_g2 = match on_device.as_ref() {
        Some(_) if b_g2_here => {
            let parts = backend.msm(&prepared.b_g2, &b_terms(asg, witness, b.as_ref()))?;
            times.b_g2 = lap.next();
            Some(parts[0] + parts[1])
        }
        _ => None,
    };
    drop(on_device);
    Ok(G1Side {
        h: h_msm,
        l,
        a: a_parts[0] + a_parts[1],
        b_g1: b_parts[0] + b_parts[1],
        b_plan: b.filter(|_| b_g2.is_none()).map(Arc::new),
        b_g2,
        times,
    })
}

/// [`compose_g1_side`] on the host: H and its MSM in one branch, the L, A,
/// B_G1 and B_G2 MSMs (which need only the witness) in the others, on rayon's
/// pool. Each stage's time is its own and they overlap.
fn host_g1_side(
    backend: &dyn Backend,
    prepared: &PreparedParams,
    asg: &mut Assignment,
    matrices: Option<&DeviceMatrices>,
    check: bool,
    dispose: &mut dyn FnMut(Vec<Scalar>),
) -> Result<G1Side> {
    // H from the witness first where the backend holds the matrices, so that
    // an unsatisfied row stops the proof before any MSM.
    let (mut h, h_from_matrices_secs) = match matrices {
        Some(m) => match timed(|| h_from_witness(backend, m, asg, None, check)) {
            (Ok(ComputedH::Host(h)), secs) => (h, Some(secs)),
            (Ok(ComputedH::Device(w)), _) => {
                return Err(Error::Invalid(format!(
                    "the {} backend kept H on a device ({w:?}) but runs its MSMs on the host",
                    backend.name()
                )))
            }
            (Err(e), _) => return Err(e),
        },
        None => (std::mem::take(&mut asg.a), None),
    };
    let mut b = std::mem::take(&mut asg.b);
    let mut c = std::mem::take(&mut asg.c);
    let asg = &*asg;
    let sum = |parts: Result<Vec<G1Projective>>| parts.map(|p| p.into_iter().sum());
    let h_branch = || {
        let (done, h_secs) = match h_from_matrices_secs {
            Some(secs) => (Ok(()), secs),
            None => timed(|| backend.compute_h(&mut h, &mut b, &mut c)),
        };
        done?;
        let (msm, msm_secs) = timed(|| backend.msm(&prepared.h, &[MsmInput::dense(&h)]));
        Ok::<_, Error>((sum(msm)?, h_secs, msm_secs))
    };
    let l_branch = || timed(|| sum(backend.msm(&prepared.l, &[MsmInput::dense(&asg.aux)])));
    let a_branch = || timed(|| sum(backend.msm(&prepared.a, &a_inputs(asg))));
    let b_g1_branch = || timed(|| sum(backend.msm(&prepared.b_g1, &b_inputs(asg))));
    let b_g2_branch = || timed(|| host_b_g2(&prepared.params, asg));
    let ((h_side, (l, a)), (b_g1, b_g2)) = rayon::join(
        || rayon::join(h_branch, || rayon::join(l_branch, a_branch)),
        || rayon::join(b_g1_branch, b_g2_branch),
    );
    dispose(b);
    dispose(c);
    dispose(h);
    let (h_msm, h_secs, msm_h_secs) = h_side?;
    let times = StageTimes {
        h: h_secs,
        msm_h: msm_h_secs,
        msm_l: l.1,
        msm_a: a.1,
        msm_b_g1: b_g1.1,
        b_g2: b_g2.1,
        ..StageTimes::default()
    };
    Ok(G1Side {
        h: h_msm,
        l: l.0?,
        a: a.0?,
        b_g1: b_g1.0?,
        b_g2: Some(b_g2.0?),
        b_plan: None,
        times,
    })
}

/// B_G2 on the CPU from the host copy of the bases.
fn host_b_g2(params: &Parameters, asg: &Assignment) -> Result<G2Projective> {
    let host = G2Bases {
        host: Some(params.b_g2.host()?),
        device: None,
    };
    let parts = CpuBackend.msm::<G2>(&host, &b_inputs(asg))?;
    Ok(parts[0] + parts[1])
}

/// A proof's input and aux as its MSMs read them: the assignment's on the
/// host, or the copy a device holds.
#[derive(Clone, Copy)]
struct WitnessScalars<'a> {
    input: MsmScalars<'a>,
    aux: MsmScalars<'a>,
}

impl<'a> WitnessScalars<'a> {
    fn of(asg: &'a Assignment, on_device: Option<&'a DeviceWitness>) -> Self {
        match on_device {
            Some(w) => WitnessScalars {
                input: MsmScalars::Device(w, WitnessPart::Input),
                aux: MsmScalars::Device(w, WitnessPart::Aux),
            },
            None => WitnessScalars {
                input: MsmScalars::Host(&asg.input),
                aux: MsmScalars::Host(&asg.aux),
            },
        }
    }
}

/// A's two MSM inputs: every input variable, then the aux variables in A's
/// aux density, whose bases follow the inputs' (bellperson's layout).
pub fn a_inputs(asg: &Assignment) -> [MsmInput<'_>; 2] {
    a_terms(asg, WitnessScalars::of(asg, None), None)
}

/// A's inputs from `witness`, the aux part with `aux_plan` where there is one.
fn a_terms<'a>(
    asg: &'a Assignment,
    witness: WitnessScalars<'a>,
    aux_plan: Option<&'a MsmPlan>,
) -> [MsmInput<'a>; 2] {
    [
        MsmInput::dense_of(witness.input),
        MsmInput {
            scalars: planned(witness.aux, aux_plan),
            density: Some(&asg.a_aux_density),
            base_offset: asg.input.len(),
        },
    ]
}

/// B's two MSM inputs (for B_G1 and B_G2 alike): inputs in B's input density,
/// then aux variables in B's aux density, whose bases start at |B-input density|.
pub fn b_inputs(asg: &Assignment) -> [MsmInput<'_>; 2] {
    b_terms(asg, WitnessScalars::of(asg, None), None)
}

/// B's inputs from `witness`, the aux part with `aux_plan` where there is one.
fn b_terms<'a>(
    asg: &'a Assignment,
    witness: WitnessScalars<'a>,
    aux_plan: Option<&'a MsmPlan>,
) -> [MsmInput<'a>; 2] {
    [
        MsmInput {
            scalars: witness.input,
            density: Some(&asg.b_input_density),
            base_offset: 0,
        },
        MsmInput {
            scalars: planned(witness.aux, aux_plan),
            density: Some(&asg.b_aux_density),
            base_offset: asg.b_input_density.count(),
        },
    ]
}

/// B scalars below which B_G2 stays on the CPU: Filecoin-like circuits, whose
/// B scalars are mostly 0 or 1 (which the CPU MSM adds without a bucket pass),
/// keep the device free for the next proof's critical path; dense circuits
/// gain from the device.
pub const B_G2_DEVICE_TERMS: usize = 1 << 16;

/// Where B_G2 runs: on `backend`'s device when it has one and many B scalars
/// are neither 0 nor 1, else on the CPU.
pub fn b_g2_on_device(backend: &dyn Backend, asg: &Assignment) -> bool {
    backend.has_device() && effective_b_terms(asg, B_G2_DEVICE_TERMS) >= B_G2_DEVICE_TERMS
}

/// B scalars that a bucket pass would see (not 0, not 1), counted up to
/// `enough`: the scan stops there, so a dense circuit's proof does not pay for
/// reading all of B on the host.
fn effective_b_terms(asg: &Assignment, enough: usize) -> usize {
    let effective = |x: &Scalar| !bool::from(x.is_zero()) && *x != Scalar::ONE;
    let input = asg.b_input_density.ones().map(|i| &asg.input[i]);
    let aux = asg.b_aux_density.ones().map(|i| &asg.aux[i]);
    input
        .chain(aux)
        .filter(|x| effective(x))
        .take(enough)
        .count()
}

/// The B_G2 MSM of one proof, where [`b_g2_on_device`] says, unless the G1
/// side already made it; `prepared` is asked for only when it runs on the device.
pub fn b_g2<P: std::ops::Deref<Target = PreparedParams>>(
    backend: &dyn Backend,
    g1: &G1Side,
    prepared: impl FnOnce() -> Result<P>,
    params: &Parameters,
    asg: &Assignment,
) -> Result<G2Projective> {
    if let Some(done) = g1.b_g2 {
        return Ok(done);
    }
    if b_g2_on_device(backend, asg) {
        let witness = WitnessScalars::of(asg, None);
        let inputs = b_terms(asg, witness, g1.b_plan.as_deref());
        let parts = backend.msm(&prepared()?.b_g2, &inputs)?;
        Ok(parts[0] + parts[1])
    } else {
        host_b_g2(params, asg)
    }
}

/// A = α₁ + r·δ₁ + A_msm; B = β₂ + s·δ₂ + B2_msm;
/// C = s·A_msm + r·B1_msm + r·s·δ₁ + s·α₁ + r·β₁ + H + L.
pub fn assemble(
    vk: &VerifyingKey,
    g1: &G1Side,
    b_g2: &G2Projective,
    r: Scalar,
    s: Scalar,
) -> Proof {
    let a = G1Projective::from(vk.alpha_g1) + vk.delta_g1 * r + g1.a;
    let b = G2Projective::from(vk.beta_g2) + vk.delta_g2 * s + b_g2;
    let c = g1.a * s
        + g1.b_g1 * r
        + vk.delta_g1 * (r * s)
        + vk.alpha_g1 * s
        + vk.beta_g1 * r
        + g1.h
        + g1.l;
    Proof {
        a: a.to_affine(),
        b: b.to_affine(),
        c: c.to_affine(),
    }
}

/// A stopwatch over consecutive steps.
struct Lap(Instant);

impl Lap {
    fn start() -> Self {
        Lap(Instant::now())
    }

    /// Seconds since the last lap.
    fn next(&mut self) -> f64 {
        let now = Instant::now();
        let secs = now.duration_since(self.0).as_secs_f64();
        self.0 = now;
        secs
    }
}

/// Seconds `f` took, with its result.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let began = Instant::now();
    let out = f();
    (out, began.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::CircuitSpec;
    use crate::synthesis::synthesize;

    fn assignment(spec: &str) -> Assignment {
        let spec: CircuitSpec = spec.parse().unwrap();
        synthesize(spec.instance(1)).unwrap()
    }

    #[test]
    fn effective_b_terms_skip_zeros_and_ones_and_stop_at_enough() {
        let asg = assignment("chain:10");
        let all = effective_b_terms(&asg, usize::MAX);
        let by_hand = asg
            .b_input_density
            .ones()
            .map(|i| asg.input[i])
            .chain(asg.b_aux_density.ones().map(|i| asg.aux[i]))
            .filter(|x| !bool::from(x.is_zero()) && *x != Scalar::ONE)
            .count();
        assert_eq!(all, by_hand);
        assert!(all > 100, "{all}");
        assert_eq!(effective_b_terms(&asg, 100), 100);
    }

    #[test]
    fn b_g2_stays_on_the_cpu_without_a_device() {
        let asg = assignment("chain:10");
        assert!(!b_g2_on_device(&CpuBackend, &asg));
    }
}

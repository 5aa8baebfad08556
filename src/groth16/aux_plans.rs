//! The host's share of a proof's L, A and B MSMs over its aux, made on another
//! thread while the device computes H's MSM (for wgpu: the aux split into
//! zeros, ones and the rest for each of the three, which would otherwise sit
//! on the device's critical path between its MSMs).

use super::Parameters;
use crate::backend::{Backend, MsmInput, MsmPlan, MsmScalars};
use crate::error::Result;
use crate::synthesis::Assignment;

/// One plan an aux MSM, None where the backend makes none.
#[derive(Debug, Default)]
pub(crate) struct AuxPlans {
    pub l: Option<MsmPlan>,
    pub a: Option<MsmPlan>,
    pub b: Option<MsmPlan>,
}

impl AuxPlans {
    /// The plans of `asg`'s aux inputs of L, A and B_G1 (whose plan serves
    /// B_G2 too: the same scalars, density and base ranks), over the bases of
    /// `params`, in the layout of [`super::steps::a_inputs`] and
    /// [`super::steps::b_inputs`].
    pub fn make(backend: &dyn Backend, params: &Parameters, asg: &Assignment) -> Result<Self> {
        let aux = MsmScalars::Host(&asg.aux);
        let l = backend.msm_plan(params.l.len(), &MsmInput::dense_of(aux))?;
        let Some(l) = l else {
            // The backend has no host share: no other plan either.
            return Ok(AuxPlans::default());
        };
        let a = MsmInput {
            scalars: aux,
            density: Some(&asg.a_aux_density),
            base_offset: asg.input.len(),
        };
        let b = MsmInput {
            scalars: aux,
            density: Some(&asg.b_aux_density),
            base_offset: asg.b_input_density.count(),
        };
        Ok(AuxPlans {
            l: Some(l),
            a: backend.msm_plan(params.a.len(), &a)?,
            b: backend.msm_plan(params.b_g1.len(), &b)?,
        })
    }
}

/// `scalars` with `plan` where both are there and the scalars are on the host.
pub(crate) fn planned<'a>(scalars: MsmScalars<'a>, plan: Option<&'a MsmPlan>) -> MsmScalars<'a> {
    match (scalars, plan) {
        (MsmScalars::Host(s), Some(p)) => MsmScalars::Planned(s, p),
        (s, _) => s,
    }
}

//! The host's share of a proof's L, A and B MSMs over its aux, made on another
//! thread while the device computes H's MSM (for wgpu: the aux split into
//! zeros, ones and the rest for each of the three, which would otherwise sit
//! on the device's critical path between its MSMs).

use crate::backend::{Backend, MsmInput, MsmPlan, MsmScalars};
use crate::error::Result;

/// One plan an aux MSM, None where the backend makes none.
#[derive(Debug, Default)]
pub(crate) struct AuxPlans {
    pub l: Option<MsmPlan>,
    pub a: Option<MsmPlan>,
    pub b: Option<MsmPlan>,
}

impl AuxPlans {
    /// The plans of a proof's aux inputs of L, A and B_G1 (whose plan serves
    /// B_G2 too: the same scalars, density and base ranks), each with the
    /// count of the bases it reads from.
    pub fn make(backend: &dyn Backend, [l, a, b]: [(usize, MsmInput<'_>); 3]) -> Result<Self> {
        let Some(l) = backend.msm_plan(l.0, &l.1)? else {
            // The backend has no host share: no other plan either.
            return Ok(AuxPlans::default());
        };
        Ok(AuxPlans {
            l: Some(l),
            a: backend.msm_plan(a.0, &a.1)?,
            b: backend.msm_plan(b.0, &b.1)?,
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

//! The scalars' classification (msm_classify): each included scalar goes to
//! canonical form, and is listed either as a general scalar with its base or,
//! where it is 1, among the bases whose sum is taken apart; zeros drop out.
//! The counters count both lists. With one pass every scalar is classified
//! before the sizes are planned, from the general scalars' count; with
//! several, each pass classifies its own part on the sort stream.

use cudarc::driver::{CudaStream, CudaView};
use std::sync::Arc;

use super::buffers::{Prepared, ScalarBuffers};
use super::Scalars;
use crate::profile::Profiler;
use crate::{CudaDevice, CudaError};

impl CudaDevice {
    /// Classifies scalars lo..hi of pass p into bidx, canon, the ones' list
    /// and the counters.
    pub(super) fn classify(
        &self,
        st: &Arc<CudaStream>,
        scal: &CudaView<'_, u64>,
        lo: usize,
        hi: usize,
        sc: &ScalarBuffers<'_>,
        prep: &mut Prepared,
    ) -> Result<(), CudaError> {
        let null: u64 = 0;
        let (m32, lo32) = ((hi - lo) as u32, lo as u32);
        let mut bidx_pass = prep.bidx.slice_mut(lo..hi);
        let (canon, one_bases, counters) =
            (&mut prep.canon, &mut prep.one_bases, &mut prep.counters);
        match (&sc.d_density, &sc.d_prefix) {
            (Some(d), Some(pre)) => {
                let (d, pre) = (d.slice(lo / 64..), pre.slice(lo / 64..));
                launch_on!(st, self.k.msm_classify, hi - lo, 256; scal, &m32, &d, &pre, &lo32, canon, &mut bidx_pass, one_bases, counters)
            }
            _ => {
                launch_on!(st, self.k.msm_classify, hi - lo, 256; scal, &m32, &null, &null, &lo32, canon, &mut bidx_pass, one_bases, counters)
            }
        }
        Ok(())
    }

    /// One pass: classifies every scalar on this stream and returns the
    /// counts of general scalars and of scalars 1, which the plan is made from.
    pub(super) fn classify_all(
        &self,
        scalars: Scalars<'_>,
        n: usize,
        sc: &ScalarBuffers<'_>,
        prep: &mut Prepared,
        prof: &mut Profiler<'_>,
    ) -> Result<(usize, usize), CudaError> {
        let scal = match scalars {
            Scalars::Device { buf, start, len } => buf.slice(4 * start..4 * (start + len)),
            Scalars::Host(_) => sc.d_scal[0].slice(0..4 * n),
        };
        self.classify(&self.stream, &scal, 0, n, sc, prep)?;
        let counted = self
            .stream
            .clone_dtoh(&prep.counters)
            .map_err(|e| CudaError::launch("MSM counters", e))?;
        self.sync("MSM classification")?;
        prof.mark("classify");
        let (general, ones) = (counted[0] as usize, counted[1] as usize);
        Ok((general, ones))
    }
}

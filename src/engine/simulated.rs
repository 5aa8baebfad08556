//! A backend that models a device for tests and benchmarks: the critical path holds
//! one device slot for a configured time and uses no CPU, and returns the result a
//! real device would. Results are computed once per distinct witness on the CPU
//! (outside the slot) and replayed, so every proof still verifies.
//!
//! It can also be told to fail, to test that one job's backend error leaves the
//! others alone.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::backend::{Backend, CpuBackend, G1Bases, G1Side, G2Bases, MsmInput, PreparedParams};
use crate::error::{Error, Result};
use crate::synthesis::Assignment;
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

pub struct SimulatedDevice {
    /// Time the critical path of one proof holds the device.
    pub g1_time: Duration,
    slot: Mutex<()>,
    cache: Mutex<HashMap<u64, G1Side>>,
    /// The n-th call of `g1_side` (1-based) fails, when set.
    fail_call: Option<usize>,
    calls: AtomicUsize,
}

impl SimulatedDevice {
    pub fn new(g1_time: Duration) -> Self {
        SimulatedDevice {
            g1_time,
            slot: Mutex::new(()),
            cache: Mutex::new(HashMap::new()),
            fail_call: None,
            calls: AtomicUsize::new(0),
        }
    }

    /// A device whose `n`-th critical path (1-based) reports an error.
    pub fn failing_at(g1_time: Duration, n: usize) -> Self {
        SimulatedDevice {
            fail_call: Some(n),
            ..Self::new(g1_time)
        }
    }

    pub fn shared(self) -> Arc<dyn Backend> {
        Arc::new(self)
    }
}

fn fingerprint(asg: &Assignment) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for v in asg
        .input
        .iter()
        .chain(asg.aux.iter().take(64))
        .chain(asg.aux.iter().rev().take(64))
    {
        v.to_bytes_le().hash(&mut h);
    }
    asg.aux.len().hash(&mut h);
    h.finish()
}

impl Backend for SimulatedDevice {
    fn name(&self) -> &'static str {
        "simulated"
    }
    fn device(&self) -> String {
        format!("simulated device, {:?} per proof", self.g1_time)
    }
    fn prepare_g1(&self, bases: Arc<Vec<G1Affine>>) -> Result<G1Bases> {
        CpuBackend.prepare_g1(bases)
    }
    fn prepare_g2(&self, bases: Arc<Vec<G2Affine>>) -> Result<G2Bases> {
        CpuBackend.prepare_g2(bases)
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
        CpuBackend.compute_h(a, b, c)
    }
    fn msm_g1(&self, bases: &G1Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G1Projective>> {
        CpuBackend.msm_g1(bases, inputs)
    }
    fn msm_g2(&self, bases: &G2Bases, inputs: &[MsmInput<'_>]) -> Result<Vec<G2Projective>> {
        CpuBackend.msm_g2(bases, inputs)
    }

    fn g1_side(
        &self,
        prepared: &PreparedParams,
        asg: &mut Assignment,
        dispose: &mut dyn FnMut(Vec<Scalar>),
    ) -> Result<G1Side> {
        let call = self.calls.fetch_add(1, Ordering::AcqRel) + 1;
        if self.fail_call == Some(call) {
            return Err(Error::Backend {
                backend: "simulated",
                message: format!("injected failure on call {call}"),
            });
        }
        let key = fingerprint(asg);
        let cached = self.cache.lock().unwrap().get(&key).copied();
        let side = match cached {
            Some(side) => side,
            None => {
                let mut scratch = asg.clone();
                let side = CpuBackend.g1_side(prepared, &mut scratch, &mut drop)?;
                self.cache.lock().unwrap().insert(key, side);
                side
            }
        };
        let _slot = self.slot.lock().unwrap();
        std::thread::sleep(self.g1_time);
        for v in [
            std::mem::take(&mut asg.a),
            std::mem::take(&mut asg.b),
            std::mem::take(&mut asg.c),
        ] {
            dispose(v);
        }
        Ok(G1Side {
            seconds: [0.0; 5],
            ..side
        })
    }
}

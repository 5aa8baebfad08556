//! Admission: what one circuit is expected to hold, estimated before its synthesis
//! and charged against the memory budget, and the queue circuits wait in for it.

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::job::JobState;
use super::memory::{Budget, MemoryState};
use super::tasks::SynthTask;
use crate::backend::Backend;
use crate::groth16::Parameters;

/// State the synthesis workers and the budget share, under one lock so that waiting
/// for a task and waiting for memory are one wait with no lost wakeup.
pub(super) struct Admission {
    pub(super) budget: Budget,
    pub(super) mem: MemoryState,
    pub(super) queue: BinaryHeap<SynthTask>,
    pub(super) seq: u64,
    /// Bytes per circuit, by parameter set and whether its circuits are
    /// witness-only, calibrated from measured assignments.
    pub(super) estimates: HashMap<(usize, bool), usize>,
    /// Running syntheses: each one's estimate and the bytes it reported
    /// having written (see [`crate::synthesis::progress`]).
    pub(super) running: Vec<Arc<Writing>>,
}

/// One running synthesis as the budget sees it.
pub(super) struct Writing {
    pub(super) estimate: usize,
    pub(super) written: Arc<AtomicUsize>,
}

impl Admission {
    /// Recounts what the running syntheses have yet to write.
    pub(super) fn refresh_pending(&mut self) {
        self.mem.pending = self
            .running
            .iter()
            .map(|w| w.estimate.saturating_sub(w.written.load(Ordering::Relaxed)))
            .sum();
    }

    /// Counts a synthesis of `estimate` bytes from its admission.
    pub(super) fn start_writing(&mut self, estimate: usize) -> Arc<Writing> {
        let w = Arc::new(Writing {
            estimate,
            written: Arc::new(AtomicUsize::new(0)),
        });
        self.running.push(w.clone());
        self.mem.pending += estimate;
        w
    }

    /// Stops counting a synthesis that ended: what it holds is resident, or
    /// was measured and charged.
    pub(super) fn stop_writing(&mut self, w: &Arc<Writing>) {
        self.running.retain(|r| !Arc::ptr_eq(r, w));
        self.refresh_pending();
    }

    /// Bytes one circuit of `job` is expected to hold from its synthesis until
    /// the device takes it: calibrated from measured runs once there are some,
    /// else its witness for a witness-only job, else estimated from the
    /// parameters' shape. What its H computation adds is in the device reserve.
    pub(super) fn estimate(&self, job: &JobState) -> usize {
        let key = (
            Arc::as_ptr(&job.params) as usize,
            job.witness_bytes.is_some(),
        );
        self.estimates.get(&key).copied().unwrap_or_else(|| {
            job.witness_bytes
                .unwrap_or_else(|| initial_estimate(&job.params))
        })
    }
}

/// Host bytes the devices' H computations may add at once, for circuits of
/// `rows` constraints: each device works on one circuit at a time, so this
/// is reserved once a device rather than charged to every circuit waiting
/// for one. A witness-only circuit's H (m − 1 coefficients) comes back from
/// the device; a circuit with a, b and c grows them on the host.
pub(super) fn h_reserve_bytes(
    backends: &[Arc<dyn Backend>],
    rows: usize,
    witness_only: bool,
) -> usize {
    let per_device = if witness_only {
        rows.max(1).next_power_of_two() * std::mem::size_of::<crate::Scalar>()
    } else {
        h_host_bytes(backends, rows)
    };
    per_device * backends.len()
}

/// Whether every device computes a, b and c of `shape` from a witness (the
/// engine then keeps its assignments witness-only until a device takes them).
pub(super) fn abc_on_devices(
    backends: &[Arc<dyn Backend>],
    shape: &crate::synthesis::RecordedShape,
) -> bool {
    backends.iter().all(|b| b.matrices_bytes(shape).is_some())
}

/// Host bytes the H computation of a circuit of `rows` constraints adds, on
/// whichever of `backends` takes it.
fn h_host_bytes(backends: &[Arc<dyn Backend>], rows: usize) -> usize {
    backends
        .iter()
        .map(|b| b.h_host_bytes(rows))
        .max()
        .unwrap_or(0)
}

/// Estimated peak bytes of one circuit of `params`' shape before its H
/// computation: a, b, c of at most the domain's length each, and the variables
/// (twice: vectors grow by doubling).
pub(super) fn initial_estimate(params: &Parameters) -> usize {
    let m = params.h.len() + 1;
    let vars = params.vk.ic.len() + params.l.len();
    (3 * m + 2 * vars) * std::mem::size_of::<crate::Scalar>()
}

//! The work items that travel between the engine's threads: a circuit waiting for
//! synthesis, an assignment waiting for a device, a proof waiting for its finalizer,
//! a buffer waiting to be freed. Queues hold the first three highest priority first.

use std::any::Any;
use std::cmp::Ordering as CmpOrdering;
use std::sync::Arc;
use std::time::Instant;

use super::job::{JobState, Synthesizer};
use super::shared::Charge;
use crate::groth16::steps::G1Side;
use crate::synthesis::Assignment;

pub(crate) struct SynthTask {
    pub job: Arc<JobState>,
    pub index: usize,
    pub synth: Synthesizer,
    pub seq: u64,
    pub queued: Instant,
}

pub(crate) struct DeviceTask {
    pub job: Arc<JobState>,
    pub index: usize,
    pub asg: Assignment,
    pub charge: Arc<Charge>,
    pub seq: u64,
    pub queued: Instant,
    /// Whether it came back from a device lost while proving it.
    pub moved: bool,
}

pub(crate) struct FinalTask {
    pub job: Arc<JobState>,
    pub index: usize,
    pub asg: Assignment,
    pub g1: G1Side,
    pub charge: Arc<Charge>,
    pub device: usize,
    pub seq: u64,
}

pub(crate) struct Disposal {
    pub item: Box<dyn Any + Send>,
    pub bytes: usize,
    pub charge: Arc<Charge>,
}

/// Higher priority first, then submission order.
macro_rules! priority_order {
    ($t:ty) => {
        impl Ord for $t {
            fn cmp(&self, other: &Self) -> CmpOrdering {
                self.job
                    .priority
                    .cmp(&other.job.priority)
                    .then(other.seq.cmp(&self.seq))
            }
        }
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
                Some(self.cmp(other))
            }
        }
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                self.cmp(other) == CmpOrdering::Equal
            }
        }
        impl Eq for $t {}
    };
}
priority_order!(SynthTask);
priority_order!(DeviceTask);
priority_order!(FinalTask);

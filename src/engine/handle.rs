//! The caller's side of a submitted job: a future of its proofs, and its
//! cancellation.

use std::future::Future;
use std::pin::Pin;
use std::sync::Weak;
use std::task::{Context, Poll};

use futures::channel::oneshot;

use super::shared::Shared;
use crate::error::{Error, Result};
use crate::groth16::Proof;

/// Resolves to the job's proofs (in submission order) or to its error.
pub struct JobHandle {
    pub(crate) id: String,
    pub(crate) rx: oneshot::Receiver<Result<Vec<Proof>>>,
    pub(crate) engine: Weak<Shared>,
}

impl std::fmt::Debug for JobHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobHandle").field("id", &self.id).finish()
    }
}

impl JobHandle {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Cancels the job: its queued circuits never start, running ones are dropped at
    /// their next stage, and their memory is released.
    pub fn cancel(&self) {
        if let Some(engine) = self.engine.upgrade() {
            engine.cancel(&self.id);
        }
    }

    /// What cancels this job from elsewhere while this handle is awaited.
    pub fn canceller(&self) -> JobCanceller {
        JobCanceller {
            id: self.id.clone(),
            engine: self.engine.clone(),
        }
    }

    /// Blocks the calling thread until the job resolves.
    pub fn wait(self) -> Result<Vec<Proof>> {
        futures::executor::block_on(self)
    }
}

impl Future for JobHandle {
    type Output = Result<Vec<Proof>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.rx).poll(cx).map(|r| match r {
            Ok(result) => result,
            Err(oneshot::Canceled) => Err(Error::Invalid(
                "the engine shut down before the job finished".into(),
            )),
        })
    }
}

/// Cancels one job, from any thread, without its handle.
#[derive(Clone)]
pub struct JobCanceller {
    id: String,
    engine: Weak<Shared>,
}

impl std::fmt::Debug for JobCanceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobCanceller")
            .field("id", &self.id)
            .finish()
    }
}

impl JobCanceller {
    /// As [`JobHandle::cancel`]; false if the job was no longer in flight.
    pub fn cancel(&self) -> bool {
        self.engine
            .upgrade()
            .is_some_and(|engine| engine.cancel(&self.id))
    }
}

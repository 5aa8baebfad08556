//! `crossgroth serve` over real sockets (loopback TCP and a unix socket), one
//! test binary: every RPC ([`serve`]), faults that fail only their own job
//! ([`faults`]), what stays resident between jobs ([`residency`]) and hostile
//! requests of every kind ([`hostile`]). One binary builds once what the four
//! share (the daemon, its tonic client, filecoin-proofs' verifiers).
//!
//! The tests share one fixture ([`common::fixture`]): filecoin-proofs reads
//! its settings once a process. They take turns ([`shared_turn`],
//! [`sole_turn`]): a test that reads the whole process's memory, or moves a
//! parameter file that others read, runs alone.
//!
//! The load test (`load.rs`) has a process of its own: it bounds the whole
//! process's resident memory.

#[path = "../common/mod.rs"]
mod common;
mod faults;
mod hostile;
mod residency;
mod serve;

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static TURNS: RwLock<()> = RwLock::const_new(());

/// A turn beside the other tests that take shared turns.
pub async fn shared_turn() -> RwLockReadGuard<'static, ()> {
    TURNS.read().await
}

/// A turn alone in the process.
pub async fn sole_turn() -> RwLockWriteGuard<'static, ()> {
    TURNS.write().await
}

//! `crossgroth serve`: a drop-in for Curio's proving daemon (cuzk). It speaks the
//! `cuzk.v1.ProvingEngine` gRPC contract (proto/cuzk/v1/proving.proto, Curio's own
//! file) over TCP or a unix socket and proves with crossgroth's Filecoin prover.
//!
//! - `config`: the TOML file (cuzk's sections and names) and its typed form.
//! - `decode`: a SubmitProofRequest checked and turned into a Filecoin request,
//!   with its kind, priority and parameter set (cuzk's circuit ids).
//! - `jobs`: the job table: jobs named by request id and a digest of their
//!   inputs, a bounded priority queue, cancellation, finished results kept for
//!   a while.
//! - `service`: the eight RPCs; `metrics`: the Prometheus registry.
//! - `server`: listening, the HTTP status page, shutdown.
//! - `client`: connecting to a daemon by the same address syntax.

pub mod client;
pub mod config;
mod cuzk_metrics;
pub mod decode;
pub mod error;
mod health;
pub mod jobs;
pub mod metrics;
pub mod server;
pub mod service;

/// The messages and service of `cuzk.v1`, generated from the proto at build time.
pub mod pb {
    tonic::include_proto!("cuzk.v1");
}

pub use config::{Budget, Config, Listen};
pub use error::ConfigError;
pub use server::{open_backends, Bound, Server};

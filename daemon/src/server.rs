//! Starting and stopping the daemon: the engine and parameter cache, the gRPC
//! listener (TCP or a unix socket), the optional HTTP status page, and the
//! graceful shutdown.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use crossgroth::backend::{Backend, BackendOptions};
use crossgroth::engine::{Engine, EngineConfig};
use crossgroth::groth16::placement::PlacementConfig;
use crossgroth_filecoin::{FilecoinOptions, FilecoinProver, ParamsCache};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::{bytes_text, Config, Listen};
use crate::jobs::{Jobs, Limits};
use crate::metrics::Metrics;
use crate::pb::proving_engine_server::ProvingEngineServer;
use crate::service::{Daemon, Service};

/// Where the daemon ended up listening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Tcp(a) => write!(f, "{a}"),
            Bound::Unix(p) => write!(f, "unix://{}", p.display()),
        }
    }
}

/// A running daemon.
pub struct Server {
    daemon: Arc<Daemon>,
    bound: Bound,
    status_addr: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    grpc: JoinHandle<Result<()>>,
    background: Vec<JoinHandle<()>>,
    no_device: watch::Receiver<bool>,
    exit_when_no_device: bool,
    grace: Duration,
}

/// Opens the backends the configuration names.
pub fn open_backends(config: &Config, options: &BackendOptions) -> Result<Vec<Arc<dyn Backend>>> {
    let devices = (!config.devices.is_empty()).then_some(config.devices.as_slice());
    let backends = crossgroth::backend::open_backends(config.backend, devices, options)?;
    if backends.is_empty() {
        bail!("backend {} has no device here", config.backend);
    }
    Ok(backends)
}

impl Server {
    /// Starts serving. filecoin-proofs must already read its parameters from
    /// `config.param_cache` (FIL_PROOFS_PARAMETER_CACHE, set by the binary).
    pub async fn start(config: Config, backends: Vec<Arc<dyn Backend>>) -> Result<Server> {
        config.check()?;
        let budget = config.budget.resolve()?;
        // The error names the directory and says why, once.
        let params = ParamsCache::open(&config.param_cache)
            .map_err(|e| anyhow::anyhow!("srs.param_cache: {e}"))?
            .verifying_digests(config.verify_production_params);
        let defaults = EngineConfig::default();
        let engine_config = EngineConfig {
            memory_budget: usize::try_from(budget).unwrap_or(usize::MAX),
            synthesis_workers: match config.synthesis_threads {
                0 => defaults.synthesis_workers,
                n => n,
            },
            // Idle parameter sets are evicted when work waits for memory.
            evict_idle_sets_after: Some(config.eviction_min_idle),
            // Months of proofs: records of a few minutes, then rings.
            kept_samples: 4096,
            placement: PlacementConfig {
                release_host_copies: config.release_host_copies,
                ..defaults.placement
            },
            ..defaults
        };
        if let Some(dir) = &config.shape_cache {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("srs.shape_cache: cannot create {}", dir.display()))?;
        }
        let engine = Engine::start(engine_config, backends.clone())?;
        let prover = Arc::new(FilecoinProver::new(
            Arc::new(engine),
            params,
            FilecoinOptions {
                recorded_shapes: config.recorded_shapes,
                shapes_dir: config.shape_cache.clone(),
                ..FilecoinOptions::default()
            },
        ));
        let metrics = Arc::new(Metrics::new());
        let jobs = Jobs::new(
            prover,
            Limits {
                max_queued: config.max_queued,
                jobs_in_flight: config.jobs_in_flight,
                keep_finished: config.keep_finished,
                max_finished: config.max_finished,
            },
            metrics.clone(),
        );
        let daemon = Arc::new(Daemon::new(jobs, metrics, backends.clone()));
        let (stop, stopped) = watch::channel(false);
        let svc = ProvingEngineServer::new(Service(daemon.clone()))
            .max_decoding_message_size(config.max_message_bytes)
            .max_encoding_message_size(config.max_message_bytes);
        let (health_reporter, health_svc) = tonic_health::server::health_reporter();
        let (no_device_tx, no_device) = watch::channel(false);
        let router = tonic::transport::Server::builder()
            .max_concurrent_streams(Some(1024))
            .http2_keepalive_interval(Some(Duration::from_secs(60)))
            .add_service(health_svc)
            .add_service(svc);
        let signal = {
            let mut rx = stopped.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        };
        let (bound, grpc) = match &config.listen {
            Listen::Tcp(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("cannot listen on {addr}"))?;
                let local = listener.local_addr()?;
                let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
                let task = tokio::spawn(async move {
                    router
                        .serve_with_incoming_shutdown(incoming, signal)
                        .await
                        .context("the gRPC server failed")
                });
                (Bound::Tcp(local), task)
            }
            Listen::Unix(path) => {
                let listener = bind_unix(path)?;
                let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
                let task = tokio::spawn(async move {
                    router
                        .serve_with_incoming_shutdown(incoming, signal)
                        .await
                        .context("the gRPC server failed")
                });
                (Bound::Unix(path.clone()), task)
            }
        };
        let mut background = vec![tokio::spawn(crate::health::watch(
            daemon.clone(),
            health_reporter,
            no_device_tx,
            stopped.clone(),
        ))];
        if !config.preload.is_empty() {
            background.push(tokio::spawn(
                daemon.clone().preload_at_start(config.preload.clone()),
            ));
        }
        let mut status_addr = None;
        if let Some(addr) = &config.status_listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("daemon.status_listen: cannot listen on {addr}"))?;
            status_addr = Some(listener.local_addr()?);
            background.push(tokio::spawn(status_page(
                listener,
                daemon.clone(),
                stopped.clone(),
            )));
        }
        let names: Vec<String> = backends
            .iter()
            .map(|b| format!("{} {}", b.name(), b.device()))
            .collect();
        log::info!(
            "crossgroth serve: cuzk.v1.ProvingEngine on {bound}; devices: {}; memory budget {}; parameters from {}{}",
            names.join(", "),
            bytes_text(budget),
            config.param_cache.display(),
            status_addr.map_or(String::new(), |a| format!("; status page http://{a}/status"))
        );
        Ok(Server {
            daemon,
            bound,
            status_addr,
            stop,
            grpc,
            background,
            no_device,
            exit_when_no_device: config.exit_when_no_device,
            grace: config.grace_period,
        })
    }

    pub fn bound(&self) -> &Bound {
        &self.bound
    }

    /// The HTTP status page's address, when one is served.
    pub fn status_addr(&self) -> Option<SocketAddr> {
        self.status_addr
    }

    pub fn daemon(&self) -> &Arc<Daemon> {
        &self.daemon
    }

    /// Resolves once every device is out of service (the daemon then refuses
    /// all work; the health service says NOT_SERVING).
    pub async fn lost_all_devices(&self) {
        let mut rx = self.no_device.clone();
        let _ = rx.wait_for(|lost| *lost).await;
    }

    /// Serves until `stop` resolves (a signal; then the daemon stops
    /// gracefully) or, with `daemon.exit_when_no_device`, until every device is
    /// out of service: then it stops and returns an error, so that the process
    /// exits non-zero and its supervisor starts a fresh one.
    pub async fn serve_until(self, stop: impl std::future::Future<Output = ()>) -> Result<()> {
        let exit_when_no_device = self.exit_when_no_device;
        let no_device = async {
            if exit_when_no_device {
                self.lost_all_devices().await
            } else {
                std::future::pending().await
            }
        };
        let lost = tokio::select! {
            () = stop => false,
            () = no_device => true,
        };
        self.shutdown().await?;
        if lost {
            bail!(
                "every device is out of service: exiting so that the supervisor starts a fresh \
                 process (daemon.exit_when_no_device = false keeps it running, refusing work)"
            );
        }
        Ok(())
    }

    /// Stops: refuses new work, cancels what is queued, lets running proofs finish
    /// within the grace period (then cancels them), and closes the listener.
    pub async fn shutdown(self) -> Result<()> {
        let jobs = self.daemon.jobs.clone();
        let running = jobs.running();
        log::info!(
            "shutting down: {running} running job(s) may take up to {} s to finish",
            self.grace.as_secs()
        );
        jobs.drain();
        let deadline = Instant::now() + self.grace;
        while jobs.running() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if jobs.running() > 0 {
            log::warn!(
                "grace period over: cancelling {} running job(s)",
                jobs.running()
            );
            jobs.cancel_running();
            let deadline = Instant::now() + Duration::from_secs(30);
            while jobs.running() > 0 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        // Replies to the finished jobs' callers go out before the listener closes.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = self.stop.send(true);
        let result = match tokio::time::timeout(Duration::from_secs(10), self.grpc).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(anyhow::anyhow!("the gRPC server task failed: {e}")),
            // Connections still open after their replies: closed with the process.
            Err(_) => Ok(()),
        };
        for b in self.background {
            b.abort();
        }
        if let Bound::Unix(path) = &self.bound {
            let _ = std::fs::remove_file(path);
        }
        log::info!("stopped");
        result
    }
}

/// Binds a unix socket readable and writable by its owner only. A stale socket
/// left by an earlier run is replaced; any other file is not.
fn bind_unix(path: &Path) -> Result<tokio::net::UnixListener> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            bail!(
                "cannot listen on unix://{}: a file that is not a socket is there",
                path.display()
            );
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            bail!(
                "cannot listen on unix://{}: another process is serving there",
                path.display()
            );
        }
        std::fs::remove_file(path).with_context(|| format!("removing stale {}", path.display()))?;
    }
    // SAFETY: umask only changes the process's file-creation mask; restored below.
    let old = unsafe { libc::umask(0o177) };
    let bound = tokio::net::UnixListener::bind(path);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    let listener = bound.with_context(|| format!("cannot listen on unix://{}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("setting permissions of {}", path.display()))?;
    Ok(listener)
}

/// `GET /status` (JSON, as cuzk serves it), `GET /metrics` (Prometheus text) and
/// `GET /healthz` (200 SERVING or 503 NOT_SERVING, as the health service), on
/// axum until the daemon stops.
async fn status_page(
    listener: tokio::net::TcpListener,
    daemon: Arc<Daemon>,
    mut stopped: watch::Receiver<bool>,
) {
    use axum::extract::State;
    use axum::http::{header::CONTENT_TYPE, StatusCode};
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/status",
            get(|State(d): State<Arc<Daemon>>| async move {
                ([(CONTENT_TYPE, "application/json")], d.status_json())
            }),
        )
        .route(
            "/metrics",
            get(|State(d): State<Arc<Daemon>>| async move {
                (
                    [(CONTENT_TYPE, "text/plain; version=0.0.4")],
                    d.metrics_text(),
                )
            }),
        )
        .route(
            "/healthz",
            get(|State(d): State<Arc<Daemon>>| async move {
                if d.serving() {
                    (StatusCode::OK, "SERVING\n")
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "NOT_SERVING\n")
                }
            }),
        )
        .fallback(|| async { (StatusCode::NOT_FOUND, "GET /status, /metrics or /healthz\n") })
        .with_state(daemon);
    let stop = async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
    {
        log::error!("the status listener failed: {e}");
    }
}

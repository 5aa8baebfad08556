//! Health a supervisor or load balancer can read: the standard gRPC health
//! service (grpc.health.v1) on the daemon's listener, SERVING while at least
//! one device is in service and the daemon takes work, NOT_SERVING otherwise,
//! for the whole server ("") and for cuzk.v1.ProvingEngine alike; and the
//! signal that every device is lost, on which the binary may exit so that
//! systemd starts a fresh process.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tonic::server::NamedService;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

use crate::pb::proving_engine_server::ProvingEngineServer;
use crate::service::{Daemon, Service};

/// How often the daemon's state is read: a device is retired at most once,
/// so a short poll is cheap and a probe sees the change within it.
const EVERY: Duration = Duration::from_millis(250);

/// The names the health service answers for.
fn names() -> [&'static str; 2] {
    ["", <ProvingEngineServer<Service> as NamedService>::NAME]
}

/// Keeps the health service's statuses in step with the daemon until `stopped`,
/// and sets `no_device` once every device is out of service.
pub(crate) async fn watch(
    daemon: Arc<Daemon>,
    reporter: HealthReporter,
    no_device: watch::Sender<bool>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut last = None;
    loop {
        let stopping = *stopped.borrow();
        let serving = daemon.serving() && !stopping;
        if last != Some(serving) {
            let status = if serving {
                ServingStatus::Serving
            } else {
                ServingStatus::NotServing
            };
            for name in names() {
                reporter.set_service_status(name, status).await;
            }
            if last.is_some() {
                log::warn!(
                    "health: {}",
                    if serving { "SERVING" } else { "NOT_SERVING" }
                );
            }
            last = Some(serving);
        }
        if !daemon.has_device_in_service() {
            no_device.send_replace(true);
        }
        if stopping {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(EVERY) => {}
            _ = stopped.changed() => {}
        }
    }
}

//! A client of a daemon at `host:port` or `unix:///path`, with Curio's message
//! size limits.

use anyhow::{Context, Result};
use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::config::{Listen, DEFAULT_MAX_MESSAGE};
use crate::pb::proving_engine_client::ProvingEngineClient;

/// Connects to `addr` (`host:port`, `http://host:port` or `unix:///path`).
pub async fn connect(addr: &str) -> Result<ProvingEngineClient<Channel>> {
    let channel = channel(addr).await?;
    Ok(ProvingEngineClient::new(channel)
        .max_decoding_message_size(DEFAULT_MAX_MESSAGE)
        .max_encoding_message_size(DEFAULT_MAX_MESSAGE))
}

/// A channel to `addr`.
pub async fn channel(addr: &str) -> Result<Channel> {
    let plain = addr.strip_prefix("http://").unwrap_or(addr);
    match plain.parse::<Listen>()? {
        Listen::Tcp(hp) => Endpoint::from_shared(format!("http://{hp}"))
            .with_context(|| format!("address {addr}"))?
            .connect()
            .await
            .with_context(|| format!("cannot connect to {addr}")),
        Listen::Unix(path) => {
            // The URI is not used: the connector dials the socket.
            Endpoint::try_from("http://[::1]:1")?
                .connect_with_connector(tower::service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move {
                        Ok::<_, std::io::Error>(TokioIo::new(
                            tokio::net::UnixStream::connect(path).await?,
                        ))
                    }
                }))
                .await
                .with_context(|| format!("cannot connect to {addr}"))
        }
    }
}

//! `crossgroth serve`: the proving daemon Curio talks to (cuzk.v1 over gRPC), until
//! SIGTERM or ctrl-c, which stop it gracefully (exit 0).

use std::path::PathBuf;

use anyhow::{Context, Result};
use crossgroth::backend::BackendKind;
use crossgroth_daemon::{config, open_backends, Config, Listen, Server};

use super::backend_flags;

/// Where a configuration is looked for when `--config` names none: crossgroth's
/// own, then cuzk's default, so that a host set up for cuzk keeps its file.
const CONFIG_SEARCH: &[&str] = &["/etc/crossgroth/crossgroth.toml", "/data/zk/cuzk.toml"];

/// Where recorded shapes are kept unless the configuration says otherwise.
const DEFAULT_SHAPE_CACHE: &str = "/var/tmp/crossgroth-shapes";

#[derive(clap::Args)]
pub struct ServeArgs {
    /// The TOML configuration (cuzk's sections: [daemon], [srs], [memory], [gpus],
    /// [logging]; see daemon/crossgroth.example.toml). Flags override it. Default:
    /// the first of /etc/crossgroth/crossgroth.toml and /data/zk/cuzk.toml that
    /// exists, else built-in defaults.
    #[arg(short, long)]
    config: Option<PathBuf>,
    /// Where to listen: host:port (default 127.0.0.1:9820) or unix:///path.sock.
    #[arg(short, long)]
    listen: Option<Listen>,
    /// Log level: trace, debug, info (default), warn, error or off; RUST_LOG,
    /// where set, wins (as in cuzk).
    #[arg(long)]
    log_level: Option<String>,
    /// Backend to prove on: cpu, cuda, wgpu or auto (default: the config's, else auto).
    #[arg(long)]
    backend: Option<BackendKind>,
    /// The parameter cache (default: the config's srs.param_cache, else
    /// $FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters).
    #[arg(long)]
    params_dir: Option<PathBuf>,
    /// Serve the HTTP /status JSON page (and /metrics) at host:port.
    #[arg(long)]
    status_listen: Option<String>,
}

pub fn run(args: ServeArgs) -> Result<()> {
    // filecoin-proofs' variable names the cache unless the file names one.
    let mut base = Config {
        shape_cache: Some(PathBuf::from(DEFAULT_SHAPE_CACHE)),
        ..Config::default()
    };
    if let Some(dir) = std::env::var_os("FIL_PROOFS_PARAMETER_CACHE") {
        base.param_cache = dir.into();
    }
    if let Ok(v) = std::env::var("FIL_PROOFS_VERIFY_PRODUCTION_PARAMS") {
        base.verify_production_params = matches!(v.trim(), "1" | "true" | "yes");
    }
    let path = args.config.clone().or_else(|| {
        CONFIG_SEARCH
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
    });
    let text = match &path {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the configuration {}", p.display()))?,
        ),
        None => None,
    };
    // Logging starts before the file is parsed, so that its warnings show.
    let level = match (
        &args.log_level,
        text.as_deref().and_then(config::logging_level_of),
    ) {
        (Some(l), _) => config::check_log_level(l, "--log-level")?,
        (None, Some(l)) => config::check_log_level(&l, "logging.level")?,
        (None, None) => base.log_level.clone(),
    };
    super::init_logging(&level);
    let mut config = match (&path, &text) {
        (Some(p), Some(t)) => Config::from_toml_over(t, base)
            .map_err(|e| anyhow::anyhow!("{}: {}", p.display(), e))?,
        _ => {
            log::info!(
                "no configuration file (looked for {}): defaults",
                CONFIG_SEARCH.join(", ")
            );
            base
        }
    };
    config.log_level = level;
    if let Some(p) = &path {
        log::info!("configuration from {}", p.display());
    }
    if let Some(l) = args.listen {
        config.listen = l;
    }
    if let Some(b) = args.backend {
        config.backend = b;
    }
    if let Some(d) = args.params_dir {
        config.param_cache = d;
    }
    if let Some(s) = args.status_listen {
        config.status_listen = Some(s);
    }
    config.check()?;
    // filecoin-proofs reads its parameter directory once, from the environment:
    // its verifiers must read the keys the daemon proves with.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &config.param_cache);
    super::signals::leave_to_command();
    let backends = open_backends(&config, backend_flags::backend_options())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("serve")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        // The handlers are in place before anyone is told where the daemon
        // listens: a supervisor's SIGTERM right after that line must stop it,
        // not be swallowed by the one-shot commands' handler.
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
        let server = Server::start(config, backends).await?;
        eprintln!("crossgroth serve: listening on {}", server.bound());
        if let Some(a) = server.status_addr() {
            eprintln!("crossgroth serve: status page on http://{a}/status");
        }
        let signalled = async {
            let which = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            eprintln!("crossgroth serve: {which}: finishing running proofs, then stopping");
        };
        server.serve_until(signalled).await
    })
}

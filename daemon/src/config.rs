//! The daemon's configuration: a TOML file with cuzk's sections and names
//! (`[daemon] listen`, `[srs] param_cache`, `[memory] total_budget` …), so that an
//! operator's cuzk file keeps working; keys crossgroth does not know are logged
//! and ignored.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use crossgroth::backend::BackendKind;
use serde::Deserialize;

use crate::error::ConfigError;

/// Where the daemon listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// `host:port`; port 0 picks a free one.
    Tcp(String),
    /// `unix:///path`: created with owner-only permissions.
    Unix(PathBuf),
}

impl FromStr for Listen {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let s = s.trim();
        if let Some(path) = s.strip_prefix("unix://") {
            if path.is_empty() || !path.starts_with('/') {
                return Err(ConfigError::new(format!(
                    "listen address {s:?}: a unix socket is unix:///absolute/path"
                )));
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        if s.contains("://") {
            return Err(ConfigError::new(format!(
                "listen address {s:?}: expected host:port or unix:///path"
            )));
        }
        let ok = s
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
        if !ok {
            return Err(ConfigError::new(format!(
                "listen address {s:?}: expected host:port or unix:///path"
            )));
        }
        Ok(Listen::Tcp(s.to_string()))
    }
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tcp(a) => f.write_str(a),
            Listen::Unix(p) => write!(f, "unix://{}", p.display()),
        }
    }
}

/// The memory budget: all of RAM less a margin, or a fixed number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    Auto { margin: u64 },
    Bytes(u64),
}

impl Budget {
    /// The budget in bytes; `auto` reads MemTotal (and the cgroup's limit, when lower).
    pub fn resolve(&self) -> Result<u64, ConfigError> {
        match *self {
            Budget::Bytes(b) => Ok(b),
            Budget::Auto { margin } => {
                let total = mem_total().ok_or_else(|| {
                    ConfigError::new(
                        "memory.total_budget = \"auto\" needs /proc/meminfo: set a size instead",
                    )
                })?;
                let total = cgroup_limit().map_or(total, |c| c.min(total));
                let budget = total.saturating_sub(margin);
                if budget == 0 {
                    return Err(ConfigError::new(format!(
                        "memory.safety_margin ({}) leaves nothing of {} of memory",
                        bytes_text(margin),
                        bytes_text(total)
                    )));
                }
                Ok(budget)
            }
        }
    }
}

fn mem_total() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = m
        .lines()
        .find(|l| l.starts_with("MemTotal:"))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

/// The tightest memory limit of this process's cgroups (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), from its own cgroup up to the root: a systemd
/// unit's `MemoryMax=` is on the unit's cgroup, not on the root's.
fn cgroup_limit() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<u64> = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (root, file) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
        } else {
            continue;
        };
        let root = Path::new(root);
        let mut dir = root.join(path.trim_start_matches('/'));
        loop {
            let limit = std::fs::read_to_string(dir.join(file))
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .filter(|&l| l < 1 << 60);
            if let Some(l) = limit {
                best = Some(best.map_or(l, |b| b.min(l)));
            }
            if dir == root || !dir.pop() || !dir.starts_with(root) {
                break;
            }
        }
    }
    best
}

/// Everything `crossgroth serve` needs, typed.
#[derive(Clone, Debug)]
pub struct Config {
    pub listen: Listen,
    /// Where the HTTP `/status` JSON page is served; none by default.
    pub status_listen: Option<String>,
    /// The parameter cache (filecoin-proofs' names).
    pub param_cache: PathBuf,
    pub budget: Budget,
    /// How long a parameter set must go unused before it may be evicted for memory.
    pub eviction_min_idle: Duration,
    /// Free the host copy of a parameter set's G1 queries once every device
    /// holds them (see `PlacementConfig::release_host_copies`).
    pub release_host_copies: bool,
    pub backend: BackendKind,
    /// Device ordinals to prove on; empty: every device of the backend.
    pub devices: Vec<usize>,
    /// Largest gRPC message either way.
    pub max_message_bytes: usize,
    /// On SIGTERM, how long running proofs may take to finish.
    pub grace_period: Duration,
    /// Jobs that may wait for their turn; beyond, submissions are refused.
    pub max_queued: usize,
    /// Jobs prepared and handed to the engine at once (within them, memory decides).
    pub jobs_in_flight: usize,
    /// How long a finished job's result stays for AwaitProof and resubmission.
    pub keep_finished: Duration,
    /// Most finished jobs kept at once.
    pub max_finished: usize,
    /// Threads synthesizing circuits (0: one a core).
    pub synthesis_threads: usize,
    /// Record each circuit's shape once and synthesize later proofs' witnesses only.
    pub recorded_shapes: bool,
    /// Exit (non-zero) once every device is out of service, so that the
    /// supervisor (systemd's Restart=on-failure) starts a fresh process.
    pub exit_when_no_device: bool,
    /// The daemon's log level (cuzk's `[logging] level`): trace … error.
    pub log_level: String,
    /// Check each parameter file against the digest Filecoin publishes before
    /// its first read (filecoin-proofs' FIL_PROOFS_VERIFY_PRODUCTION_PARAMS).
    pub verify_production_params: bool,
    /// Where recorded shapes are kept between runs (`[srs] shape_cache`);
    /// None: in memory only. The binary's default is /var/tmp/crossgroth-shapes.
    pub shape_cache: Option<PathBuf>,
    /// Circuits (cuzk's ids, e.g. "porep-32g") whose parameter sets and kept
    /// shapes are loaded at start, so that the daemon is ready before the
    /// first request (`[srs] preload`).
    pub preload: Vec<String>,
}

/// The default TCP address: cuzk's port, on loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9820";
/// Curio sends messages up to this size (a 32 GiB C1 output is ~50 MB).
pub const DEFAULT_MAX_MESSAGE: usize = 256 << 20;

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: Listen::Tcp(DEFAULT_LISTEN.into()),
            status_listen: None,
            param_cache: PathBuf::from(crossgroth_filecoin::params::DEFAULT_PARAMETER_CACHE),
            budget: Budget::Auto { margin: 5 << 30 },
            eviction_min_idle: Duration::from_secs(300),
            release_host_copies: false,
            backend: BackendKind::Auto,
            devices: vec![],
            max_message_bytes: DEFAULT_MAX_MESSAGE,
            grace_period: Duration::from_secs(120),
            max_queued: 64,
            jobs_in_flight: 4,
            keep_finished: Duration::from_secs(3600),
            max_finished: 1024,
            synthesis_threads: 0,
            recorded_shapes: true,
            exit_when_no_device: true,
            log_level: "info".into(),
            verify_production_params: false,
            shape_cache: None,
            preload: vec![],
        }
    }
}

#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    daemon: DaemonSection,
    #[serde(default)]
    srs: SrsSection,
    #[serde(default)]
    memory: MemorySection,
    #[serde(default)]
    gpus: GpuSection,
    #[serde(default)]
    synthesis: SynthesisSection,
    #[serde(default)]
    logging: LoggingSection,
}

#[derive(Deserialize, Default)]
struct LoggingSection {
    level: Option<String>,
}

#[derive(Deserialize, Default)]
struct DaemonSection {
    listen: Option<String>,
    status_listen: Option<String>,
    max_message_size: Option<Size>,
    grace_period: Option<Dur>,
    max_queued: Option<usize>,
    jobs_in_flight: Option<usize>,
    keep_finished: Option<Dur>,
    max_finished: Option<usize>,
    exit_when_no_device: Option<bool>,
}

#[derive(Deserialize, Default)]
struct SrsSection {
    param_cache: Option<PathBuf>,
    verify_production_params: Option<bool>,
    shape_cache: Option<PathBuf>,
    preload: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
struct MemorySection {
    total_budget: Option<Size>,
    safety_margin: Option<Size>,
    eviction_min_idle: Option<Dur>,
    release_host_copies: Option<bool>,
}

#[derive(Deserialize, Default)]
struct GpuSection {
    backend: Option<String>,
    devices: Option<Vec<usize>>,
}

#[derive(Deserialize, Default)]
struct SynthesisSection {
    threads: Option<usize>,
    recorded_shapes: Option<bool>,
}

/// A TOML error on one line, with the key it is about (`in `memory.x``).
fn one_line(e: &toml::de::Error) -> String {
    let text = e.to_string();
    let words: Vec<&str> = text.split_whitespace().collect();
    words.join(" ").trim_start_matches('.').trim().to_string()
}

/// A size: bytes as an integer, or text such as "256MiB", "5GiB", "auto".
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Size {
    Int(u64),
    Text(String),
}

/// A duration: seconds as an integer, or text such as "300s", "5m", "1h".
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Dur {
    Int(u64),
    Text(String),
}

/// The keys each section knows, to name the rest (cuzk's own tuning keys among them).
const KNOWN: &[(&str, &[&str])] = &[
    (
        "daemon",
        &[
            "listen",
            "status_listen",
            "max_message_size",
            "grace_period",
            "max_queued",
            "jobs_in_flight",
            "keep_finished",
            "max_finished",
            "exit_when_no_device",
        ],
    ),
    (
        "srs",
        &[
            "param_cache",
            "verify_production_params",
            "shape_cache",
            "preload",
        ],
    ),
    (
        "memory",
        &[
            "total_budget",
            "safety_margin",
            "eviction_min_idle",
            "release_host_copies",
        ],
    ),
    ("gpus", &["backend", "devices"]),
    ("synthesis", &["threads", "recorded_shapes"]),
    ("logging", &["level"]),
];

/// Log levels `[logging] level` and `--log-level` take.
pub const LOG_LEVELS: &[&str] = &["trace", "debug", "info", "warn", "error", "off"];

/// Checks a log level, naming `what` (the key or flag it came from).
pub fn check_log_level(level: &str, what: &str) -> Result<String, ConfigError> {
    let l = level.trim().to_ascii_lowercase();
    if LOG_LEVELS.contains(&l.as_str()) {
        Ok(l)
    } else {
        Err(ConfigError::new(format!(
            "{what} = {level:?}: expected one of {}",
            LOG_LEVELS.join(", ")
        )))
    }
}

/// The `[logging] level` of a configuration's text, read before the rest so
/// that logging starts at that level before the file's own warnings.
pub fn logging_level_of(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    Some(table.get("logging")?.get("level")?.as_str()?.to_string())
}

impl Config {
    /// Reads a TOML file over the defaults.
    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        Config::from_file_over(path, Config::default())
    }

    /// Reads a TOML file over `base`: what the file does not set stays as
    /// `base` has it (the binary's base takes the parameter cache from
    /// FIL_PROOFS_PARAMETER_CACHE, as filecoin-proofs does).
    pub fn from_file_over(path: &Path, base: Config) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(format!("{}: {e}", path.display())))?;
        Config::from_toml_over(&text, base)
            .map_err(|e| ConfigError::new(format!("{}: {}", path.display(), e.0)))
    }

    /// Parses TOML text over the defaults.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        Config::from_toml_over(text, Config::default())
    }

    /// Parses TOML text over `base`.
    pub fn from_toml_over(text: &str, base: Config) -> Result<Config, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::new(e.message()))?;
        for unknown in unknown_keys(&table) {
            log::warn!("config: {unknown} is not a crossgroth setting: ignored");
        }
        let file: File = table
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::new(one_line(&e)))?;
        let mut c = base;
        let d = file.daemon;
        if let Some(l) = d.listen {
            c.listen = l.parse()?;
        }
        c.status_listen = d.status_listen.filter(|s| !s.trim().is_empty());
        if let Some(s) = d.max_message_size {
            c.max_message_bytes = usize::try_from(size(&s, "daemon.max_message_size")?)
                .map_err(|_| ConfigError::new("daemon.max_message_size is too large"))?;
        }
        if let Some(g) = d.grace_period {
            c.grace_period = duration(&g, "daemon.grace_period")?;
        }
        if let Some(n) = d.max_queued {
            c.max_queued = n;
        }
        if let Some(n) = d.jobs_in_flight {
            c.jobs_in_flight = n;
        }
        if let Some(k) = d.keep_finished {
            c.keep_finished = duration(&k, "daemon.keep_finished")?;
        }
        if let Some(n) = d.max_finished {
            c.max_finished = n;
        }
        if let Some(e) = d.exit_when_no_device {
            c.exit_when_no_device = e;
        }
        if let Some(p) = file.srs.param_cache {
            c.param_cache = p;
        }
        if let Some(v) = file.srs.verify_production_params {
            c.verify_production_params = v;
        }
        if let Some(ids) = file.srs.preload {
            for id in &ids {
                crate::decode::Circuit::parse(id)
                    .map_err(|e| ConfigError::new(format!("srs.preload: {e}")))?;
            }
            c.preload = ids;
        }
        if let Some(d) = file.srs.shape_cache {
            // An empty path turns the cache off.
            c.shape_cache = (!d.as_os_str().is_empty()).then_some(d);
        }
        if let Some(l) = file.logging.level {
            c.log_level = check_log_level(&l, "logging.level")?;
        }
        let m = file.memory;
        let margin = match &m.safety_margin {
            Some(s) => size(s, "memory.safety_margin")?,
            None => 5 << 30,
        };
        c.budget = match &m.total_budget {
            Some(Size::Text(t)) if t.trim() == "auto" => Budget::Auto { margin },
            Some(s) => Budget::Bytes(size(s, "memory.total_budget")?),
            None => Budget::Auto { margin },
        };
        if let Some(e) = m.eviction_min_idle {
            c.eviction_min_idle = duration(&e, "memory.eviction_min_idle")?;
        }
        if let Some(r) = m.release_host_copies {
            c.release_host_copies = r;
        }
        if let Some(b) = file.gpus.backend {
            c.backend = b.parse().map_err(ConfigError::new)?;
        }
        if let Some(d) = file.gpus.devices {
            c.devices = d;
        }
        if let Some(t) = file.synthesis.threads {
            c.synthesis_threads = t;
        }
        if let Some(r) = file.synthesis.recorded_shapes {
            c.recorded_shapes = r;
        }
        c.check()?;
        Ok(c)
    }

    /// Refuses settings that cannot work.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.max_message_bytes < 4096 {
            return Err(ConfigError::new(
                "daemon.max_message_size must be at least 4 KiB",
            ));
        }
        if self.jobs_in_flight == 0 {
            return Err(ConfigError::new("daemon.jobs_in_flight must be at least 1"));
        }
        if self.max_finished == 0 {
            return Err(ConfigError::new("daemon.max_finished must be at least 1"));
        }
        if let Budget::Bytes(0) = self.budget {
            return Err(ConfigError::new("memory.total_budget must not be 0"));
        }
        Ok(())
    }
}

fn unknown_keys(table: &toml::Table) -> Vec<String> {
    let mut out = vec![];
    for (section, value) in table {
        let Some((_, keys)) = KNOWN.iter().find(|(s, _)| s == section) else {
            out.push(format!("[{section}]"));
            continue;
        };
        if let Some(t) = value.as_table() {
            out.extend(
                t.keys()
                    .filter(|k| !keys.contains(&k.as_str()))
                    .map(|k| format!("{section}.{k}")),
            );
        }
    }
    out
}

fn size(s: &Size, what: &str) -> Result<u64, ConfigError> {
    match s {
        Size::Int(n) => Ok(*n),
        Size::Text(t) => parse_size(t).ok_or_else(|| {
            ConfigError::new(format!(
                "{what} = {t:?}: expected bytes or a size such as \"64GiB\""
            ))
        }),
    }
}

fn duration(d: &Dur, what: &str) -> Result<Duration, ConfigError> {
    match d {
        Dur::Int(n) => Ok(Duration::from_secs(*n)),
        Dur::Text(t) => parse_duration(t).ok_or_else(|| {
            ConfigError::new(format!(
                "{what} = {t:?}: expected seconds or a duration such as \"30s\", \"5m\", \"1h\""
            ))
        }),
    }
}

/// "64GiB", "512 MiB", "5GB", "1024": bytes (decimal and binary units).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num.parse().ok()?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "kib" => 1 << 10,
        "m" | "mb" => 1000 * 1000,
        "mib" => 1 << 20,
        "g" | "gb" => 1000 * 1000 * 1000,
        "gib" => 1 << 30,
        "t" | "tb" => 1000u64.pow(4),
        "tib" => 1 << 40,
        _ => return None,
    };
    let v = num * mult as f64;
    (v.is_finite() && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

/// "30s", "5m", "1h", "250ms", "90": a duration (bare numbers are seconds).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().ok()?;
    Some(match unit.trim() {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n.checked_mul(60)?),
        "h" => Duration::from_secs(n.checked_mul(3600)?),
        _ => return None,
    })
}

/// Bytes as operators read them ("5.0 GiB").
pub fn bytes_text(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuzk_file_parses_and_defaults_hold() {
        let c = Config::from_toml(
            r#"
            [daemon]
            listen = "unix:///run/curio/cuzk.sock"
            status_listen = "127.0.0.1:9821"
            [srs]
            param_cache = "/data/zk/params"
            [memory]
            total_budget = "auto"
            safety_margin = "5GiB"
            eviction_min_idle = "5m"
            [gpus]
            devices = []
            gpu_threads = 32
            [pipeline]
            enabled = true
            "#,
        )
        .unwrap();
        assert_eq!(c.listen, Listen::Unix("/run/curio/cuzk.sock".into()));
        assert_eq!(c.status_listen.as_deref(), Some("127.0.0.1:9821"));
        assert_eq!(c.budget, Budget::Auto { margin: 5 << 30 });
        assert_eq!(c.eviction_min_idle, Duration::from_secs(300));
        assert_eq!(c.max_message_bytes, 256 << 20);
        let d = Config::from_toml("").unwrap();
        assert_eq!(d.listen, Listen::Tcp("127.0.0.1:9820".into()));
        assert!(!c.release_host_copies && !d.release_host_copies);
        let r = Config::from_toml("[memory]\nrelease_host_copies = true").unwrap();
        assert!(r.release_host_copies);
        let e = Config::from_toml("[memory]\nrelease_host_copies = \"yes\"").unwrap_err();
        assert!(e.to_string().contains("release_host_copies"), "{e}");
        assert!(!e.to_string().contains('\n'), "one line: {e:?}");
    }

    #[test]
    fn bad_values_are_named() {
        let e = Config::from_toml("[memory]\ntotal_budget = \"lots\"").unwrap_err();
        assert!(e.0.contains("memory.total_budget"), "{e}");
        let e = Config::from_toml("[daemon]\nlisten = \"http://x:1\"").unwrap_err();
        assert!(e.0.contains("host:port"), "{e}");
        let e = Config::from_toml("[daemon]\ngrace_period = \"soon\"").unwrap_err();
        assert!(e.0.contains("daemon.grace_period"), "{e}");
        assert!(Config::from_toml("[daemon\n").is_err());
        let e = Config::from_toml("[srs]\npreload = [\"porep-3g\"]").unwrap_err();
        assert!(
            e.0.contains("srs.preload") && e.0.contains("porep-3g"),
            "{e}"
        );
        let e = Config::from_toml("[logging]\nlevel = \"loud\"").unwrap_err();
        assert!(e.0.contains("logging.level"), "{e}");
        let c = Config::from_toml("[srs]\npreload = [\"wpost-2k\"]\nshape_cache = \"\"").unwrap();
        assert_eq!(
            (c.preload, c.shape_cache),
            (vec!["wpost-2k".to_string()], None)
        );
        assert_eq!(parse_size("64GiB"), Some(64 << 30));
        assert_eq!(parse_size("1.5 KiB"), Some(1536));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
    }
}

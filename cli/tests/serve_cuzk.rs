//! `crossgroth serve` started as cuzk's daemon is: cuzk's example configuration
//! (its sections and tuning keys), its short flags and `--log-level`; the
//! daemon logs at info by default, names the keys it ignores, takes the
//! parameter cache from FIL_PROOFS_PARAMETER_CACHE when the file names none,
//! answers on its port, and stops with exit 0 on SIGTERM. Bad flags and bad
//! files fail in one line naming them.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// cuzk's example configuration (curio extern/cuzk/cuzk.example.toml, its keys
/// and values; comments left out), without its [srs] section.
const CUZK_TOML: &str = r#"
[daemon]
listen = "0.0.0.0:9820"

[memory]
total_budget = "auto"
safety_margin = "5GiB"
eviction_min_idle = "5m"

[gpus]
devices = []
gpu_threads = 32
gpu_workers_per_device = 2

[scheduler]
max_batch_size = 1
max_batch_wait_ms = 10000
sort_by_type = true

[synthesis]
threads = 0

[pipeline]
enabled = true
synthesis_lookahead = 1
synthesis_concurrency = 1

[logging]
level = "info"
"#;

/// Starts the daemon and collects its stderr lines until it says where it
/// listens; the rest of its lines keep arriving on the channel.
fn start(args: &[&str], env: &[(&str, &str)]) -> (Child, Vec<String>, mpsc::Receiver<String>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crossgroth"));
    cmd.arg("serve").args(args).stderr(Stdio::piped());
    cmd.env_remove("RUST_LOG")
        .env_remove("FIL_PROOFS_PARAMETER_CACHE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut lines = vec![];
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        assert!(
            std::time::Instant::now() < deadline,
            "no listening line within 120 s: {lines:#?}"
        );
        let done = line.contains("crossgroth serve: listening on");
        lines.push(line);
        if done {
            break;
        }
    }
    (child, lines, rx)
}

fn listening_on(lines: &[String]) -> String {
    lines
        .iter()
        .find_map(|l| l.split("crossgroth serve: listening on ").nth(1))
        .unwrap_or_else(|| panic!("no listening line in {lines:#?}"))
        .trim()
        .to_string()
}

/// SIGTERM right after the listening line, as a supervisor may send it; a
/// daemon that does not stop within a minute fails the test instead of hanging it.
fn stop(mut child: Child) -> i32 {
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the daemon did not stop within 60 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn cuzk_configuration_and_flags_start_the_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params");
    std::fs::create_dir(&params).unwrap();
    let toml = dir.path().join("cuzk.toml");
    std::fs::write(&toml, CUZK_TOML).unwrap();
    let (child, lines, _rx) = start(
        &[
            "-c",
            toml.to_str().unwrap(),
            "-l",
            "127.0.0.1:0",
            "--backend",
            "cpu",
        ],
        &[("FIL_PROOFS_PARAMETER_CACHE", params.to_str().unwrap())],
    );
    let text = lines.join("\n");
    let addr = listening_on(&lines);
    // Info-level logs by default, the file named, cuzk's tuning keys named as ignored.
    assert!(text.contains("configuration from"), "{text}");
    assert!(text.contains("cuzk.v1.ProvingEngine on"), "{text}");
    assert!(text.contains("gpus.gpu_threads"), "{text}");
    assert!(text.contains("pipeline"), "{text}");
    // The parameter cache from FIL_PROOFS_PARAMETER_CACHE: the file names none.
    assert!(
        text.contains(&format!("parameters from {}", params.display())),
        "{text}"
    );
    std::net::TcpStream::connect(&addr).unwrap();
    assert_eq!(stop(child), 0);
}

#[test]
fn log_level_flag_quiets_the_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("cuzk.toml");
    std::fs::write(
        &toml,
        format!(
            "[srs]\nparam_cache = {:?}\n[logging]\nlevel = \"debug\"\n",
            dir.path().display().to_string()
        ),
    )
    .unwrap();
    let (child, lines, _rx) = start(
        &[
            "--config",
            toml.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--backend",
            "cpu",
            "--log-level",
            "warn",
        ],
        &[],
    );
    let text = lines.join("\n");
    listening_on(&lines);
    assert!(!text.contains(" INFO "), "{text}");
    assert_eq!(stop(child), 0);
}

#[test]
fn a_bad_log_level_or_file_fails_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_crossgroth"))
            .arg("serve")
            .args(args)
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        (out.status.code(), err)
    };
    let (code, err) = run(&["--log-level", "loud", "-l", "127.0.0.1:0"]);
    assert_eq!(code, Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--log-level") && err.contains("loud"), "{err}");

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[logging]\nlevel = \"shout\"\n").unwrap();
    let (code, err) = run(&["-c", bad.to_str().unwrap(), "-l", "127.0.0.1:0"]);
    assert_eq!(code, Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("logging.level"), "{err}");

    let missing = dir.path().join("missing.toml");
    let (code, err) = run(&["-c", missing.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("missing.toml"), "{err}");
}

//! `crossgroth filecoin`: a test sector's PoSt inputs proved from files, the
//! commands `test-sector` prints run as printed, and bad input refused in one line.

use std::path::Path;
use std::process::Command;

fn crossgroth(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_crossgroth"))
        .args(args)
        .current_dir(dir)
        .env_remove("FIL_PROOFS_PARAMETER_CACHE")
        .env("FIL_PROOFS_PARENT_CACHE", dir.join("parents"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs one of the printed command lines (without the shell).
fn run_printed(line: &str, dir: &Path) -> (i32, String, String) {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&words[..2], ["crossgroth", "filecoin"], "{line}");
    crossgroth(&words[1..], dir)
}

#[test]
fn test_sector_post_commands_prove_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, out, err) = crossgroth(
        &[
            "filecoin",
            "test-sector",
            "--kind",
            "post",
            "--dir",
            "t",
            "--seed",
            "4",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(d
        .join("t/params/CROSSGROTH-INSECURE-TEST-PARAMETERS.txt")
        .is_file());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    for line in &lines {
        let (code, _, err) = run_printed(line, d);
        assert_eq!(code, 0, "{line}: {err}");
        assert!(err.contains("verified by filecoin-proofs"), "{err}");
        assert!(err.contains("INSECURE"), "{err}");
    }
    for proof in ["winning.proof", "window.proof"] {
        assert_eq!(
            std::fs::metadata(d.join(proof)).unwrap().len(),
            192,
            "{proof}"
        );
    }

    // Bad input: one error line, exit 1, nothing written.
    let winning = lines[0];
    let bad_randomness = {
        let words: Vec<String> = winning.split_whitespace().map(String::from).collect();
        let i = words.iter().position(|w| w == "--randomness").unwrap();
        let mut w = words.clone();
        w[i + 1] = "00ff".into();
        let k = w.iter().position(|x| x == "--out").unwrap();
        w[k + 1] = "bad.proof".into();
        w.join(" ")
    };
    let (code, _, err) = run_printed(&bad_randomness, d);
    assert_eq!(code, 1, "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(
        errors,
        ["error: randomness must be 32 bytes, got 2"],
        "{err}"
    );
    assert!(!d.join("bad.proof").exists());

    let (code, _, err) = crossgroth(
        &[
            "filecoin",
            "porep-c2",
            "--c1",
            "missing.json",
            "--miner-id",
            "1",
            "--params-dir",
            "t/params",
            "--out",
            "p.proof",
        ],
        d,
    );
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: the C1 output missing.json"),
        "{err}"
    );
}

/// `bench-porep --witness-pass` times one fabricated partition's witness pass
/// alone, labelled a benchmark, and with `--direct` the same partition's direct
/// synthesis and the ratio of their core-seconds; it takes no flags of the
/// synthesis comparison.
#[test]
fn bench_porep_times_a_witness_pass_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, out, err) = crossgroth(
        &[
            "filecoin",
            "bench-porep",
            "--sector-size",
            "2KiB",
            "--witness-pass",
            "--direct",
        ],
        d,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("BENCHMARK:"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("one partition's witness pass"))
        .unwrap_or_else(|| panic!("{out}"));
    let aux: u64 = line
        .split(" aux")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(aux > 1000, "{line}");
    assert!(
        line.contains(" user, ") && line.contains(" system)"),
        "{line}"
    );
    for line in [
        "the same pass on the last pass's vectors (no fresh pages): ",
        "the same partition synthesized directly (",
    ] {
        assert!(out.lines().any(|l| l.starts_with(line)), "{line}: {out}");
    }
    let ratio: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("witness pass / direct synthesis: "))
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(ratio > 0.0 && ratio.is_finite(), "{out}");
    let (code, _, err) = crossgroth(
        &[
            "filecoin",
            "bench-porep",
            "--witness-pass",
            "--compare-synthesis",
        ],
        d,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--compare-synthesis"), "{err}");
}

/// `bench-porep --devices` names the devices to prove on; one the backend does
/// not have fails at once, in one line, before the shape is recorded.
#[test]
fn bench_porep_refuses_a_device_the_backend_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = crossgroth(
        &[
            "filecoin",
            "bench-porep",
            "--sector-size",
            "2KiB",
            "--backend",
            "cpu",
            "--devices",
            "0,1",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--devices [0, 1]"), "{err}");
    assert!(!out.contains("recording"), "{out}");
}

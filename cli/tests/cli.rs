//! The binary: one line on stderr and a non-zero status for every error.

use std::process::Command;

fn crossgroth(args: &[&str], dir: &std::path::Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_crossgroth"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn one_error_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    lines[0]
}

#[test]
fn setup_prove_verify_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, _, _) = crossgroth(
        &[
            "setup",
            "--circuit",
            "multi:2",
            "--params",
            "p.bin",
            "--vk",
            "vk.bin",
            "--seed",
            "1",
        ],
        d,
    );
    assert_eq!(code, 0);
    let (code, out, _) = crossgroth(
        &[
            "prove",
            "--circuit",
            "multi:2",
            "--params",
            "p.bin",
            "--proof",
            "a.proof",
            "--seed",
            "2",
            "--backend",
            "cpu",
        ],
        d,
    );
    assert_eq!(code, 0);
    assert!(out.contains("seeded"));
    // Seeded proofs are reproducible.
    crossgroth(
        &[
            "prove",
            "--circuit",
            "multi:2",
            "--params",
            "p.bin",
            "--proof",
            "b.proof",
            "--seed",
            "2",
        ],
        d,
    );
    assert_eq!(
        std::fs::read(d.join("a.proof")).unwrap(),
        std::fs::read(d.join("b.proof")).unwrap()
    );
    let (code, out, _) = crossgroth(&["verify", "--vk", "vk.bin", "--proof", "a.proof"], d);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("valid"));

    // A non-canonical public input (the modulus itself) is refused.
    let inputs = std::fs::read_to_string(d.join("a.proof.inputs.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&inputs).unwrap();
    let first = v["public_inputs"][0].as_str().unwrap().to_string();
    let modulus = "01000000fffffffffe5bfeff02a4bd5305d8a10908d83933487d9d2953a7ed73";
    std::fs::write(d.join("bad.json"), inputs.replace(&first, modulus)).unwrap();
    let (code, _, err) = crossgroth(
        &[
            "verify", "--vk", "vk.bin", "--proof", "a.proof", "--inputs", "bad.json",
        ],
        d,
    );
    assert_eq!(code, 1);
    assert!(one_error_line(&err).contains("public input 0 is not a canonical scalar"));

    // A wrong input value: invalid proof, exit 1.
    let other = "0200000000000000000000000000000000000000000000000000000000000000";
    std::fs::write(d.join("wrong.json"), inputs.replace(&first, other)).unwrap();
    let (code, _, err) = crossgroth(
        &[
            "verify",
            "--vk",
            "vk.bin",
            "--proof",
            "a.proof",
            "--inputs",
            "wrong.json",
        ],
        d,
    );
    assert_eq!(code, 1);
    assert!(one_error_line(&err).contains("invalid"));

    // Parameters of another circuit, a truncated file, a missing file, a bad spec.
    for (args, needle) in [
        (
            vec![
                "prove",
                "--circuit",
                "cubic",
                "--params",
                "p.bin",
                "--proof",
                "x",
            ],
            "do not match the circuit",
        ),
        (
            vec![
                "prove",
                "--circuit",
                "multi:2",
                "--params",
                "missing.bin",
                "--proof",
                "x",
            ],
            "missing.bin",
        ),
        (
            vec!["verify", "--vk", "p.bin", "--proof", "a.proof"],
            "trailing bytes",
        ),
        (
            vec!["verify", "--vk", "vk.bin", "--proof", "vk.bin"],
            "a proof has 192",
        ),
    ] {
        let (code, _, err) = crossgroth(&args, d);
        assert_eq!(code, 1, "{args:?}");
        assert!(one_error_line(&err).contains(needle), "{args:?}: {err}");
    }
    let (code, _, err) = crossgroth(
        &[
            "prove",
            "--circuit",
            "sha512:3",
            "--params",
            "p.bin",
            "--proof",
            "x",
        ],
        d,
    );
    assert_ne!(code, 0);
    assert!(one_error_line(&err).contains("unknown circuit spec 'sha512:3'"));
}

#[test]
fn devices_lists_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = crossgroth(&["devices"], dir.path());
    assert_eq!(code, 0);
    for name in ["cpu", "cuda", "wgpu"] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{out}");
    }
}

/// Every backend present against the cpu backend: each operation matches, and a
/// backend's one-time warm-up is reported apart from the operations' times.
#[test]
fn crosscheck_compares_every_backend_with_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = crossgroth(&["crosscheck", "--circuit", "cubic"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("MISMATCH"), "{out}");
    for line in out.lines().filter(|l| l.contains("against cpu")) {
        assert!(line.contains("(warm-up "), "{line}");
    }
    if std::env::var("CROSSGROTH_REQUIRE_WGPU").as_deref() == Ok("1") {
        assert!(out.lines().any(|l| l.starts_with("wgpu (")), "{out}");
        assert!(out.contains("proof      match"), "{out}");
    }
}

/// `setup --backend wgpu` (lavapipe in CI) writes the parameter file and
/// verifying key `--backend cpu` writes for the same seed, byte for byte.
#[test]
fn setup_on_wgpu_writes_the_cpu_backends_bytes_and_both_field_codes_prove_alike() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for backend in ["cpu", "wgpu"] {
        let params = format!("{backend}.params");
        let vk = format!("{backend}.vk");
        let (code, _, err) = crossgroth(
            &[
                "setup",
                "--circuit",
                "chain:8",
                "--params",
                &params,
                "--vk",
                &vk,
                "--seed",
                "9",
                "--backend",
                backend,
            ],
            d,
        );
        if backend == "wgpu"
            && code != 0
            && std::env::var("CROSSGROTH_REQUIRE_WGPU").as_deref() != Ok("1")
        {
            eprintln!("skipped: no wgpu adapter here ({err})");
            return;
        }
        assert_eq!(code, 0, "{backend}: {err}");
    }
    for file in ["params", "vk"] {
        assert_eq!(
            std::fs::read(d.join(format!("cpu.{file}"))).unwrap(),
            std::fs::read(d.join(format!("wgpu.{file}"))).unwrap(),
            "{file}"
        );
    }
    // The portable u32 field code (--wgpu-portable) proves the same bytes as
    // the adapter's SHADER_INT64 code.
    for (proof, flag) in [
        ("int64.proof", None),
        ("portable.proof", Some("--wgpu-portable")),
    ] {
        let mut args = vec![
            "prove",
            "--circuit",
            "chain:8",
            "--params",
            "wgpu.params",
            "--proof",
            proof,
            "--backend",
            "wgpu",
            "--seed",
            "3",
        ];
        args.extend(flag);
        let (code, _, err) = crossgroth(&args, d);
        assert_eq!(code, 0, "{proof}: {err}");
    }
    assert_eq!(
        std::fs::read(d.join("int64.proof")).unwrap(),
        std::fs::read(d.join("portable.proof")).unwrap(),
    );
}

//! The command line as a careful user expects it: nothing lost on interrupt,
//! outputs and backends checked before the work (in under a second), parameter
//! reading fast and visible, each error said once and bounded, no flag accepted
//! and ignored, and no crash that is not an error line.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Run {
    code: Option<i32>,
    out: String,
    err: String,
    secs: f64,
}

fn command(args: &[&str], dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_crossgroth"));
    c.args(args)
        .current_dir(dir)
        // A cache of checked parameter files of this test run's own.
        .env("CROSSGROTH_CACHE_DIR", dir.join("cache"))
        .env_remove("CROSSGROTH_TEST_FAULT")
        .env_remove("RUST_LOG");
    c
}

fn finish(o: Output, t: Instant) -> Run {
    Run {
        code: o.status.code(),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
        secs: t.elapsed().as_secs_f64(),
    }
}

fn run(args: &[&str], dir: &Path) -> Run {
    let t = Instant::now();
    finish(command(args, dir).output().unwrap(), t)
}

fn run_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Run {
    let t = Instant::now();
    let mut c = command(args, dir);
    for (k, v) in env {
        c.env(k, v);
    }
    finish(c.output().unwrap(), t)
}

/// The one `error` line of a failed run (asserting there is exactly one).
fn error_line(r: &Run) -> &str {
    let lines: Vec<&str> = r.err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "stderr: {}", r.err);
    lines[0]
}

fn ok(r: &Run) {
    assert_eq!(r.code, Some(0), "stdout: {}\nstderr: {}", r.out, r.err);
}

/// A failure, fast: exit status `code`, one error line containing `needle`,
/// in under a second.
fn fails_fast(r: &Run, code: i32, needle: &str) {
    assert_eq!(r.code, Some(code), "stdout: {}\nstderr: {}", r.out, r.err);
    let line = error_line(r);
    assert!(line.contains(needle), "{line:?} lacks {needle:?}");
    assert!(r.secs < 1.0, "took {:.2} s to fail: {line}", r.secs);
}

/// Parameter files shared by the tests (made once per test binary).
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        for (circuit, name) in [
            ("sha256:64", "sha"),
            ("cubic", "cubic"),
            ("multi:2", "multi"),
        ] {
            let params = format!("{name}.params");
            let vk = format!("{name}.vk");
            let r = run(
                &[
                    "setup",
                    "--circuit",
                    circuit,
                    "--params",
                    &params,
                    "--vk",
                    &vk,
                    "--seed",
                    "1",
                ],
                dir.path(),
            );
            ok(&r);
        }
        let r = run(
            &[
                "prove",
                "--circuit",
                "cubic",
                "--params",
                "cubic.params",
                "--proof",
                "cubic.proof",
                "--backend",
                "cpu",
                "--trust-params",
            ],
            dir.path(),
        );
        ok(&r);
        Fixture { dir }
    })
}

fn tmp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}

// ---- data loss -------------------------------------------------------------

/// `setup` over an existing, valid parameter file, interrupted while it writes:
/// the old file is byte-identical afterwards and no temporary file remains.
#[test]
fn an_interrupted_setup_leaves_the_old_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = |seed: &'static str| {
        [
            "setup",
            "--circuit",
            "chain:12",
            "--params",
            "p.params",
            "--vk",
            "p.vk",
            "--seed",
            seed,
        ]
    };
    ok(&run(&args("1"), d));
    let old = std::fs::read(d.join("p.params")).unwrap();
    let old_vk = std::fs::read(d.join("p.vk")).unwrap();
    for (signal, name, code) in [
        (libc::SIGINT, "SIGINT", 130),
        (libc::SIGTERM, "SIGTERM", 143),
    ] {
        let child = command(&args("2"), d)
            .env("CROSSGROTH_TEST_FAULT", "slow-write")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the new file is being written: bytes in it, since the
        // writability check at start creates (and removes) an empty one.
        let t = Instant::now();
        while !tmp_files(d)
            .iter()
            .any(|n| std::fs::metadata(d.join(n)).is_ok_and(|m| m.len() > 0))
        {
            assert!(t.elapsed() < Duration::from_secs(60), "no write started");
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(
            tmp_files(d).iter().all(|n| n.starts_with(".p.params.tmp-")),
            "{:?}",
            tmp_files(d)
        );
        // SAFETY: signals a child process of this test.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let o = child.wait_with_output().unwrap();
        let r = finish(o, t);
        assert_eq!(r.code, Some(code), "{}", r.err);
        let line = error_line(&r);
        assert!(line.contains(&format!("interrupted by {name}")), "{line}");
        assert!(line.contains("p.params left as it was"), "{line}");
        assert_eq!(std::fs::read(d.join("p.params")).unwrap(), old, "{name}");
        assert_eq!(std::fs::read(d.join("p.vk")).unwrap(), old_vk, "{name}");
        assert_eq!(tmp_files(d), Vec::<String>::new(), "{name}");
    }
    // Uninterrupted, the new parameters replace the old, with the file's
    // permissions kept and nothing left beside them.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d.join("p.params"), std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(&run(&args("2"), d));
    assert_ne!(std::fs::read(d.join("p.params")).unwrap(), old);
    let mode = std::fs::metadata(d.join("p.params"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    assert_eq!(tmp_files(d), Vec::<String>::new());
}

/// A failed `prove` (parameters of another circuit) leaves an existing proof and
/// inputs file as they were.
#[test]
fn a_failed_prove_leaves_the_old_proof() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(f.path("cubic.proof"), d.join("x.proof")).unwrap();
    std::fs::copy(
        f.path("cubic.proof.inputs.json"),
        d.join("x.proof.inputs.json"),
    )
    .unwrap();
    let params = f.path("multi.params");
    let r = run(
        &[
            "prove",
            "--circuit",
            "cubic",
            "--params",
            params.to_str().unwrap(),
            "--proof",
            "x.proof",
        ],
        d,
    );
    assert_eq!(r.code, Some(1));
    assert!(error_line(&r).contains("do not match the circuit"));
    assert_eq!(
        std::fs::read(d.join("x.proof")).unwrap(),
        std::fs::read(f.path("cubic.proof")).unwrap()
    );
    assert_eq!(tmp_files(d), Vec::<String>::new());
}

// ---- failing before the work -----------------------------------------------

#[test]
fn outputs_and_backends_are_checked_before_the_work() {
    let f = fixture();
    let d = f.dir.path();
    let prove = |extra: &[&str]| {
        let mut a = vec!["prove", "--circuit", "sha256:64", "--params", "sha.params"];
        a.extend_from_slice(extra);
        if !extra.contains(&"--backend") {
            a.extend_from_slice(&["--backend", "cpu"]);
        }
        run(&a, d)
    };
    fails_fast(
        &prove(&["--proof", "nodir/x.proof"]),
        1,
        "--proof nodir/x.proof: the directory nodir does not exist",
    );
    fails_fast(
        &prove(&["--proof", "x.proof", "--inputs", "nodir/x.json"]),
        1,
        "--inputs nodir/x.json: the directory nodir does not exist",
    );
    fails_fast(&prove(&["--proof", "."]), 1, "is a directory, not a file");
    fails_fast(
        &prove(&["--proof", "sha.params"]),
        1,
        "would overwrite the --params file",
    );
    // setup of a circuit that takes many seconds fails at once.
    fails_fast(
        &run(
            &[
                "setup",
                "--circuit",
                "chain:16",
                "--params",
                "nodir/x.params",
            ],
            d,
        ),
        1,
        "--params nodir/x.params: the directory nodir does not exist",
    );
    fails_fast(
        &run(
            &[
                "setup",
                "--circuit",
                "chain:16",
                "--params",
                "x.params",
                "--vk",
                "nodir/x.vk",
            ],
            d,
        ),
        1,
        "--vk nodir/x.vk",
    );
    // The engine's summary and plot.
    for (flag, path) in [("--json", "nodir/s.json"), ("--plot", "nodir/s.svg")] {
        fails_fast(
            &run(
                &[
                    "prove",
                    "--circuit",
                    "sha256:64",
                    "--params",
                    "sha.params",
                    "--count",
                    "4",
                    flag,
                    path,
                ],
                d,
            ),
            1,
            &format!("{flag} {path}: the directory nodir does not exist"),
        );
        fails_fast(
            &run(&["bench-engine", "--circuit", "chain:16", flag, path], d),
            1,
            path,
        );
    }
    // No CUDA driver: said before the parameters are read.
    let devices = run(&["devices"], d);
    if devices
        .out
        .lines()
        .any(|l| l.starts_with("cuda  unavailable"))
    {
        fails_fast(
            &prove(&["--proof", "x.proof", "--backend", "cuda"]),
            1,
            "cuda backend unavailable",
        );
        // The same for a parameter file that is not one: the backend comes first.
        std::fs::write(d.join("garbage.params"), vec![7u8; 1 << 20]).unwrap();
        fails_fast(
            &run(
                &[
                    "prove",
                    "--circuit",
                    "cubic",
                    "--params",
                    "garbage.params",
                    "--proof",
                    "x",
                    "--backend",
                    "cuda",
                ],
                d,
            ),
            1,
            "cuda backend unavailable",
        );
    }
    assert_eq!(tmp_files(d), Vec::<String>::new());
}

// ---- parameter reading -----------------------------------------------------

#[test]
fn parameters_are_read_as_far_as_needed_and_checked_once() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(f.path("sha.params"), d.join("sha.params")).unwrap();
    let prove = || {
        run(
            &[
                "prove",
                "--circuit",
                "sha256:64",
                "--params",
                "sha.params",
                "--proof",
                "s.proof",
                "--backend",
                "cpu",
            ],
            d,
        )
    };
    // First read: every point's subgroup checked, the time said in the timing
    // line, and progress as plain lines (stderr is not a terminal here).
    let first = prove();
    ok(&first);
    assert!(
        first.out.contains("(reading the parameters "),
        "{}",
        first.out
    );
    assert!(first.out.contains("subgroup checks "), "{}", first.out);
    assert!(!first.out.contains("skipped"), "{}", first.out);
    assert!(first.err.contains("reading sha.params ("), "{}", first.err);
    assert!(first.err.contains(": done in "), "{}", first.err);
    // Second read of the same bytes: the checks are skipped, and it says so.
    let second = prove();
    ok(&second);
    assert!(
        second
            .out
            .contains("subgroup checks skipped: these bytes passed them before"),
        "{}",
        second.out
    );
    // The verifying key of a parameter file: read without the rest, at once.
    let r = run(
        &["verify", "--params", "sha.params", "--proof", "s.proof"],
        d,
    );
    ok(&r);
    assert!(r.secs < 1.0, "verify --params took {:.2} s", r.secs);
    // A changed file is checked again: a point moved off the subgroup is found.
    let mut bytes = std::fs::read(d.join("sha.params")).unwrap();
    // The vk's six points, IC's length and points, h's length: then h[0].
    let ic = u32::from_be_bytes(bytes[864..868].try_into().unwrap()) as usize;
    let h0 = 868 + 96 * ic + 4;
    bytes[h0..h0 + 96].copy_from_slice(&off_subgroup_g1());
    std::fs::write(d.join("sha.params"), &bytes).unwrap();
    let r = prove();
    assert_eq!(r.code, Some(1), "{}", r.err);
    assert!(
        error_line(&r).contains("h[0] at offset") && error_line(&r).contains("subgroup"),
        "{}",
        r.err
    );
    // A truncated parameter file is refused by verify --params too.
    std::fs::write(d.join("cut.params"), &bytes[..bytes.len() - 1]).unwrap();
    let r = run(
        &["verify", "--params", "cut.params", "--proof", "s.proof"],
        d,
    );
    fails_fast(&r, 1, "remain");
}

/// A point on y² = x³ + 4 outside the prime-order subgroup.
fn off_subgroup_g1() -> [u8; 96] {
    use blst::*;
    for x in 1u64.. {
        // SAFETY: plain blst field arithmetic on local values.
        unsafe {
            let (mut fx, mut rhs, mut y, mut four) = (
                blst_fp::default(),
                blst_fp::default(),
                blst_fp::default(),
                blst_fp::default(),
            );
            blst_fp_from_uint64(&mut fx, [x, 0, 0, 0, 0, 0].as_ptr());
            blst_fp_from_uint64(&mut four, [4, 0, 0, 0, 0, 0].as_ptr());
            blst_fp_sqr(&mut rhs, &fx);
            blst_fp_mul(&mut rhs, &rhs, &fx);
            blst_fp_add(&mut rhs, &rhs, &four);
            if blst_fp_sqrt(&mut y, &rhs) {
                let p = blst_p1_affine { x: fx, y };
                if blst_p1_affine_on_curve(&p) && !blst_p1_affine_in_g1(&p) {
                    let mut out = [0u8; 96];
                    blst_p1_affine_serialize(out.as_mut_ptr(), &p);
                    return out;
                }
            }
        }
    }
    unreachable!()
}

// ---- errors said once, with names ------------------------------------------

#[test]
fn each_error_says_each_cause_once() {
    let f = fixture();
    let d = f.dir.path();
    let r = run(&["verify", "--vk", "cubic.vk", "--proof", "nope.proof"], d);
    let line = error_line(&r);
    assert_eq!(line, "error: nope.proof: No such file or directory");
    let r = run(&["verify", "--params", ".", "--proof", "cubic.proof"], d);
    assert_eq!(error_line(&r), "error: .: is a directory, not a file");
    let r = run(
        &[
            "prove",
            "--circuit",
            "cubic",
            "--params",
            "/",
            "--proof",
            "x",
            "--backend",
            "cpu",
        ],
        d,
    );
    assert!(
        error_line(&r).ends_with("/: is a directory, not a file"),
        "{}",
        r.err
    );
    // A key of another circuit: the file named, and what is wrong with it.
    let r = run(&["verify", "--vk", "multi.vk", "--proof", "cubic.proof"], d);
    assert_eq!(
        error_line(&r),
        "error: multi.vk belongs to a circuit with 2 public inputs, but cubic.proof.inputs.json \
         holds 1 (for cubic): the key and the proof are of different circuits"
    );
    // A whole parameter file given as a key: one prefix, and what it is.
    let r = run(
        &["verify", "--vk", "cubic.params", "--proof", "cubic.proof"],
        d,
    );
    let line = error_line(&r);
    assert!(
        line.starts_with("error: cubic.params: verifying key: "),
        "{line}"
    );
    assert_eq!(line.matches("verifying key").count(), 1, "{line}");
    assert!(!line.contains("parameter file:"), "{line}");
    assert!(line.contains("trailing bytes"), "{line}");
    assert!(line.contains("a whole parameter file"), "{line}");
}

#[test]
fn parameter_shapes_are_checked_first_on_every_path() {
    let f = fixture();
    let d = f.dir.path();
    let r = run(
        &[
            "crosscheck",
            "--circuit",
            "sha256:64",
            "--params",
            "cubic.params",
        ],
        d,
    );
    fails_fast(&r, 1, "cubic.params: parameters do not match the circuit");
    let r = run(
        &[
            "prove",
            "--circuit",
            "sha256:64",
            "--params",
            "cubic.params",
            "--count",
            "2",
            "--backend",
            "cpu",
        ],
        d,
    );
    fails_fast(&r, 1, "cubic.params: parameters do not match the circuit");
    let r = run(
        &[
            "bench-engine",
            "--circuit",
            "sha256:64",
            "--params",
            "cubic.params",
            "--count",
            "2",
            "--recorded",
        ],
        d,
    );
    fails_fast(&r, 1, "do not match the circuit");
}

// ---- bounded lines, single prefixes, named rows ---------------------------

#[test]
fn error_lines_are_bounded() {
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(f.path("cubic.proof"), d.join("c.proof")).unwrap();
    let huge = "0".repeat(524_288);
    std::fs::write(
        d.join("big.json"),
        format!(r#"{{"circuit":"cubic","seeded":false,"public_inputs":"{huge}"}}"#),
    )
    .unwrap();
    let vk = f.path("cubic.vk");
    let r = run(
        &[
            "verify",
            "--vk",
            vk.to_str().unwrap(),
            "--proof",
            "c.proof",
            "--inputs",
            "big.json",
        ],
        d,
    );
    let line = error_line(&r);
    assert!(line.len() < 250, "{} bytes: {line}", line.len());
    assert!(
        line.contains("big.json is not a public-inputs file"),
        "{line}"
    );
    assert!(line.contains("(524288 characters)"), "{line}");
    // A huge circuit spec, on the command line.
    let spec = format!("sha256:{}", "9".repeat(100_000));
    let r = run(&["setup", "--circuit", &spec, "--params", "x"], d);
    assert_eq!(r.code, Some(2));
    for l in r.err.lines() {
        assert!(l.len() < 700, "{} bytes", l.len());
    }
}

/// An unsatisfied witness is named by its namespace path, the same in direct
/// synthesis (prove, prove --count) and in recorded mode (prove --count --recorded).
#[test]
fn unsatisfied_rows_are_named_in_every_mode() {
    let f = fixture();
    let d = f.dir.path();
    let fault = [("CROSSGROTH_TEST_FAULT", "unsatisfied:3000")];
    let base = [
        "prove",
        "--circuit",
        "sha256:64",
        "--params",
        "sha.params",
        "--backend",
        "cpu",
    ];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        run_env(&a, d, &fault)
    };
    let direct = with(&["--proof", "u.proof"]);
    assert_eq!(direct.code, Some(1), "{}", direct.err);
    let line = error_line(&direct).to_string();
    let named = line
        .split_once("unsatisfied constraint: ")
        .map(|(_, rest)| rest.to_string())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        named.contains(" (") && named.contains('/'),
        "no path: {line}"
    );
    for extra in [&["--count", "2"][..], &["--count", "2", "--recorded"][..]] {
        let r = with(extra);
        assert_eq!(r.code, Some(1), "{}", r.err);
        let l = error_line(&r);
        assert!(l.ends_with(&named), "{extra:?}: {l} (direct: {named})");
    }
}

// ---- flags ------------------------------------------------------------------

#[test]
fn flags_that_would_do_nothing_are_refused() {
    let f = fixture();
    let d = f.dir.path();
    let r = run(
        &[
            "prove",
            "--circuit",
            "cubic",
            "--params",
            "cubic.params",
            "--count",
            "1",
            "--proof",
            "x",
            "--seed",
            "3",
        ],
        d,
    );
    fails_fast(&r, 2, "cannot be used with");
    assert!(
        r.err.contains("--proof") && r.err.contains("--seed"),
        "{}",
        r.err
    );
    let r = run(
        &[
            "prove",
            "--circuit",
            "cubic",
            "--params",
            "cubic.params",
            "--proof",
            "x",
            "--json",
            "s.json",
            "--batch",
            "2",
        ],
        d,
    );
    fails_fast(
        &r,
        2,
        "--batch, --json only apply to runs through the engine",
    );
    let r = run(&["verify", "--proof", "cubic.proof"], d);
    assert_eq!(r.code, Some(2));
    assert!(
        r.err.contains("--params") && r.err.contains("--vk"),
        "{}",
        r.err
    );
    // bench-engine takes a backend; --witness-seed and --trust-params apply to --count.
    let r = run(
        &[
            "bench-engine",
            "--circuit",
            "cubic",
            "--count",
            "2",
            "--backend",
            "cpu",
        ],
        d,
    );
    ok(&r);
    assert!(r.out.contains("on cpu"), "{}", r.out);
    let r = run(
        &[
            "prove",
            "--circuit",
            "cubic",
            "--params",
            "cubic.params",
            "--count",
            "2",
            "--witness-seed",
            "5",
            "--trust-params",
            "--backend",
            "cpu",
        ],
        d,
    );
    ok(&r);
    assert!(r.out.contains("--trust-params"), "{}", r.out);
    for sub in [
        "setup",
        "prove",
        "verify",
        "crosscheck",
        "bench-engine",
        "demo",
    ] {
        let h = run(&[sub, "--help"], d);
        ok(&h);
    }
}

// ---- crashes that are errors -------------------------------------------------

#[test]
fn commands_too_large_for_memory_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = run(
        &["setup", "--circuit", "chain:31", "--params", "x.params"],
        d,
    );
    fails_fast(&r, 1, "setup --circuit chain:31 needs about");
    assert!(error_line(&r).contains("TiB"), "{}", r.err);
    // Under a 3 GB address-space limit, a circuit that would fit the machine.
    let sh = |cmd: &str| {
        let t = Instant::now();
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v 3000000 && exec {} {cmd}",
                env!("CARGO_BIN_EXE_crossgroth")
            ))
            .current_dir(d)
            .output()
            .unwrap();
        finish(o, t)
    };
    let r = sh("setup --circuit chain:22 --params x.params");
    fails_fast(&r, 1, "the address-space limit (ulimit -v)");
    assert!(!d.join("x.params").exists());
    assert_eq!(tmp_files(d), Vec::<String>::new());
}

#[test]
fn a_panic_is_one_line_and_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_env(
        &["devices"],
        dir.path(),
        &[("CROSSGROTH_TEST_FAULT", "panic")],
    );
    assert_eq!(r.code, Some(101), "{}", r.err);
    let line = error_line(&r);
    assert!(line.contains("internal error"), "{line}");
    assert!(
        line.contains("CROSSGROTH_TEST_FAULT=panic at cli/src/cli/fault.rs"),
        "{line}"
    );
    assert_eq!(r.err.lines().count(), 1, "{}", r.err);
}

// ---- noise and honesty in tests --------------------------------------------

#[test]
fn no_xdg_runtime_dir_complaints() {
    // The shared test helper gave this process a private one before main.
    let dir = std::env::var_os("XDG_RUNTIME_DIR").expect("XDG_RUNTIME_DIR is set");
    assert!(Path::new(&dir).is_dir());
    // The binary gives itself one when started without.
    let t = tempfile::tempdir().unwrap();
    let o = command(&["devices"], t.path())
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("XDG_RUNTIME_DIR"), "{err}");
}

#[test]
fn skipped_device_tests_are_summed_up() {
    assert_eq!(common::skip_summary("gpu_proofs", &[]), None);
    let skipped = vec![
        (
            "cuda_a".to_string(),
            "cuda proof tests".to_string(),
            "no driver".to_string(),
        ),
        (
            "cuda_b".to_string(),
            "cuda proof tests".to_string(),
            "no driver".to_string(),
        ),
    ];
    assert_eq!(
        common::skip_summary("gpu_proofs", &skipped).unwrap(),
        "gpu_proofs: SKIPPED 2 of the tests counted as passed above ran without their \
         device (cuda_a, cuda_b): cuda proof tests: no driver"
    );
}

// ---- the plot ------------------------------------------------------------------

#[test]
fn the_engine_plot_has_every_lane_and_a_legend() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = run(
        &[
            "bench-engine",
            "--circuit",
            "cubic",
            "--count",
            "8",
            "--simulate-device-ms",
            "5",
            "--plot",
            "run.svg",
            "--json",
            "run.json",
        ],
        d,
    );
    ok(&r);
    let svg = std::fs::read_to_string(d.join("run.svg")).unwrap();
    for lane in [
        "queue_synthesis (",
        "queue_device (",
        "g1_side (",
        "verify (",
        "dealloc (",
    ] {
        assert!(svg.contains(lane), "no lane {lane}");
    }
    assert!(svg.contains("waiting in a queue"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("run.json")).unwrap()).unwrap();
    assert_eq!(json["proofs"], 8);
}

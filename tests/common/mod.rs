//! Helpers shared by the integration tests.
#![allow(dead_code)]

use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{generate_random_parameters, Parameters, Proof};
use crossgroth::Scalar;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

pub type BpParams = bellperson::groth16::Parameters<blstrs::Bls12>;

pub fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

pub fn spec(s: &str) -> CircuitSpec {
    s.parse().unwrap()
}

/// crossgroth-generated parameters for a built-in circuit.
pub fn params_for(spec: &CircuitSpec, seed: u64) -> Parameters {
    generate_random_parameters(spec.blank(), &mut rng(seed), None).unwrap()
}

pub fn to_bellperson(params: &Parameters) -> BpParams {
    let mut bytes = vec![];
    params.write(&mut bytes).unwrap();
    BpParams::read(&bytes[..], false).unwrap()
}

pub fn from_bellperson(params: &BpParams) -> Parameters {
    let mut bytes = vec![];
    params.write(&mut bytes).unwrap();
    Parameters::from_bytes(&bytes, true).unwrap()
}

pub fn bp_proof_bytes(p: &bellperson::groth16::Proof<blstrs::Bls12>) -> Vec<u8> {
    let mut v = vec![];
    p.write(&mut v).unwrap();
    v
}

pub fn param_bytes(params: &Parameters) -> Vec<u8> {
    let mut bytes = vec![];
    params.write(&mut bytes).unwrap();
    bytes
}

pub fn random_rs(seed: u64) -> (Scalar, Scalar) {
    use ff::Field;
    let mut r = rng(seed);
    (Scalar::random(&mut r), Scalar::random(&mut r))
}

pub fn verifies(params: &Parameters, proof: &Proof, inputs: &[Scalar]) -> bool {
    let pvk = crossgroth::groth16::prepare_verifying_key(&params.vk);
    crossgroth::groth16::verify_proof(&pvk, proof, inputs).unwrap()
}

/// Tests that passed without doing their work (no device): (test, what, why).
static SKIPPED: std::sync::Mutex<Vec<(String, String, String)>> = std::sync::Mutex::new(Vec::new());

/// Says that GPU tests were skipped, past the test harness's output capture (which
/// only intercepts `print!`/`eprint!`), so that a skip is seen, not only counted;
/// and records it for the line printed after the harness's summary.
pub fn report_skipped(what: &str, why: &dyn std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED: {what}: {why} ***\n");
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_string();
    SKIPPED.lock().unwrap_or_else(|e| e.into_inner()).push((
        test,
        what.to_string(),
        why.to_string(),
    ));
}

/// The line that follows libtest's "test result: ok. N passed" when some of those
/// tests only passed because their device was missing; None when none was.
pub fn skip_summary(binary: &str, skipped: &[(String, String, String)]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let mut tests: Vec<&str> = skipped.iter().map(|s| s.0.as_str()).collect();
    tests.sort_unstable();
    tests.dedup();
    let mut reasons: Vec<String> = skipped
        .iter()
        .map(|(_, what, why)| format!("{what}: {why}"))
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    Some(format!(
        "{binary}: SKIPPED {} of the tests counted as passed above ran without their device ({}): {}",
        tests.len(),
        tests.join(", "),
        reasons.join("; ")
    ))
}

/// Before `main` (so before any test thread, and before any backend is opened): a
/// private XDG_RUNTIME_DIR where none is set, which Mesa and the Vulkan loader
/// otherwise complain about on stderr once per process (child processes of the
/// tests inherit it); and the skip summary, printed when the harness exits.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[link_section = ".init_array"]
static BEFORE_MAIN: extern "C" fn() = before_main;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn before_main() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        use std::os::unix::fs::DirBuilderExt;
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let dir = std::env::temp_dir().join(format!("crossgroth-test-runtime-{uid}"));
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        if dir.is_dir() {
            // Single-threaded still: no test has started.
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
    extern "C" fn at_exit() {
        let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
        let binary = std::env::args()
            .next()
            .and_then(|a| {
                let stem = std::path::Path::new(&a)
                    .file_stem()?
                    .to_string_lossy()
                    .into_owned();
                Some(
                    stem.rsplit_once('-')
                        .map_or(stem.clone(), |(b, _)| b.to_string()),
                )
            })
            .unwrap_or_default();
        if let Some(line) = skip_summary(&binary, &skipped) {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }
    // SAFETY: registers a plain function to run at exit.
    unsafe {
        libc::atexit(at_exit);
    }
}

/// Waits for the engine to finish its work, then checks that nothing is left
/// charged to the memory budget or in flight.
pub fn assert_drained(engine: &crossgroth::engine::Engine) {
    engine.wait_idle();
    let st = engine.status();
    assert_eq!(st.memory.charged, 0, "{st:?}");
    assert_eq!(st.memory.units_in_flight, 0, "{st:?}");
    assert_eq!(st.jobs_in_flight, 0);
}

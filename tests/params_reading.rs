//! Reading parameter files as far as a command needs: the verifying key alone, the
//! vectors' lengths alone, and the whole set with its subgroup checks skipped only
//! for bytes known to have passed them.

mod common;

use common::*;
use crossgroth::groth16::{Parameters, ParamsLengths, SubgroupChecks, VerifyingKey};
use crossgroth::Error;

fn written(spec_str: &str) -> (Parameters, tempfile::TempDir, std::path::PathBuf) {
    let params = params_for(&spec(spec_str), 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.params");
    params.write_file(&path).unwrap();
    (params, dir, path)
}

#[test]
fn the_key_and_the_lengths_without_the_rest() {
    let (params, _dir, path) = written("multi:3");
    assert_eq!(VerifyingKey::read_params_file(&path).unwrap(), params.vk);
    assert_eq!(ParamsLengths::read_file(&path).unwrap(), params.lengths());
    // The file's size is still checked: truncated or padded, it is refused.
    let bytes = std::fs::read(&path).unwrap();
    for bad in [
        &bytes[..bytes.len() - 1],
        &[bytes.clone(), vec![0]].concat()[..],
    ] {
        assert!(VerifyingKey::from_params_bytes(bad).is_err());
    }
    // The shape check works on the lengths alone.
    let shape = crossgroth::synthesis::synthesize(spec("multi:3").instance(1))
        .unwrap()
        .shape();
    ParamsLengths::read_file(&path)
        .unwrap()
        .check_shape(&shape)
        .unwrap();
    let other = crossgroth::synthesis::synthesize(spec("cubic").instance(1))
        .unwrap()
        .shape();
    assert!(matches!(
        params.lengths().check_shape(&other),
        Err(Error::ParamsMismatch { .. })
    ));
}

#[test]
fn subgroup_checks_unless_the_digest_is_known() {
    let (params, _dir, path) = written("cubic");
    let (all, report) = Parameters::read_file_with(&path, SubgroupChecks::All).unwrap();
    assert_eq!(all, params);
    assert!(report.subgroup_s.is_some());
    let digest = report.digest.unwrap();
    {
        use sha2::Digest as _;
        let expected: [u8; 32] = sha2::Sha256::digest(std::fs::read(&path).unwrap()).into();
        assert_eq!(digest, expected);
    }
    let known = |d: &[u8; 32]| *d == digest;
    let (p, report) =
        Parameters::read_file_with(&path, SubgroupChecks::UnlessKnown(&known)).unwrap();
    assert_eq!(p, params);
    assert_eq!(report.subgroup_s, None, "known bytes are not checked again");
    let unknown = |_: &[u8; 32]| false;
    let (_, report) =
        Parameters::read_file_with(&path, SubgroupChecks::UnlessKnown(&unknown)).unwrap();
    assert!(report.subgroup_s.is_some());
    let (_, report) = Parameters::read_file_with(&path, SubgroupChecks::None).unwrap();
    assert_eq!((report.digest, report.subgroup_s), (None, None));
}

#[test]
fn directories_and_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let e = Parameters::read_file(dir.path(), true).unwrap_err();
    assert!(
        e.to_string().ends_with(": is a directory, not a file"),
        "{e}"
    );
    assert!(VerifyingKey::read_file(dir.path())
        .unwrap_err()
        .to_string()
        .contains("is a directory"));
    // A pipe is read whole instead of mapped.
    let params = params_for(&spec("cubic"), 2);
    let bytes = param_bytes(&params);
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path of this test's own directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
    };
    assert_eq!(Parameters::read_file(&fifo, true).unwrap(), params);
    writer.join().unwrap();
}

#[test]
fn errors_say_each_cause_once() {
    use std::error::Error as _;
    let e = VerifyingKey::read_file(std::path::Path::new("/nonexistent/vk")).unwrap_err();
    assert_eq!(e.to_string(), "/nonexistent/vk: No such file or directory");
    assert!(e.source().is_none(), "the cause is in the message only");
    // A key with trailing bytes: one prefix.
    let params = params_for(&spec("cubic"), 3);
    let mut vk = vec![];
    params.vk.write(&mut vk).unwrap();
    vk.extend_from_slice(&[0; 7]);
    let e = VerifyingKey::from_bytes(&vk).unwrap_err().to_string();
    assert!(
        e.starts_with("verifying key: 7 trailing bytes after the IC query"),
        "{e}"
    );
    assert!(!e.contains("parameter file"), "{e}");
    let e = VerifyingKey::from_bytes(&param_bytes(&params))
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("this is a whole parameter file, not a key alone"),
        "{e}"
    );
    let e = crossgroth::groth16::verify_proof(
        &crossgroth::groth16::prepare_verifying_key(&params.vk),
        &crossgroth::groth16::create_proof(
            spec("cubic").instance(1),
            &params,
            random_rs(1).0,
            random_rs(1).1,
        )
        .unwrap(),
        &[],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "public inputs: the verifying key is for a circuit with 1 public input, got 0"
    );
}

#[test]
fn a_written_file_replaces_the_old_one_whole() {
    let (_, dir, path) = written("cubic");
    let other = params_for(&spec("cubic"), 9);
    other.write_file(&path).unwrap();
    assert_eq!(Parameters::read_file(&path, true).unwrap(), other);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("p.params")]);
}

//! Parameter files checked against the digests Filecoin publishes (the
//! `parameters.json` that storage-proofs-core ships), as filecoin-proofs does
//! under FIL_PROOFS_VERIFY_PRODUCTION_PARAMS: Blake2b-512 of the whole file, its
//! first 32 hex digits. A corrupt or partial download is then named at its
//! first read instead of showing as every proof failing verification. A file is
//! hashed once and remembered by its size and modification time.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use storage_proofs_core::parameter_cache::PARAMETERS;

use crate::error::{FilecoinError, Result};

/// Files whose digest matched, by path: the size and modification time they
/// had then.
#[derive(Default)]
pub struct DigestCheck {
    /// Expected digests by file name; None: Filecoin's parameters.json.
    expected: Option<HashMap<String, String>>,
    verified: Mutex<HashMap<PathBuf, (u64, SystemTime)>>,
}

impl DigestCheck {
    /// Checks against `expected` (file name → digest) instead of Filecoin's
    /// table: for a network with its own parameters, and for tests.
    pub fn against(expected: HashMap<String, String>) -> Self {
        DigestCheck {
            expected: Some(expected),
            ..Default::default()
        }
    }

    /// Checks `path` against Filecoin's published digest of its file name,
    /// hashing it unless it was verified unchanged before.
    pub fn check(&self, path: &Path) -> Result<()> {
        let err = |reason: String| FilecoinError::Params {
            path: path.to_path_buf(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| FilecoinError::io(path, e))?;
        let stamp = (
            meta.len(),
            meta.modified().map_err(|e| FilecoinError::io(path, e))?,
        );
        if self.verified.lock().unwrap().get(path) == Some(&stamp) {
            return Ok(());
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let expected = match &self.expected {
            Some(table) => table.get(name).cloned(),
            None => PARAMETERS.get(name).map(|d| d.digest.clone()),
        }
        .ok_or_else(|| {
            err(
                "not one of the parameter files Filecoin publishes (storage-proofs-core's \
                 parameters.json): its digest cannot be checked"
                    .into(),
            )
        })?;
        let t = Instant::now();
        let digest = file_digest(path).map_err(|e| FilecoinError::io(path, e))?;
        if digest != expected {
            return Err(err(format!(
                "Blake2b digest {digest}, but Filecoin's parameters.json expects {expected}: \
                 the file is corrupt or incomplete; fetch it again"
            )));
        }
        log::info!(
            "{}: digest {digest} matches Filecoin's parameters.json ({:.1} s)",
            path.display(),
            t.elapsed().as_secs_f64()
        );
        self.verified
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), stamp);
        Ok(())
    }
}

/// filecoin-proofs' digest of a parameter file: Blake2b-512, first 32 hex digits.
pub fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut state = blake2b_simd::Params::new().to_state();
    let mut buf = vec![0u8; 8 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        state.update(&buf[..n]);
    }
    Ok(state.finalize().to_hex()[..32].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_a_file_is_blake2b_512_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"abc").unwrap();
        // Blake2b-512("abc"), RFC 7693 appendix A.
        assert_eq!(
            file_digest(&path).unwrap(),
            "ba80a53f981c4d0d6a2797b69f12f6e9"
        );
    }

    #[test]
    fn one_flipped_byte_is_refused_naming_the_file_and_both_digests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v28-some-circuit.params");
        let mut bytes: Vec<u8> = (0..3 << 20).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let good = file_digest(&path).unwrap();
        let table = HashMap::from([("v28-some-circuit.params".to_string(), good.clone())]);
        let check = DigestCheck::against(table);
        check.check(&path).unwrap();
        bytes[2 << 20] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        // Same size; the new modification time makes it hashed again.
        let e = check.check(&path).unwrap_err().to_string();
        assert!(e.contains("v28-some-circuit.params"), "{e}");
        assert!(e.contains(&good) && e.contains("corrupt"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }

    #[test]
    fn a_file_filecoin_does_not_publish_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v28-not-a-filecoin-file.params");
        std::fs::write(&path, b"x").unwrap();
        let e = DigestCheck::default().check(&path).unwrap_err().to_string();
        assert!(
            e.contains("v28-not-a-filecoin-file.params") && e.contains("publishes"),
            "{e}"
        );
    }
}

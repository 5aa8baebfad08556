//! Reading parameter files for a command: progress while it reads, the time it
//! took, and a record of the files whose points passed the subgroup checks, so
//! that the next read of the same bytes skips them.
//!
//! The record is one line per file, `<sha256 hex> <size>`, in
//! `$CROSSGROTH_CACHE_DIR/checked-params` (default `$XDG_CACHE_HOME/crossgroth`, or
//! `~/.cache/crossgroth`). A file is trusted by its SHA-256 digest, which is
//! computed on every read (beside the decoding: a fraction of a second for 100 MB),
//! so a changed file is checked again whatever its size and modification time say.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use crossgroth::groth16::{Digest, Parameters, ParamsLengths, SubgroupChecks, VerifyingKey};
use crossgroth::Error;

use super::progress::Stage;

/// The CLI's cache directory: `$CROSSGROTH_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/crossgroth`, else `~/.cache/crossgroth` (None without a
/// home); it holds `checked-params` and the wgpu backend's `wgpu-pipelines`.
pub(super) fn cache_dir() -> Option<PathBuf> {
    Some(match std::env::var_os("CROSSGROTH_CACHE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => match std::env::var_os("XDG_CACHE_HOME") {
            Some(d) if !d.is_empty() => PathBuf::from(d).join("crossgroth"),
            _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache/crossgroth"),
        },
    })
}

fn cache_file() -> Option<PathBuf> {
    Some(cache_dir()?.join("checked-params"))
}

fn is_known(digest: &Digest, size: usize) -> bool {
    let Some(path) = cache_file() else {
        return false;
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let want = format!("{} {size}", hex::encode(digest));
    text.lines().any(|l| l.trim() == want)
}

fn remember(digest: &Digest, size: usize) {
    let Some(path) = cache_file() else { return };
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        // One write of one line: appends from concurrent runs do not interleave.
        f.write_all(format!("{} {size}\n", hex::encode(digest)).as_bytes())
    };
    if let Err(e) = write() {
        log::warn!(
            "could not record checked parameters in {}: {e}",
            path.display()
        );
    }
}

/// How a command's parameters were read.
pub struct Loaded {
    pub seconds: f64,
    /// "subgroup checks 12.1 s", "subgroup checks skipped: checked before", …
    pub checks: String,
}

impl Loaded {
    /// For a command's timing line: "reading the parameters 0.6 s, subgroup checks
    /// skipped: this file passed them before".
    pub fn summary(&self) -> String {
        format!(
            "reading the parameters {:.1} s, {}",
            self.seconds, self.checks
        )
    }
}

/// Reads a parameter file, with every point's subgroup checked unless `trust` or
/// the record says these bytes passed before.
pub fn load(path: &Path, trust: bool) -> Result<(Parameters, Loaded)> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let stage = Stage::start(&format!(
        "reading {} ({})",
        path.display(),
        super::memory::size(size)
    ));
    let known = |d: &Digest| is_known(d, size as usize);
    let checks = if trust {
        SubgroupChecks::None
    } else {
        SubgroupChecks::UnlessKnown(&known)
    };
    let (params, report) =
        Parameters::read_file_with(path, checks).map_err(|e| in_file(path, e))?;
    let seconds = stage.finish();
    let checks = match (trust, report.subgroup_s) {
        (true, _) => "subgroup checks skipped (--trust-params)".to_string(),
        (false, Some(s)) => {
            if let Some(d) = &report.digest {
                remember(d, report.bytes);
            }
            format!("subgroup checks {s:.1} s")
        }
        (false, None) => "subgroup checks skipped: these bytes passed them before".to_string(),
    };
    Ok((params, Loaded { seconds, checks }))
}

/// The verifying key of a parameter file, without reading the rest.
pub fn load_vk(path: &Path) -> Result<VerifyingKey> {
    VerifyingKey::read_params_file(path).map_err(|e| in_file(path, e))
}

/// A verifying key file.
pub fn load_vk_file(path: &Path) -> Result<VerifyingKey> {
    VerifyingKey::read_file(path).map_err(|e| in_file(path, e))
}

/// The vectors' lengths of a parameter file (milliseconds: for the shape check
/// before the long read).
pub fn lengths(path: &Path) -> Result<ParamsLengths> {
    ParamsLengths::read_file(path).map_err(|e| in_file(path, e))
}

/// An error about the file `path`, which it names once (an i/o error names it
/// already).
pub fn in_file(path: &Path, e: Error) -> anyhow::Error {
    match e {
        Error::Io { .. } => e.into(),
        e => anyhow::Error::from(e).context(path.display().to_string()),
    }
}

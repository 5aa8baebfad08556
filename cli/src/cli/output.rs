//! Files the command line writes (parameters, verifying keys, proofs, public-input
//! files, summaries, plots). Each is written to a temporary file beside its
//! destination, `.<name>.tmp-XXXXXX`, flushed to disk (fsync), and renamed into
//! place once complete: an interrupted or failed run leaves the old file as it was.
//! SIGINT, SIGTERM and SIGHUP remove the temporary file before the process ends
//! (see `signals`); only SIGKILL or a crash of the machine can leave one behind.
//!
//! Every destination is checked with [`Output::check`] before the long work starts.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use anyhow::{anyhow, bail, Result};
use crossgroth::error::os_message as os;

/// Temporary files being written now, with the destinations they are for; the
/// signal handler removes them.
static PENDING: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

fn pending() -> MutexGuard<'static, Vec<(PathBuf, PathBuf)>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// A destination that was found writable.
#[derive(Clone, Debug)]
pub struct Output {
    /// What the user named (for messages).
    shown: PathBuf,
    /// Where the file goes: `shown`, or the file a symbolic link there points to
    /// (the link stays a link).
    target: PathBuf,
    dir: PathBuf,
    name: OsString,
    /// Written in place: the destination is a device or a pipe (`/dev/stdout`).
    in_place: bool,
}

impl Output {
    /// Checks, before any long work, that `path` can be written: it names a file,
    /// not a directory; its directory exists; a file can be created there.
    /// `what` names the option in messages (`--proof`).
    pub fn check(path: &Path, what: &str) -> Result<Output> {
        let shown = path.to_path_buf();
        if path.as_os_str().is_empty() {
            bail!("{what}: the path is empty");
        }
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
                Ok(t) => t,
                Err(_) => {
                    let link = std::fs::read_link(path)
                        .map_err(|e| anyhow!("{what} {}: {}", path.display(), os(&e)))?;
                    path.parent().map_or(link.clone(), |p| p.join(&link))
                }
            },
            _ => path.to_path_buf(),
        };
        let mut in_place = false;
        match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => bail!("{what} {} is a directory, not a file", path.display()),
            Ok(m) if !m.is_file() => in_place = true,
            _ => {}
        }
        let name = match target.file_name() {
            Some(n) if !path.to_string_lossy().ends_with('/') => n.to_owned(),
            _ => bail!("{what} {} names a directory, not a file", path.display()),
        };
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let out = Output {
            shown,
            target,
            dir,
            name,
            in_place,
        };
        if in_place {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&out.target)
                .map_err(|e| anyhow!("{what} {}: cannot write it: {}", path.display(), os(&e)))?;
            return Ok(out);
        }
        match std::fs::metadata(&out.dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!(
                "{what} {}: {} is not a directory",
                path.display(),
                out.dir.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
                "{what} {}: the directory {} does not exist",
                path.display(),
                out.dir.display()
            ),
            Err(e) => bail!(
                "{what} {}: the directory {}: {}",
                path.display(),
                out.dir.display(),
                os(&e)
            ),
        }
        // The one sure test of writability: create a file there (removed at once).
        out.temp().map_err(|e| {
            anyhow!(
                "{what} {}: cannot create a file in {}: {}",
                path.display(),
                out.dir.display(),
                os(&e)
            )
        })?;
        Ok(out)
    }

    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// The file this output replaces, for comparisons with the inputs.
    fn key(&self) -> PathBuf {
        file_key(&self.target)
    }

    fn temp(&self) -> std::io::Result<tempfile::NamedTempFile> {
        use std::os::unix::ffi::OsStrExt;
        // Within NAME_MAX whatever the destination's name.
        let bytes = self.name.as_bytes();
        let mut prefix = OsString::from(".");
        prefix.push(std::ffi::OsStr::from_bytes(&bytes[..bytes.len().min(200)]));
        prefix.push(".tmp-");
        tempfile::Builder::new()
            .prefix(&prefix)
            .rand_bytes(6)
            // As `File::create` would make it: 0666 less the umask.
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .tempfile_in(&self.dir)
    }

    fn fail(&self, e: &std::io::Error) -> anyhow::Error {
        anyhow!("cannot write {}: {}", self.shown.display(), os(e))
    }

    /// Writes the whole file to a temporary file beside the destination, flushed
    /// to disk; [`commit`] renames it into place.
    pub fn stage(&self, f: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<Staged> {
        if self.in_place {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&self.target)
                .map_err(|e| self.fail(&e))?;
            let mut w = BufWriter::new(file);
            f(&mut w)?;
            w.flush().map_err(|e| self.fail(&e))?;
            return Ok(Staged {
                out: self.clone(),
                tmp: None,
            });
        }
        // Created under the lock, so that a signal's cleanup, which takes it too,
        // never sees the file before it is listed.
        let mut listed = pending();
        let tmp = self.temp().map_err(|e| self.fail(&e))?;
        listed.push((tmp.path().to_path_buf(), self.shown.clone()));
        drop(listed);
        let staged = Staged {
            out: self.clone(),
            tmp: Some(tmp),
        };
        let file = staged.tmp.as_ref().unwrap().as_file();
        if super::fault::slow_writes() {
            let mut w = BufWriter::with_capacity(4096, super::fault::Slow(file));
            f(&mut w)?;
            w.flush().map_err(|e| self.fail(&e))?;
        } else {
            let mut w = BufWriter::with_capacity(1 << 20, file);
            f(&mut w)?;
            w.flush().map_err(|e| self.fail(&e))?;
        }
        // Keep the permissions of the file being replaced.
        if let Ok(m) = std::fs::metadata(&self.target) {
            let _ = file.set_permissions(m.permissions());
        }
        file.sync_all().map_err(|e| self.fail(&e))?;
        Ok(staged)
    }

    /// Writes `bytes` as the whole file, atomically.
    pub fn write_bytes(&self, bytes: &[u8]) -> Result<()> {
        commit(vec![self.stage(|w| Ok(w.write_all(bytes)?))?])
    }
}

/// A complete temporary file waiting to be renamed into place. Dropped without
/// [`commit`], it is removed.
pub struct Staged {
    out: Output,
    tmp: Option<tempfile::NamedTempFile>,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(t) = &self.tmp {
            let p = t.path();
            pending().retain(|q| q.0 != p);
        }
    }
}

/// Renames staged files into place, all under the lock the signal handler takes:
/// an interrupt lands before all of them or after all of them.
pub fn commit(staged: Vec<Staged>) -> Result<()> {
    let mut dirs = vec![];
    {
        let mut pending = pending();
        for mut s in staged {
            let Some(tmp) = s.tmp.take() else { continue };
            let p = tmp.path().to_path_buf();
            pending.retain(|q| q.0 != p);
            tmp.persist(&s.out.target)
                .map_err(|e| s.out.fail(&e.error))?;
            dirs.push(s.out.dir.clone());
        }
    }
    // Make the renames durable.
    for d in dirs {
        if let Ok(d) = File::open(d) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// A path's identity for comparisons: its directory canonicalized, then its name.
fn file_key(p: &Path) -> PathBuf {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), p.file_name()) {
        (Ok(d), Some(n)) => d.join(n),
        _ => p.to_path_buf(),
    }
}

/// Refuses two outputs naming one file, or an output that would replace an input.
pub fn check_distinct(outputs: &[(&str, &Output)], inputs: &[(&str, &Path)]) -> Result<()> {
    for (i, (a, oa)) in outputs.iter().enumerate() {
        for (b, ob) in &outputs[i + 1..] {
            if oa.key() == ob.key() {
                bail!("{a} and {b} name the same file, {}", oa.shown.display());
            }
        }
        for (b, p) in inputs {
            let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            if oa.key() == file_key(&p) {
                bail!(
                    "{a} {} would overwrite the {b} file that this command reads",
                    oa.shown.display()
                );
            }
        }
    }
    Ok(())
}

/// Removes the temporary files being written (for the signal handler) and names
/// the destinations they were for, with the lock held so that no rename follows.
pub fn remove_pending() -> (Vec<PathBuf>, MutexGuard<'static, Vec<(PathBuf, PathBuf)>>) {
    let guard = pending();
    let removed = guard
        .iter()
        .filter(|(tmp, _)| std::fs::remove_file(tmp).is_ok())
        .map(|(_, dest)| dest.clone())
        .collect();
    (removed, guard)
}

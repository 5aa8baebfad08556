//! The compiled pipelines kept on disk between processes
//! (`Options::pipeline_cache_dir`): a `wgpu::PipelineCache` filled from one
//! file per adapter and driver, and written back whenever new pipelines were
//! built. The cache only saves time: an unreadable, corrupt or foreign file
//! is a warning, and the pipelines are compiled as without it.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::gpu::catch;

/// Files larger than this are not read: a cache of the backend's few dozen
/// pipelines is far smaller, so a larger file is not one the backend wrote.
pub(crate) const MAX_FILE_BYTES: u64 = 256 << 20;

pub(crate) struct DiskCache {
    pub cache: wgpu::PipelineCache,
    pub path: PathBuf,
    /// Set when a pipeline was built with the cache since the last save.
    dirty: AtomicBool,
    /// A hash of the bytes the file holds (read or written), so that a cache
    /// that gained nothing is not written again.
    saved: AtomicU64,
    /// Saves of one backend do not race each other.
    writing: Mutex<()>,
    /// Set after a failed write (warned once): later saves would fail alike.
    failed: AtomicBool,
}

fn fingerprint(data: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

/// The file for this adapter and driver under `dir`, or None where wgpu
/// keeps no pipeline cache for its backend.
pub(crate) fn file_for(dir: &Path, info: &wgpu::AdapterInfo) -> Option<PathBuf> {
    wgpu::util::pipeline_cache_key(info).map(|key| dir.join(key))
}

/// The file's bytes, or None (with a warning unless there is no file yet).
fn read(path: &Path) -> Option<Vec<u8>> {
    let warn = |why: String| {
        log::warn!(
            "wgpu pipeline cache {}: {why}; compiling the pipelines without it",
            path.display()
        );
        None
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return warn(e.to_string()),
    };
    if !meta.is_file() {
        return warn("not a regular file, so neither read nor written".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return warn(format!(
            "{} bytes, over the {MAX_FILE_BYTES} bytes read at most",
            meta.len()
        ));
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    // Bounded again in case the file grows while it is read.
    let r =
        std::fs::File::open(path).and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut data));
    match r {
        Err(e) => warn(e.to_string()),
        Ok(_) if data.len() as u64 > MAX_FILE_BYTES => {
            warn(format!("over the {MAX_FILE_BYTES} bytes read at most"))
        }
        Ok(_) => Some(data),
    }
}

/// A pipeline cache on `data`, or None where wgpu refused it (its errors are
/// caught in error scopes, so that they never reach the device's error
/// handler and fail the backend).
fn create(device: &wgpu::Device, data: Option<&[u8]>) -> Option<wgpu::PipelineCache> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let cache = catch("create_pipeline_cache", || {
        // SAFETY: wgpu asks for data that an earlier get_data returned. The
        // file is only ever written from get_data, and wgpu checks the header
        // it put in front (format, pointer size, backend, adapter, driver
        // validation key, length) before the driver, which checks its own
        // header too, sees the rest; a file altered by someone who can write
        // the cache directory is outside what this guards against.
        unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("crossgroth"),
                data,
                fallback: true,
            })
        }
    });
    let errors = [internal, validation, oom].map(|s| pollster::block_on(s.pop()));
    match (cache, errors.iter().flatten().next()) {
        (Ok(c), None) => Some(c),
        (Ok(_), Some(e)) => {
            log::warn!("wgpu pipeline cache refused: {e}");
            None
        }
        (Err(e), _) => {
            log::warn!("wgpu pipeline cache: {e}");
            None
        }
    }
}

/// The cache for `path`: the file's pipelines where wgpu accepts them, else
/// an empty cache that the next save fills; None where not even an empty
/// cache could be made.
pub(crate) fn open(device: &wgpu::Device, path: PathBuf) -> Option<DiskCache> {
    let data = read(&path);
    // Something else at the file's path: warned by `read`, and writes would fail.
    let failed = std::fs::metadata(&path).is_ok_and(|m| !m.is_file());
    let mut saved = 0;
    let cache = match data.as_deref() {
        Some(d) => match create(device, Some(d)) {
            Some(c) => {
                saved = fingerprint(d);
                log::debug!(
                    "wgpu pipeline cache: {} bytes from {}",
                    d.len(),
                    path.display()
                );
                Some(c)
            }
            None => {
                log::warn!(
                    "wgpu pipeline cache {}: not usable here; compiling the pipelines \
                     without it and replacing it",
                    path.display()
                );
                create(device, None)
            }
        },
        None => create(device, None),
    }?;
    Some(DiskCache {
        cache,
        path,
        dirty: AtomicBool::new(false),
        saved: AtomicU64::new(saved),
        writing: Mutex::new(()),
        failed: AtomicBool::new(failed),
    })
}

impl DiskCache {
    /// Records that a pipeline was built with the cache.
    pub fn touched(&self) {
        self.dirty.store(true, Ordering::Release);
    }

    /// Writes the cache's data to the file if pipelines were built since the
    /// last save and the data changed; a failure is a warning.
    pub fn save(&self) {
        if !self.dirty.swap(false, Ordering::AcqRel) || self.failed.load(Ordering::Acquire) {
            return;
        }
        let Ok(_w) = self.writing.lock() else { return };
        let data = match catch("pipeline cache get_data", || self.cache.get_data()) {
            Ok(Some(d)) if !d.is_empty() => d,
            _ => return,
        };
        let fp = fingerprint(&data);
        if fp == self.saved.load(Ordering::Acquire) {
            return;
        }
        match write_atomic(&self.path, &data) {
            Ok(()) => {
                self.saved.store(fp, Ordering::Release);
                log::debug!(
                    "wgpu pipeline cache: {} bytes to {}",
                    data.len(),
                    self.path.display()
                );
            }
            Err(e) => {
                self.failed.store(true, Ordering::Release);
                log::warn!(
                    "wgpu pipeline cache: could not write {}: {e}; not trying again",
                    self.path.display()
                )
            }
        }
    }
}

/// Writes `data` to a temporary file beside `path`, syncs it and renames it
/// over `path`, so that a reader sees the old file or the new one, whole,
/// whichever processes save at once.
fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other("no directory or file name"));
    };
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let r = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

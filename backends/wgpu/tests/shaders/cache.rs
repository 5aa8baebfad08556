//! The pipeline cache on disk (`Options::pipeline_cache_dir`): written after
//! the first use where the adapter has PIPELINE_CACHE, read by the next
//! backend, and never a failure: a corrupt, truncated, foreign or empty file,
//! a directory where the file should be, or a file where the directory
//! should be all give the same results, compiled without the cache.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use blst::blst_fr;
use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::{Options, WgpuDevice, WgpuError};

use crate::devices::{options, require, settings};

/// A directory of its own under the system's temporary directory, removed
/// when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "crossgroth-wgpu-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh backend (no pipelines built yet) with its cache in `dir`, or None
/// without an adapter (a failure under CROSSGROTH_REQUIRE_WGPU=1).
fn open(dir: &Path) -> Option<WgpuDevice> {
    match WgpuDevice::with_options(Options {
        pipeline_cache_dir: Some(dir.to_path_buf()),
        ..options()
    }) {
        Ok(b) => Some(b),
        Err(WgpuError::Unavailable(e)) if !require() => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: pipeline_cache_on_disk: {e} \
                 (set CROSSGROTH_REQUIRE_WGPU=1 to make this a failure) ***\n"
            );
            None
        }
        Err(e) => panic!(
            "a backend with the pipeline cache in {}: {e}",
            dir.display()
        ),
    }
}

/// The NTT of the test, input and expected output.
fn case() -> (Vec<blst_fr>, Vec<blst_fr>) {
    let x = random_scalars(&mut rng("pipeline_cache_on_disk"), 1 << 6);
    let mut want = x.clone();
    ntt(&mut want, 6, false);
    (x, want)
}

/// The first NTT of a fresh backend with its cache in `dir`, checked; its
/// wall-clock time (pipelines built on first use included) and the time the
/// backend spent building pipelines.
fn first_ntt(dir: &Path, what: &str) -> (Duration, Duration, Option<PathBuf>) {
    let b = open(dir).expect("the adapter was there a moment ago");
    let (x, want) = case();
    let mut got = x.clone();
    let t = Instant::now();
    b.ntt(&mut got, 6, false)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let t = t.elapsed();
    assert!(
        fr_slices_eq(&got, &want),
        "{what}: the NTT differs from blst"
    );
    let file = b.pipeline_cache_file().map(Path::to_path_buf);
    eprintln!(
        "{what}: first NTT {t:.2?} (pipelines {:.2?}), cache file {file:?}",
        b.compile_time()
    );
    (t, b.compile_time(), file)
}

/// Whether the adapter under test offers wgpu's pipeline cache.
fn adapter_has_pipeline_cache() -> bool {
    crate::common::preferred_adapter(settings().adapter.as_deref()).is_some_and(|a| {
        a.features().contains(wgpu::Features::PIPELINE_CACHE)
            && wgpu::util::pipeline_cache_key(&a.get_info()).is_some()
    })
}

#[test]
fn pipeline_cache_on_disk() {
    settings();
    let tmp = TempDir::new("pipeline-cache");
    // Not there yet: the backend makes it.
    let dir = tmp.0.join("wgpu-pipelines");
    if open(&dir).is_none() {
        return;
    }
    let has = adapter_has_pipeline_cache();

    let (cold, cold_compile, file) = first_ntt(&dir, "cold");
    assert_eq!(
        file.is_some(),
        has,
        "a cache file exactly where the adapter has PIPELINE_CACHE"
    );
    let Some(file) = file else {
        let written: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(
            written.is_empty(),
            "written without the feature: {written:?}"
        );
        eprintln!("case: the adapter has no PIPELINE_CACHE: nothing written, results correct");
        return;
    };
    let good = std::fs::read(&file).expect("the cache file was written");
    assert!(!good.is_empty());
    eprintln!(
        "case: the adapter has PIPELINE_CACHE: {} bytes in {}",
        good.len(),
        file.display()
    );

    let (warm, warm_compile, again) = first_ntt(&dir, "warm");
    assert_eq!(again.as_deref(), Some(file.as_path()));
    eprintln!(
        "first NTT of a fresh backend: {cold:.2?} cold (pipelines {cold_compile:.2?}), \
         {warm:.2?} with the cache file (pipelines {warm_compile:.2?})"
    );

    // Files wgpu refuses: the pipelines are compiled again and the file is
    // replaced by a good one.
    let mut foreign = good.clone();
    // a byte of the adapter key in wgpu's header (after the magic, the
    // header version, the pointer size and the backend)
    if foreign.len() > 20 {
        foreign[20] ^= 0x5a;
    }
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    for (what, bytes) in [
        ("foreign adapter key", foreign),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("garbage", garbage),
        ("empty", Vec::new()),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        first_ntt(&dir, what);
        let now = std::fs::read(&file).unwrap();
        assert_ne!(now, bytes, "{what}: the file was not replaced");
        assert!(!now.is_empty());
    }

    // A directory where the file should be: read and write fail, warned.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir_all(file.join("x")).unwrap();
    first_ntt(&dir, "a directory at the file's path");
    assert!(file.is_dir());

    // A file where the directory should be.
    let not_dir = tmp.0.join("a-file");
    std::fs::write(&not_dir, b"not a directory").unwrap();
    first_ntt(&not_dir, "a file at the directory's path");
    assert_eq!(std::fs::read(&not_dir).unwrap(), b"not a directory");
}

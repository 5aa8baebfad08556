//! The devices of the wgpu shader tests (tests/shaders/): the settings of
//! the environment, the backends under test on each field path, built once,
//! skipped or failed by CROSSGROTH_REQUIRE_WGPU.

use std::sync::OnceLock;
use std::time::Instant;

use crossgroth_wgpu::{AdapterChoice, Options, WgpuDevice, WgpuError};

/// The developer settings of this target, from the environment (the only
/// place it reads them; scripts/device/run.sh sets them, and
/// backends/wgpu/README.md lists them).
pub struct Settings {
    /// CROSSGROTH_REQUIRE_WGPU=1: no adapter is a failure, not a skip.
    pub require: bool,
    /// CROSSGROTH_WGPU_TEST_LOG (default 12): the largest test size, log2.
    pub test_log: u32,
    /// CROSSGROTH_WGPU_BENCH_LOG (default 20): `large_sizes_timed`'s size.
    pub bench_log: u32,
    /// CROSSGROTH_WGPU_TEST_PATHS: both (default) | int64 | portable.
    pub paths: String,
    /// CROSSGROTH_WGPU_ADAPTER: the adapter by name, as `Options::adapter`.
    pub adapter: Option<String>,
}

/// The settings, read once, after `crate::common::skip_llvm_optimiser` (so that
/// every test that reads them runs it before its first wgpu call).
pub fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        crate::common::skip_llvm_optimiser();
        Settings {
            require: crate::common::var("CROSSGROTH_REQUIRE_WGPU").as_deref() == Some("1"),
            test_log: crate::common::parsed("CROSSGROTH_WGPU_TEST_LOG", 12),
            bench_log: crate::common::parsed("CROSSGROTH_WGPU_BENCH_LOG", 20),
            paths: crate::common::var("CROSSGROTH_WGPU_TEST_PATHS").unwrap_or_default(),
            adapter: crate::common::var("CROSSGROTH_WGPU_ADAPTER"),
        }
    })
}

pub fn require() -> bool {
    settings().require
}

pub fn max_log() -> u32 {
    settings().test_log
}

/// The default options on the adapter the settings name.
pub fn options() -> Options {
    Options {
        adapter: settings().adapter.clone().map(AdapterChoice::Name),
        ..Options::default()
    }
}

/// Ok(None): no adapter (skipped, unless CROSSGROTH_REQUIRE_WGPU=1);
/// Err: the adapter is there but the backend or its pipelines failed.
pub fn make(opts: Options) -> Result<Option<WgpuDevice>, String> {
    settings(); // GALLIVM_PERF before the first wgpu call
    let allow_int64 = opts.allow_int64;
    match WgpuDevice::with_options(opts) {
        Ok(b) => {
            let t = Instant::now();
            if let Err(e) = b.warm_up() {
                return Err(format!(
                    "warm_up failed on {} (allow_int64 = {}): {e}",
                    b.info(),
                    allow_int64
                ));
            }
            eprintln!(
                "wgpu backend: {} (allow_int64 = {}); pipelines built in {:.2?}",
                b.info(),
                allow_int64,
                t.elapsed()
            );
            Ok(Some(b))
        }
        Err(WgpuError::Unavailable(e)) => {
            if require() {
                return Err(format!(
                    "CROSSGROTH_REQUIRE_WGPU=1 but wgpu is unavailable: {e}"
                ));
            }
            // Straight to the stderr handle: the harness captures eprintln!
            // of passing tests, and a skip must be seen.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: crossgroth-wgpu shader tests did not run: {e} \
                 (set CROSSGROTH_REQUIRE_WGPU=1 to make this a failure) ***\n"
            );
            Ok(None)
        }
        Err(e) => Err(format!(
            "backend creation failed (allow_int64 = {}): {e}",
            allow_int64
        )),
    }
}

/// Which paths to test: CROSSGROTH_WGPU_TEST_PATHS = both (default) | int64 | portable.
pub fn wanted(int64: bool) -> bool {
    match settings().paths.as_str() {
        "int64" => int64,
        "portable" => !int64,
        _ => true,
    }
}

pub struct Backends {
    pub ok: Vec<WgpuDevice>,
    /// Where SHADER_INT64 is in use: a backend that also builds G2 on it
    /// (`Options::g2_int64`; the default builds G2 on the portable code).
    pub g2_int64: Option<WgpuDevice>,
    pub errors: Vec<String>,
}

/// The backends under test, shared by the tests: the default one
/// (SHADER_INT64 field code where the adapter has it) and, where that one
/// uses SHADER_INT64, a second one forced onto the portable u32 code. A
/// backend that fails to build is reported by `backends_build` and skipped
/// by the other tests, so one path's failure does not hide the other's results.
pub fn all_backends() -> &'static Backends {
    static B: OnceLock<Backends> = OnceLock::new();
    B.get_or_init(|| {
        let mut bs = Backends {
            ok: Vec::new(),
            g2_int64: None,
            errors: Vec::new(),
        };
        let try_make = |opts: Options, bs: &mut Backends| match make(opts) {
            Ok(Some(b)) => bs.ok.push(b),
            Ok(None) => {}
            Err(e) => {
                eprintln!("*** {e}");
                bs.errors.push(e)
            }
        };
        try_make(options(), &mut bs);
        let int64 = bs.ok.first().map(|b| b.uses_int64()).unwrap_or(false);
        if int64 {
            try_make(
                Options {
                    allow_int64: false,
                    ..options()
                },
                &mut bs,
            );
            try_make(
                Options {
                    g2_int64: true,
                    ..options()
                },
                &mut bs,
            );
            // the last one built is the G2-on-int64 backend
            if bs.ok.last().is_some_and(|b| b.uses_int64_for_g2()) {
                bs.g2_int64 = bs.ok.pop();
            }
        } else if !bs.ok.is_empty() {
            eprintln!("(the adapter has no SHADER_INT64: only the portable path is tested)");
        }
        bs.ok.retain(|b| wanted(b.uses_int64()));
        if !wanted(true) {
            bs.g2_int64 = None;
        }
        bs
    })
}

pub fn backends() -> &'static [WgpuDevice] {
    &all_backends().ok
}

/// Runs `check` on every backend under test, announced with the test's name
/// and the field path.
pub fn on_each_backend(test: &str, check: impl Fn(&WgpuDevice)) {
    for b in backends() {
        eprintln!("--- {test} on the {} path", path(b));
        check(b);
    }
}

pub fn path(b: &WgpuDevice) -> &'static str {
    if b.uses_int64() {
        "int64"
    } else {
        "portable"
    }
}

/// The largest size of the timed test, log2.
pub fn bench_log() -> u32 {
    settings().bench_log
}

//! The `crossgroth` command line. Every error ends the process with one line on
//! stderr and a non-zero exit status.

mod cli;

/// Vulkan drivers on headless machines complain on stderr when XDG_RUNTIME_DIR is
/// unset; give them a private one so that errors stay one line.
fn quiet_headless_vulkan() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        use std::os::unix::fs::DirBuilderExt;
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let dir = std::env::temp_dir().join(format!("crossgroth-runtime-{uid}"));
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        if dir.is_dir() {
            // Before any thread starts.
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
}

fn main() {
    quiet_headless_vulkan();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    // Circuit panics are caught and reported as errors; keep the default hook from
    // printing a second, noisier report of them.
    std::panic::set_hook(Box::new(|info| log::debug!("panic: {info}")));
    if let Err(e) = cli::run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

//! The `crossgroth` command line. Every error ends the process with one line on
//! stderr and a non-zero exit status.

mod cli;

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    // Circuit panics are caught and reported as errors; keep the default hook from
    // printing a second, noisier report of them.
    std::panic::set_hook(Box::new(|info| log::debug!("panic: {info}")));
    if let Err(e) = cli::run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

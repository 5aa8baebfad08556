//! SIGINT, SIGTERM and SIGHUP: remove the temporary file being written (so that
//! the old file stays as it was and nothing partial is left), say so in one line,
//! and end as the signal would have.

use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// Set by `serve`, which stops on its own terms (a graceful shutdown) instead.
static LEFT_TO_COMMAND: AtomicBool = AtomicBool::new(false);

/// Leaves SIGINT and SIGTERM to the command, which handles them itself (SIGHUP is then ignored).
pub fn leave_to_command() {
    LEFT_TO_COMMAND.store(true, Ordering::Release);
}

pub fn install() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if LEFT_TO_COMMAND.load(Ordering::Acquire) {
                    continue;
                }
                // Held until the process ends: no rename happens after this.
                let (removed, _pending) = super::output::remove_pending();
                let name = match sig {
                    SIGINT => "SIGINT",
                    SIGTERM => "SIGTERM",
                    _ => "SIGHUP",
                };
                let left: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
                eprintln!(
                    "error: interrupted by {name}{}",
                    if left.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; {} left as {} (the partial new {} removed)",
                            left.join(" and "),
                            if left.len() == 1 {
                                "it was"
                            } else {
                                "they were"
                            },
                            if left.len() == 1 { "copy" } else { "copies" }
                        )
                    }
                );
                std::process::exit(128 + sig);
            }
        });
}

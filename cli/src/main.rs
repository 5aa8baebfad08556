//! The `crossgroth` command line. Every error ends the process with one line on
//! stderr and a non-zero exit status: 1 for an error, 2 for a command line that
//! does not parse, 101 for a bug (a panic), 128 + N for signal N.

mod cli;

use std::sync::Mutex;

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

/// Longest quoted value an error line repeats, in characters.
const QUOTE_MAX: usize = 40;
/// Longest error line, in characters.
const LINE_MAX: usize = 600;

/// `text` cut to `max` characters, saying how much was left out.
pub fn abbreviate(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}… ({n} characters)")
}

/// One line, whatever a message holds: newlines become "; ", every quoted value
/// ("…" or '…', as serde and clap quote the offending input) is cut to a few
/// dozen characters, and the whole line to a few hundred.
pub fn bound_line(line: &str) -> String {
    let line = line.trim_end().replace('\n', "; ");
    let mut out = String::with_capacity(line.len().min(LINE_MAX + 64));
    let mut rest = line.as_str();
    loop {
        // An opening quote: '"', or an apostrophe that does not follow a letter
        // (the one in "key's" opens nothing).
        let open = rest.char_indices().find(|&(i, c)| {
            c == '"'
                || (c == '\''
                    && !rest[..i]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric))
        });
        let Some((open, q)) = open else { break };
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(q) {
            Some(close) => {
                out.push_str(&abbreviate(&after[..close], QUOTE_MAX));
                out.push(q);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&abbreviate(after, QUOTE_MAX));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    abbreviate(&out, LINE_MAX)
}

/// Where and why the last panic happened, for the one line that reports it.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

fn main() {
    quiet_headless_vulkan();
    // Circuit panics are caught and reported as errors, so the hook prints nothing
    // itself; a panic that reaches main is reported below, in one line.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        log::debug!("panic: {info}");
        *PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{msg}{at}"));
    }));
    cli::install_signal_handlers();
    match std::panic::catch_unwind(cli::run) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            eprintln!("{}", bound_line(&format!("error: {e:#}")));
            std::process::exit(1);
        }
        Err(_) => {
            let what = PANIC
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .unwrap_or_else(|| "unknown".into());
            eprintln!(
                "{}",
                bound_line(&format!(
                    "error: internal error (a bug in crossgroth, please report it): panicked: {what}"
                ))
            );
            std::process::exit(101);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_values_and_lines_are_bounded() {
        let long = "0".repeat(500_000);
        let line = bound_line(&format!(
            "error: x.json is not a public-inputs file: invalid type: string \"{long}\", expected a sequence"
        ));
        assert!(line.len() < 200, "{line}");
        assert!(line.contains("(500000 characters)"), "{line}");
        assert!(line.ends_with("expected a sequence"), "{line}");
        assert_eq!(
            bound_line("the key's IC query: 'abc'"),
            "the key's IC query: 'abc'"
        );
        assert!(bound_line(&"x".repeat(10_000)).chars().count() < LINE_MAX + 40);
        assert_eq!(bound_line("two\nlines"), "two; lines");
    }
}

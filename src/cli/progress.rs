//! Progress display for long work: a spinner on a terminal, nothing otherwise.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Stage {
    bar: ProgressBar,
    what: String,
}

impl Stage {
    pub fn start(what: &str) -> Stage {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").unwrap());
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        Stage {
            bar,
            what: what.to_string(),
        }
    }

    /// Reports a sub-step (`done` of `total`).
    pub fn step(&self, sub: &str, done: usize, total: usize) {
        self.bar
            .set_message(format!("{}: {sub} ({done}/{total})", self.what));
    }

    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

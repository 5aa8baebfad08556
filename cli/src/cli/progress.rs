//! Progress of long work: a spinner on a terminal; off a terminal (a log, CI, a
//! pipe), plain lines on stderr when a stage starts, advances and ends, so that a
//! long parameter read or setup is never silent.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Whether stderr is a terminal (spinners) or not (plain lines).
pub fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

pub struct Stage {
    bar: Option<ProgressBar>,
    what: String,
    began: Instant,
}

impl Stage {
    pub fn start(what: &str) -> Stage {
        let bar = if on_terminal() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").unwrap());
            bar.set_message(what.to_string());
            bar.enable_steady_tick(Duration::from_millis(120));
            Some(bar)
        } else {
            eprintln!("{what} …");
            None
        };
        Stage {
            bar,
            what: what.to_string(),
            began: Instant::now(),
        }
    }

    /// Reports a sub-step (`done` of `total`).
    pub fn step(&self, sub: &str, done: usize, total: usize) {
        match &self.bar {
            Some(bar) => bar.set_message(format!("{}: {sub} ({done}/{total})", self.what)),
            None => eprintln!(
                "{}: {sub} ({done}/{total}) [{:.1} s]",
                self.what,
                self.began.elapsed().as_secs_f64()
            ),
        }
    }

    /// Ends the stage; returns its duration in seconds.
    pub fn finish(self) -> f64 {
        let s = self.began.elapsed().as_secs_f64();
        match &self.bar {
            Some(bar) => bar.finish_and_clear(),
            None => eprintln!("{}: done in {s:.1} s", self.what),
        }
        s
    }
}

/// A count of finished units: a bar on a terminal, else a line at most every
/// few seconds (and at the end).
pub struct Counter {
    bar: Option<ProgressBar>,
    what: &'static str,
    total: u64,
    done: u64,
    began: Instant,
    last_line: Instant,
}

impl Counter {
    pub fn new(total: u64, what: &'static str) -> Counter {
        let bar = on_terminal().then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{pos}}/{{len}} {what} [{{elapsed}}] {{msg}}"
                ))
                .unwrap(),
            );
            bar
        });
        Counter {
            bar,
            what,
            total,
            done: 0,
            began: Instant::now(),
            last_line: Instant::now(),
        }
    }

    pub fn inc(&mut self, n: u64, msg: impl FnOnce() -> String) {
        self.done += n;
        match &self.bar {
            Some(bar) => {
                bar.inc(n);
                bar.set_message(msg());
            }
            None => {
                if self.done == self.total || self.last_line.elapsed() >= Duration::from_secs(5) {
                    self.last_line = Instant::now();
                    eprintln!(
                        "{}/{} {} [{:.1} s] {}",
                        self.done,
                        self.total,
                        self.what,
                        self.began.elapsed().as_secs_f64(),
                        msg()
                    );
                }
            }
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

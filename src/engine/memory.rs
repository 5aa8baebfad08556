//! The memory budget: every large buffer the engine allocates is charged here and
//! credited when it is freed; admission also watches the process's measured
//! anonymous resident memory, so estimates that undercount cannot run it out of
//! memory (a production prover ran out of memory exactly that way).

use std::time::{Duration, Instant};

/// Anonymous resident memory of this process in bytes (Linux: `RssAnon` of
/// /proc/self/status, which leaves out file-backed pages such as memory-mapped
/// parameter files). None where the system does not report it.
pub fn resident_anon_bytes() -> Option<usize> {
    process_status_bytes("RssAnon")
}

/// A memory field of this process's /proc/self/status in bytes (Linux:
/// "VmRSS", "VmHWM", "RssAnon", ...). None where the system does not report it.
pub fn process_status_bytes(field: &str) -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find(|l| l.split(':').next() == Some(field))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// What the budget knows at one moment; everything the admission rule reads.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct MemoryState {
    /// Bytes charged to jobs in flight (estimates of syntheses still running,
    /// measured buffers after).
    pub charged: usize,
    /// Resident memory the last time no unit was in flight, less the resident
    /// sets: what the process holds besides its jobs and its parameter sets
    /// (code, allocator caches, the caller's own data).
    pub baseline: usize,
    /// Host bytes of the resident parameter sets and their recorded shapes, and
    /// what loads and recordings in progress reserved before they started.
    pub sets: usize,
    /// Loads waiting for room in the budget: circuits wait behind them, so that
    /// a load is not starved by a stream of circuits.
    pub loads_waiting: usize,
    /// Last sampled anonymous resident memory.
    pub resident: usize,
    /// Whether the system reports resident memory (`resident` is then read
    /// from it, and the budget counts from it).
    pub resident_known: bool,
    /// Bytes the running syntheses have yet to write: their estimates less
    /// what each reported having written.
    pub pending: usize,
    /// Bytes reserved for loads and recordings in progress (part of `sets`).
    pub loading: usize,
    /// True while admission is paused because resident memory crossed the high
    /// mark; it resumes under the low mark (hysteresis).
    pub paused: bool,
    /// Units (circuits) holding a charge.
    pub units_in_flight: usize,
    /// Bytes kept for the H vectors that devices hand back for witness-only
    /// circuits: one a device at a time, so reserved once a device rather
    /// than charged to every circuit for its whole life.
    pub device_reserve: usize,
    /// True while the next circuit waits for memory (the budget refused it).
    pub waiting: bool,
}

impl MemoryState {
    /// What the budget counts as in use. Where resident memory is known: what
    /// is resident, what running syntheses have yet to write, what loads have
    /// yet to read and the devices' reserve, so that the budget fills with
    /// real memory rather than with the unwritten part of estimates. Elsewhere:
    /// what the process held without jobs, its sets, every charge and the
    /// reserve (or what is resident, where a caller set it, if larger).
    pub fn committed(&self) -> usize {
        if self.resident_known {
            self.resident + self.pending + self.loading + self.device_reserve
        } else {
            self.resident
                .max(self.baseline + self.sets + self.charged + self.device_reserve)
        }
    }

    /// Resident bytes that nothing the budget charges explains: what is
    /// resident less the process's baseline, the sets, what the jobs' charges
    /// have written so far and the devices' reserve. Large at a peak, it
    /// names memory the budget does not see coming.
    pub fn unexplained(&self) -> usize {
        let written = self.charged.saturating_sub(self.pending);
        self.resident
            .saturating_sub(self.baseline + self.sets + written + self.device_reserve)
    }
}

/// The admission rule, separate from locking so that it can be tested alone.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub limit: usize,
    /// Fraction of the limit under which a pause on resident memory ends.
    pub low_mark: f64,
}

impl Budget {
    pub fn new(limit: usize) -> Self {
        Budget {
            limit,
            low_mark: 0.9,
        }
    }

    /// Whether a unit needing `bytes` may start now. With nothing in flight one unit
    /// is always admitted (a unit larger than the limit is refused before this).
    ///
    /// What is committed is what is resident plus what is promised and not yet
    /// written ([`MemoryState::committed`]): a running synthesis is counted by
    /// its pages as it writes them and by the rest of its estimate until then,
    /// never twice, and resident memory catches what estimates undercount.
    pub fn admits(&self, state: &mut MemoryState, bytes: usize) -> bool {
        if state.units_in_flight == 0 {
            return true;
        }
        if state.loads_waiting > 0 {
            return false;
        }
        if state.paused {
            if state.resident as f64 <= self.low_mark * self.limit as f64 {
                state.paused = false;
            } else {
                return false;
            }
        }
        if state.resident > self.limit {
            state.paused = true;
            return false;
        }
        state.committed() + bytes <= self.limit
    }
}

/// Resident memory sampled over time, for the run summary and the plot, and
/// what was in use while a circuit waited for memory: how fully the budget is
/// used when it is what holds work back.
pub struct ResidentSamples {
    pub start: Option<Instant>,
    pub samples: Vec<(f64, usize)>,
    /// (seconds since the previous sample, resident, committed) of the
    /// samples taken while a circuit waited for memory.
    pub waits: Vec<(f64, usize, usize)>,
    /// When the last sample was taken (seconds since start).
    last: Option<f64>,
    /// The highest resident memory sampled.
    peak: usize,
    /// What the budget knew when that peak was sampled.
    at_peak: Option<MemoryState>,
    /// Samples kept for the series and for the waits (their first ones).
    cap: usize,
}

impl ResidentSamples {
    /// Keeps the first `cap` samples of the series and of the waits.
    pub fn new(cap: usize) -> Self {
        ResidentSamples {
            start: None,
            samples: Vec::new(),
            waits: Vec::new(),
            last: None,
            peak: 0,
            at_peak: None,
            cap,
        }
    }

    /// Records a sample of `resident` bytes; `waiting` holds what the budget
    /// counted as committed when a circuit was waiting for memory.
    /// `state` is what the budget knew at that moment, kept for the peak.
    pub fn record(&mut self, resident: usize, waiting: Option<usize>, state: &MemoryState) {
        let start = *self.start.get_or_insert_with(Instant::now);
        let now = start.elapsed().as_secs_f64();
        let since = now - self.last.unwrap_or(now);
        self.last = Some(now);
        if resident > self.peak || self.at_peak.is_none() {
            self.peak = resident;
            self.at_peak = Some(*state);
        }
        // A sample every 20 ms would grow without end in a daemon: the series
        // (for plots of runs) and the waits keep their first `cap`.
        if self.samples.len() < self.cap {
            self.samples.push((now, resident));
        }
        if let (Some(committed), true) = (waiting, self.waits.len() < self.cap) {
            self.waits.push((since, resident, committed));
        }
    }

    pub fn peak(&self) -> usize {
        self.peak
    }

    /// What the budget knew when the highest resident memory was sampled.
    pub fn at_peak(&self) -> Option<MemoryState> {
        self.at_peak
    }

    /// Resident and committed memory as fractions of `limit` while circuits
    /// waited for memory; None if none waited.
    pub fn budget_use_while_waiting(&self, limit: usize) -> Option<BudgetUse> {
        if self.waits.is_empty() || limit == 0 {
            return None;
        }
        let median = |pick: fn(&(f64, usize, usize)) -> usize| {
            let mut v: Vec<usize> = self.waits.iter().map(pick).collect();
            v.sort_unstable();
            v[v.len() / 2] as f64 / limit as f64
        };
        Some(BudgetUse {
            waiting_s: self.waits.iter().map(|w| w.0).sum(),
            resident_p50: median(|w| w.1),
            committed_p50: median(|w| w.2),
        })
    }
}

/// How much of the budget was in use while circuits waited for memory.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct BudgetUse {
    /// Seconds during which a circuit waited for memory.
    pub waiting_s: f64,
    /// Median resident memory meanwhile, as a fraction of the budget.
    pub resident_p50: f64,
    /// Median committed memory meanwhile (what admission counts), as a
    /// fraction of the budget.
    pub committed_p50: f64,
}

pub const SAMPLE_EVERY: Duration = Duration::from_millis(20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unexplained_is_resident_beyond_every_written_charge() {
        let s = MemoryState {
            resident: 1000,
            baseline: 100,
            sets: 300,
            charged: 500,
            pending: 200,
            device_reserve: 50,
            ..MemoryState::default()
        };
        // 100 + 300 + (500 - 200) + 50 explain 750 of the 1000 resident.
        assert_eq!(s.unexplained(), 250);
        let under = MemoryState { resident: 600, ..s };
        assert_eq!(under.unexplained(), 0);
    }

    #[test]
    fn admission_rule() {
        let b = Budget::new(1000);
        let mut s = MemoryState::default();
        // Nothing in flight: anything admitted (the caller refuses units > limit).
        assert!(b.admits(&mut s, 900));
        s.units_in_flight = 1;
        s.charged = 600;
        s.resident = 300;
        assert!(!b.admits(&mut s, 500), "charges would exceed the limit");
        assert!(b.admits(&mut s, 400));
        // What the process held before its jobs counts: parameters of 300 leave
        // room for one more unit of 100, not 400.
        s.baseline = 300;
        assert!(!b.admits(&mut s, 200));
        assert!(b.admits(&mut s, 100));
        // A running synthesis is counted once: resident growth inside its charge
        // does not reserve it again.
        s.resident = 850;
        assert!(b.admits(&mut s, 100));
        // The devices' reserve for H vectors counts beside the charges.
        s.device_reserve = 60;
        assert!(!b.admits(&mut s, 100));
        assert!(b.admits(&mut s, 40));
        s.device_reserve = 0;
        // Resident parameter sets count beside the charges, and a load waiting
        // for room goes first.
        s.sets = 60;
        assert!(!b.admits(&mut s, 100));
        assert!(b.admits(&mut s, 40));
        s.loads_waiting = 1;
        assert!(!b.admits(&mut s, 1));
        s.sets = 0;
        s.loads_waiting = 0;
        // Resident memory beyond the charges (an undercounting estimate) counts.
        s.resident = 950;
        assert!(!b.admits(&mut s, 100));
        // Resident memory over the limit pauses admission until under 90%.
        s.charged = 100;
        s.baseline = 0;
        s.resident = 1010;
        assert!(!b.admits(&mut s, 10));
        assert!(s.paused);
        s.resident = 920;
        assert!(!b.admits(&mut s, 10), "still above the low mark");
        s.resident = 850;
        assert!(b.admits(&mut s, 10));
        assert!(!s.paused);
    }

    #[test]
    fn counts_what_is_resident_and_yet_to_be_written() {
        let b = Budget::new(1000);
        let mut s = MemoryState {
            resident_known: true,
            units_in_flight: 2,
            resident: 600,
            charged: 800,
            baseline: 100,
            sets: 200,
            ..Default::default()
        };
        // Charges already written are resident: counted once, not again as charges.
        assert!(b.admits(&mut s, 400));
        assert!(!b.admits(&mut s, 401));
        // What running syntheses have yet to write counts, and so do loads in
        // progress and the devices' reserve.
        s.pending = 300;
        assert!(!b.admits(&mut s, 200));
        assert!(b.admits(&mut s, 100));
        s.loading = 50;
        assert!(!b.admits(&mut s, 100));
        s.device_reserve = 50;
        assert_eq!(s.committed(), 1000);
        assert!(!b.admits(&mut s, 1));
    }

    #[test]
    fn reads_resident_memory_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(resident_anon_bytes().unwrap() > 0);
        }
    }
}

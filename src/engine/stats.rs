//! Per-stage timings, per-device busy time and the run summary.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use super::memory::{BudgetUse, MemoryState};

/// Seconds one job spent in each engine stage ("queue_synthesis", "synthesis",
/// "queue_device", "g1_side", "b_g2", "assemble", "verify"), summed over its circuits.
#[derive(Debug, Default)]
pub struct JobStages {
    seconds: Mutex<HashMap<String, f64>>,
}

impl JobStages {
    /// Seconds spent in `stage` so far (0 when none).
    pub fn seconds(&self, stage: &str) -> f64 {
        self.seconds
            .lock()
            .unwrap()
            .get(stage)
            .copied()
            .unwrap_or(0.0)
    }

    pub fn snapshot(&self) -> HashMap<String, f64> {
        self.seconds.lock().unwrap().clone()
    }

    pub(super) fn add(&self, stage: &str, secs: f64) {
        *self
            .seconds
            .lock()
            .unwrap()
            .entry(stage.to_string())
            .or_default() += secs;
    }
}

/// Percentiles of one stage, in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct StageSummary {
    pub count: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub total_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeviceSummary {
    pub backend: String,
    pub device: String,
    /// Time the device spent on critical paths.
    pub busy_s: f64,
    /// "device events" or "host clock": how `busy_s` was measured.
    pub busy_measured_by: &'static str,
    pub units: usize,
}

/// Busy time and work of one device.
#[derive(Clone, Copy, Debug)]
pub struct DeviceBusy {
    pub busy_s: f64,
    pub units: usize,
    /// True while every measurement came from device events.
    pub event_timed: bool,
}

impl DeviceBusy {
    pub fn summary(&self, backend: String, device: String) -> DeviceSummary {
        DeviceSummary {
            backend,
            device,
            busy_s: self.busy_s,
            busy_measured_by: if self.event_timed && self.units > 0 {
                "device events"
            } else {
                "host clock"
            },
            units: self.units,
        }
    }
}

/// The JSON summary printed at the end of a run.
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub proofs: usize,
    pub jobs_failed: usize,
    pub wall_s: f64,
    pub proofs_per_s: f64,
    /// Throughput between the first and the last job completion: the steady state,
    /// without the ramp-up before the first proof.
    pub steady_proofs_per_s: f64,
    pub peak_resident_bytes: usize,
    pub memory_budget_bytes: usize,
    /// How much of the budget was in use while circuits waited for memory;
    /// None if none waited.
    pub budget_use_while_waiting: Option<BudgetUse>,
    /// What the budget knew when resident memory peaked.
    pub memory_at_peak: Option<MemoryState>,
    pub stages: BTreeMap<String, StageSummary>,
    pub devices: Vec<DeviceSummary>,
    /// (seconds since start, anonymous resident bytes) samples.
    #[serde(skip)]
    pub resident: Vec<(f64, usize)>,
    /// (stage, start s, end s) intervals, for plotting stage activity.
    #[serde(skip)]
    pub activity: Vec<(String, f64, f64)>,
}

pub struct Stats {
    start: Instant,
    stages: BTreeMap<String, Vec<f64>>,
    /// Stage times recorded so far (where the next one goes once a stage's ring is full).
    recorded: usize,
    pub proofs: usize,
    pub jobs_failed: usize,
    pub device_busy: Vec<DeviceBusy>,
    /// (seconds since start, proofs) of the first completed job, and when
    /// the last one completed: the steady state lies between.
    first_completion: Option<(f64, usize)>,
    last_completion_s: f64,
    activity: Vec<(String, f64, f64)>,
    /// Times kept a stage (a ring of the latest past it) and stage intervals
    /// kept for plots (the first ones).
    cap: usize,
}

impl Stats {
    /// `cap`: see [`super::EngineConfig::kept_samples`].
    pub fn new(devices: usize, cap: usize) -> Self {
        Stats {
            cap: cap.max(1),
            first_completion: None,
            last_completion_s: 0.0,
            start: Instant::now(),
            stages: BTreeMap::new(),
            recorded: 0,
            proofs: 0,
            jobs_failed: 0,
            device_busy: vec![
                DeviceBusy {
                    busy_s: 0.0,
                    units: 0,
                    event_timed: true,
                };
                devices
            ],
            activity: vec![],
        }
    }

    /// Records one stage execution that began at `began` and lasted `seconds`.
    pub fn record(&mut self, stage: &str, began: Instant, seconds: f64) {
        let times = self.stages.entry(stage.to_string()).or_default();
        // A daemon runs for months: past the cap, a stage's times become a
        // ring of the most recent ones.
        if times.len() < self.cap {
            times.push(seconds);
        } else {
            times[self.recorded % self.cap] = seconds;
        }
        self.recorded += 1;
        let s = began.saturating_duration_since(self.start).as_secs_f64();
        if self.activity.len() < self.cap {
            self.activity.push((stage.to_string(), s, s + seconds));
        }
    }

    /// Records a job that completed with `proofs` proofs.
    pub fn completed(&mut self, proofs: usize) {
        self.proofs += proofs;
        let now = self.start.elapsed().as_secs_f64();
        self.first_completion.get_or_insert((now, proofs));
        self.last_completion_s = now;
    }

    fn steady_throughput(&self) -> f64 {
        match self.first_completion {
            Some((first_s, first_proofs)) if self.last_completion_s > first_s => {
                (self.proofs - first_proofs) as f64 / (self.last_completion_s - first_s)
            }
            _ => 0.0,
        }
    }

    pub fn count(&self, stage: &str) -> usize {
        self.stages.get(stage).map_or(0, |v| v.len())
    }

    pub fn summary(
        &self,
        peak: usize,
        budget: usize,
        budget_use_while_waiting: Option<BudgetUse>,
        memory_at_peak: Option<MemoryState>,
        resident: Vec<(f64, usize)>,
        devices: Vec<(String, String)>,
    ) -> RunSummary {
        let wall = self.start.elapsed().as_secs_f64();
        let stages = self
            .stages
            .iter()
            .map(|(name, v)| {
                let mut v = v.clone();
                v.sort_by(|a, b| a.total_cmp(b));
                let pick =
                    |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1] * 1e3;
                (
                    name.clone(),
                    StageSummary {
                        count: v.len(),
                        p50_ms: pick(0.5),
                        p99_ms: pick(0.99),
                        max_ms: v.last().copied().unwrap_or(0.0) * 1e3,
                        total_s: v.iter().sum(),
                    },
                )
            })
            .collect();
        RunSummary {
            proofs: self.proofs,
            jobs_failed: self.jobs_failed,
            wall_s: wall,
            proofs_per_s: self.proofs as f64 / wall.max(1e-9),
            steady_proofs_per_s: self.steady_throughput(),
            peak_resident_bytes: peak,
            memory_budget_bytes: budget,
            budget_use_while_waiting,
            memory_at_peak,
            stages,
            devices: devices
                .into_iter()
                .zip(&self.device_busy)
                .map(|((backend, device), busy)| busy.summary(backend, device))
                .collect(),
            resident,
            activity: self.activity.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_stay_within_their_cap_as_rings_of_the_latest() {
        let mut s = Stats::new(1, 4);
        let t = Instant::now();
        for i in 0..10 {
            s.record("h", t, i as f64);
            s.completed(1);
        }
        // The latest four times, whatever order the ring holds them in.
        let mut times = s.stages["h"].clone();
        times.sort_by(f64::total_cmp);
        assert_eq!(times, [6.0, 7.0, 8.0, 9.0]);
        assert_eq!(s.activity.len(), 4);
        assert_eq!(s.proofs, 10);
        assert!(s.first_completion.is_some_and(|(_, p)| p == 1));
    }
}

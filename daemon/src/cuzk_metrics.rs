//! cuzk's metric names, exported beside crossgroth's own so that a provider's
//! dashboards and alerts built on cuzk keep working after the switch (the
//! mapping is tabled in docs/serve.md). Same names, labels and meanings as
//! cuzk's GetMetrics; its proof-duration summary is a histogram here, whose
//! `_count` and `_sum` series are the summary's.

use prometheus::{Counter, CounterVec, Gauge, HistogramOpts, HistogramVec, Opts, Registry};

use crossgroth_filecoin::ProofKind;

use crate::decode::metric_label;

pub(crate) struct CuzkMetrics {
    completed_total: Counter,
    failed_total: Counter,
    completed: CounterVec,
    failed: CounterVec,
    duration: HistogramVec,
    uptime: Gauge,
    queue_depth: Gauge,
    running_jobs: Gauge,
    gpu_workers: Gauge,
}

impl CuzkMetrics {
    pub(crate) fn register(registry: &Registry, buckets: &[f64]) -> CuzkMetrics {
        let kind = &["proof_kind"];
        let m = CuzkMetrics {
            completed_total: Counter::new("cuzk_proofs_completed_total", "Total proofs completed")
                .unwrap(),
            failed_total: Counter::new("cuzk_proofs_failed_total", "Total proofs failed").unwrap(),
            completed: CounterVec::new(
                Opts::new("cuzk_proofs_completed", "Per proof-kind completions"),
                kind,
            )
            .unwrap(),
            failed: CounterVec::new(
                Opts::new("cuzk_proofs_failed", "Per proof-kind failures"),
                kind,
            )
            .unwrap(),
            duration: HistogramVec::new(
                HistogramOpts::new("cuzk_proof_duration_seconds", "Proof duration")
                    .buckets(buckets.to_vec()),
                kind,
            )
            .unwrap(),
            uptime: Gauge::new("cuzk_uptime_seconds", "Daemon uptime").unwrap(),
            queue_depth: Gauge::new("cuzk_queue_depth", "Current queue depth").unwrap(),
            running_jobs: Gauge::new("cuzk_running_jobs", "Currently running proofs").unwrap(),
            gpu_workers: Gauge::new(
                "cuzk_gpu_workers",
                "Number of GPU workers (here: devices in service)",
            )
            .unwrap(),
        };
        for c in [
            Box::new(m.completed_total.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(m.failed_total.clone()),
            Box::new(m.completed.clone()),
            Box::new(m.failed.clone()),
            Box::new(m.duration.clone()),
            Box::new(m.uptime.clone()),
            Box::new(m.queue_depth.clone()),
            Box::new(m.running_jobs.clone()),
            Box::new(m.gpu_workers.clone()),
        ] {
            registry.register(c).unwrap();
        }
        for k in ProofKind::ALL {
            m.completed.with_label_values(&[metric_label(k)]);
            m.failed.with_label_values(&[metric_label(k)]);
        }
        m
    }

    /// One finished job; `total_s` is its time from submission to its proof.
    pub(crate) fn finished(&self, kind: ProofKind, status: &str, total_s: Option<f64>) {
        let k = [metric_label(kind)];
        match status {
            "completed" => {
                self.completed_total.inc();
                self.completed.with_label_values(&k).inc();
                if let Some(s) = total_s {
                    self.duration.with_label_values(&k).observe(s);
                }
            }
            "failed" => {
                self.failed_total.inc();
                self.failed.with_label_values(&k).inc();
            }
            _ => {}
        }
    }

    pub(crate) fn sample(&self, uptime_s: f64, queued: u64, running: u64, devices: usize) {
        self.uptime.set(uptime_s.floor());
        self.queue_depth.set(queued as f64);
        self.running_jobs.set(running as f64);
        self.gpu_workers.set(devices as f64);
    }
}

//! Prometheus metrics: proofs by kind and status, stage durations as histograms,
//! queue depths, memory in use and budget, loaded parameters, device busy time.
//! Counters and histograms move as jobs finish; gauges are read at each scrape.

use std::time::Duration;

use prometheus::{
    CounterVec, Encoder, Gauge, GaugeVec, HistogramOpts, HistogramVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

use crossgroth_filecoin::ProofKind;

use crate::cuzk_metrics::CuzkMetrics;
use crate::decode::metric_label;

pub struct Metrics {
    registry: Registry,
    proofs: CounterVec,
    stage: HistogramVec,
    queue: IntGaugeVec,
    memory: GaugeVec,
    srs_bytes: Gauge,
    srs_reread: Gauge,
    srs_loads: Gauge,
    srs_evictions: Gauge,
    device_busy: GaugeVec,
    uptime: Gauge,
    devices_in_service: Gauge,
    cuzk: CuzkMetrics,
}

/// Histogram bounds in seconds: WinningPoSt's fraction of a second to a 64 GiB
/// PoRep's minutes.
const BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0,
];

impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let proofs = CounterVec::new(
            Opts::new(
                "crossgroth_proofs_total",
                "Proofs finished, by kind and status",
            ),
            &["proof_kind", "status"],
        )
        .unwrap();
        let stage = HistogramVec::new(
            HistogramOpts::new(
                "crossgroth_proof_stage_seconds",
                "Time of each stage of a completed proof (queue_wait, srs_load, synthesis, gpu, total)",
            )
            .buckets(BUCKETS.to_vec()),
            &["proof_kind", "stage"],
        )
        .unwrap();
        let queue = IntGaugeVec::new(
            Opts::new(
                "crossgroth_queue_jobs",
                "Jobs by kind and state (pending: queued; in_progress: proving)",
            ),
            &["proof_kind", "state"],
        )
        .unwrap();
        let memory = GaugeVec::new(
            Opts::new(
                "crossgroth_memory_bytes",
                "Memory: budget, charged (to jobs in flight), committed (what admission counts against the budget), resident (sampled anonymous memory)",
            ),
            &["what"],
        )
        .unwrap();
        let srs_bytes = Gauge::new(
            "crossgroth_srs_loaded_bytes",
            "Bytes of parameter sets held in memory",
        )
        .unwrap();
        let srs_reread = Gauge::new(
            "crossgroth_srs_reread_after_release_total",
            "Parameter sets read anew after a device fault lost the only copy of their \
             bases (their host copy had been released: memory.release_host_copies)",
        )
        .unwrap();
        let srs_loads = Gauge::new(
            "crossgroth_srs_loads_total",
            "Parameter sets read from their files (one read however many jobs wait for it)",
        )
        .unwrap();
        let srs_evictions = Gauge::new(
            "crossgroth_srs_evictions_total",
            "Parameter sets released from host and device memory (requested, idle, or lost)",
        )
        .unwrap();
        let device_busy = GaugeVec::new(
            Opts::new(
                "crossgroth_device_busy_seconds_total",
                "Time each device spent on proofs: critical paths, and B_G2 where it runs on the device after them",
            ),
            &["ordinal", "device"],
        )
        .unwrap();
        let uptime = Gauge::new(
            "crossgroth_uptime_seconds",
            "Seconds since the daemon started",
        )
        .unwrap();
        let devices_in_service = Gauge::new(
            "crossgroth_devices_in_service",
            "Devices still in service (a device is taken out of service after repeated errors)",
        )
        .unwrap();
        for c in [
            Box::new(proofs.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(stage.clone()),
            Box::new(queue.clone()),
            Box::new(memory.clone()),
            Box::new(srs_bytes.clone()),
            Box::new(srs_reread.clone()),
            Box::new(srs_loads.clone()),
            Box::new(srs_evictions.clone()),
            Box::new(device_busy.clone()),
            Box::new(uptime.clone()),
            Box::new(devices_in_service.clone()),
        ] {
            registry.register(c).unwrap();
        }
        let cuzk = CuzkMetrics::register(&registry, BUCKETS);
        let m = Metrics {
            registry,
            cuzk,
            proofs,
            stage,
            queue,
            memory,
            srs_bytes,
            srs_reread,
            srs_loads,
            srs_evictions,
            device_busy,
            uptime,
            devices_in_service,
        };
        for kind in ProofKind::ALL {
            m.queue(kind, 0, 0);
            for status in ["completed", "failed", "cancelled"] {
                m.proofs.with_label_values(&[metric_label(kind), status]);
            }
        }
        m
    }

    /// One finished job: its status and, when completed, its stage times.
    pub fn finished(&self, kind: ProofKind, status: &str, stages: &[(&str, Duration)]) {
        let k = metric_label(kind);
        self.proofs.with_label_values(&[k, status]).inc();
        let total = stages
            .iter()
            .find(|s| s.0 == "total")
            .map(|s| s.1.as_secs_f64());
        self.cuzk.finished(kind, status, total);
        if status == "completed" {
            for &(stage, d) in stages {
                self.stage
                    .with_label_values(&[k, stage])
                    .observe(d.as_secs_f64());
            }
        }
    }

    pub fn queue(&self, kind: ProofKind, pending: u32, in_progress: u32) {
        let k = metric_label(kind);
        self.queue
            .with_label_values(&[k, "pending"])
            .set(i64::from(pending));
        self.queue
            .with_label_values(&[k, "in_progress"])
            .set(i64::from(in_progress));
    }

    /// Reads the gauges that are sampled rather than counted.
    pub fn sample(&self, s: &Sample) {
        self.memory
            .with_label_values(&["budget"])
            .set(s.budget as f64);
        self.memory
            .with_label_values(&["charged"])
            .set(s.charged as f64);
        self.memory
            .with_label_values(&["committed"])
            .set(s.committed as f64);
        self.memory
            .with_label_values(&["resident"])
            .set(s.resident as f64);
        self.srs_bytes.set(s.srs_bytes as f64);
        self.srs_reread.set(s.srs_reread as f64);
        self.srs_loads.set(s.srs_loads as f64);
        self.srs_evictions.set(s.srs_evictions as f64);
        for (i, (name, busy)) in s.devices.iter().enumerate() {
            self.device_busy
                .with_label_values(&[&i.to_string(), name])
                .set(*busy);
        }
        self.uptime.set(s.uptime_s);
        self.devices_in_service.set(s.devices_in_service as f64);
        let (mut queued, mut running) = (0, 0);
        for kind in ProofKind::ALL {
            let k = metric_label(kind);
            queued += self.queue.with_label_values(&[k, "pending"]).get();
            running += self.queue.with_label_values(&[k, "in_progress"]).get();
        }
        self.cuzk.sample(
            s.uptime_s,
            queued.max(0) as u64,
            running.max(0) as u64,
            s.devices_in_service,
        );
    }

    /// The exposition text.
    pub fn text(&self) -> String {
        let mut buf = vec![];
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buf);
        String::from_utf8(buf).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// What a scrape reads from the engine and the parameter cache.
pub struct Sample {
    pub budget: usize,
    pub charged: usize,
    /// What admission counts against the budget (see `MemoryState::committed`).
    pub committed: usize,
    pub resident: usize,
    pub srs_bytes: usize,
    pub srs_reread: u64,
    pub srs_loads: u64,
    pub srs_evictions: u64,
    /// Per device: its name and busy seconds.
    pub devices: Vec<(String, f64)>,
    pub uptime_s: f64,
    pub devices_in_service: usize,
}

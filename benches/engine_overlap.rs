//! Do the engine's stages overlap? Proofs of SHA-256 (64 bytes) through the engine
//! with a simulated device (it holds a device slot for a fixed time and uses no
//! CPU), against the throughput of the slowest stage alone. Target: ≥ 0.9×.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use crossgroth::backend::simulated::SimulatedDevice;
use crossgroth::backend::{Backend, CpuBackend, G2Bases, Msm};
use crossgroth::circuits::CircuitSpec;
use crossgroth::engine::{Engine, EngineConfig, Job};
use crossgroth::groth16::steps::b_inputs;
use crossgroth::groth16::{self, Parameters};
use crossgroth::synthesis::synthesize;
use rand_core::SeedableRng;
use rayon::prelude::*;

const DEVICE_TIME: Duration = Duration::from_millis(60);
const PROOFS: usize = 24;
const WITNESSES: u64 = 4;

fn per_second(n: usize, t: Duration) -> f64 {
    n as f64 / t.as_secs_f64()
}

/// Throughput of each stage run alone, proofs per second.
fn stages_alone(
    spec: &CircuitSpec,
    params: &Arc<Parameters>,
    workers: usize,
) -> [(&'static str, f64); 3] {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .unwrap();
    let t = Instant::now();
    let asgs: Vec<_> = pool.install(|| {
        (0..8u64)
            .into_par_iter()
            .map(|i| synthesize(spec.instance(i % WITNESSES)).unwrap())
            .collect()
    });
    let synthesis = per_second(8, t.elapsed());
    let device = per_second(1, DEVICE_TIME);
    // Finalizer: B_G2 on the CPU, assembly, and a one-proof verification.
    let prover = groth16::Prover::new(Arc::new(CpuBackend), params.clone()).unwrap();
    let (r, s) = groth16::draw_randomness(1, &mut rand_chacha::ChaCha20Rng::seed_from_u64(1));
    let proof = prover
        .prove_assignments(vec![asgs[0].clone()], &r, &s)
        .unwrap()[0];
    let pvk = groth16::prepare_verifying_key(&params.vk);
    let bases = G2Bases {
        host: Some(params.b_g2.host().unwrap()),
        device: None,
    };
    let t = Instant::now();
    for asg in &asgs {
        CpuBackend.msm(&bases, &b_inputs(asg)).unwrap();
        groth16::verify_proof(&pvk, &proof, asgs[0].public_inputs()).unwrap();
    }
    let finalize = per_second(asgs.len(), t.elapsed());
    [
        ("synthesis", synthesis),
        ("device", device),
        ("finalize", finalize),
    ]
}

fn bench(c: &mut Criterion) {
    let spec: CircuitSpec = "sha256:64".parse().unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let params =
        Arc::new(groth16::generate_random_parameters(spec.blank(), &mut rng, None).unwrap());
    let workers = 2;
    let alone = stages_alone(&spec, &params, workers);
    let slowest = alone.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
    let device: Arc<dyn Backend> = SimulatedDevice::new(DEVICE_TIME).shared();
    let config = EngineConfig {
        synthesis_workers: workers,
        ..EngineConfig::default()
    };
    let engine = Engine::start(config, vec![device]).unwrap();
    // Warm-up: the simulated device computes each distinct witness's result once.
    let warm: Vec<_> = (0..WITNESSES).map(|i| spec.instance(i)).collect();
    engine
        .submit(Job::new("warm-up", params.clone(), warm))
        .unwrap()
        .wait()
        .unwrap();
    let runs = RefCell::new(vec![]);
    let mut job = 0;
    let mut group = c.benchmark_group("engine_overlap");
    group.sample_size(10);
    group.bench_function(
        format!("sha256:64 x{PROOFS}, simulated device {DEVICE_TIME:?}"),
        |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    let handles: Vec<_> = (0..PROOFS as u64)
                        .map(|i| {
                            job += 1;
                            let c = vec![spec.instance(i % WITNESSES)];
                            engine
                                .submit(Job::new(format!("j{job}"), params.clone(), c))
                                .unwrap()
                        })
                        .collect();
                    for h in handles {
                        h.wait().unwrap();
                    }
                }
                let elapsed = t.elapsed();
                runs.borrow_mut()
                    .push(per_second(PROOFS * iters as usize, elapsed));
                elapsed
            })
        },
    );
    group.finish();
    let mut runs = runs.into_inner();
    runs.sort_by(|a, b| a.total_cmp(b));
    let median = runs[runs.len() / 2];
    for (name, tput) in alone {
        println!("stage alone: {name:10} {tput:7.2} proofs/s");
    }
    println!(
        "engine: {median:.2} proofs/s (median run) = {:.3} x the slowest stage alone ({slowest:.2} proofs/s); target >= 0.9",
        median / slowest
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);

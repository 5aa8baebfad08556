//! Every backend present on identical inputs (cpu, cuda, wgpu with SHADER_INT64 where
//! the adapter has it, wgpu-u32 on the portable field code), one criterion group per
//! operation with the backend as the parameter. GPU work is timed with device events
//! (`Backend::device_time`), CPU work with the host clock. Sizes stop where the cpu
//! backend would take minutes; `CROSSGROTH_BENCH_MAX_LOG` raises the GPU sizes
//! (default 20; the GPU script uses 24). `CROSSGROTH_BENCH_GROUPS` (comma
//! separated: g1_msm, ntt_and_h, prove) runs only those groups, skipping the
//! others' set-up too (criterion's name filter skips only the measuring).

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use crossgroth::backend::{
    open_backend, Backend, BackendKind, CpuBackend, Msm, MsmInput, Placement, WgpuBackend,
    WgpuOptions, G1,
};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::placement::{PlacementConfig, TablePolicy};
use crossgroth::groth16::{self, Prover};
use crossgroth::synthesis::synthesize;
use crossgroth::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;

/// The backends measured, by label: cpu, cuda, wgpu (SHADER_INT64 where the
/// adapter has it) and wgpu-u32 (the portable field code, forced).
fn backends() -> Vec<(String, Arc<dyn Backend>)> {
    let mut out: Vec<(String, Arc<dyn Backend>)> = vec![("cpu".into(), Arc::new(CpuBackend))];
    for kind in [BackendKind::Cuda, BackendKind::Wgpu] {
        match open_backend(kind) {
            Ok(b) => out.push((b.name().to_string(), b)),
            Err(e) => eprintln!("benchmarks skip {kind}: {e}"),
        }
    }
    let portable = WgpuBackend::open_with(WgpuOptions {
        allow_int64: false,
        ..WgpuOptions::default()
    });
    match portable {
        Ok(b) => out.push(("wgpu-u32".into(), Arc::new(b))),
        Err(e) => eprintln!("benchmarks skip wgpu-u32: {e}"),
    }
    out
}

fn max_log() -> u32 {
    std::env::var("CROSSGROTH_BENCH_MAX_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

/// The largest size at which the cpu backend is still measured.
const CPU_MAX_LOG: u32 = 20;

/// Whether CROSSGROTH_BENCH_GROUPS (unset: all) names this group.
fn wanted(group: &str) -> bool {
    std::env::var("CROSSGROTH_BENCH_GROUPS")
        .map(|v| v.split(',').any(|g| g.trim() == group))
        .unwrap_or(true)
}

/// 2^log distinct bases: a random walk, normalized in parallel.
fn bases(log: u32) -> Arc<Vec<G1Affine>> {
    let n = 1usize << log;
    let chunk = 1 << 14;
    let proj: Vec<G1Projective> = (0..n.div_ceil(chunk))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(c as u64);
            let step = G1Projective::random(&mut rng);
            let mut p = G1Projective::random(&mut rng);
            (0..chunk.min(n - c * chunk)).map(move |_| {
                p += step;
                p
            })
        })
        .collect();
    let mut out = vec![G1Affine::default(); n];
    out.par_chunks_mut(chunk)
        .zip(proj.par_chunks(chunk))
        .for_each(|(o, p)| G1Projective::batch_normalize(p, o));
    Arc::new(out)
}

/// Uniform scalars, or Groth16-like ones (90% zeros and ones).
fn scalars(n: usize, groth16_like: bool, seed: u64) -> Vec<Scalar> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed ^ (i as u64) << 20);
            match (groth16_like, rng.next_u32() % 10) {
                (true, 0..=4) => Scalar::ZERO,
                (true, 5..=8) => Scalar::ONE,
                _ => Scalar::random(&mut rng),
            }
        })
        .collect()
}

/// Time of `iters` runs of `work`: device events where the backend has them.
fn measure(backend: &dyn Backend, iters: u64, mut work: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let t = Instant::now();
        let device = backend
            .device_time(&mut || {
                work();
                Ok(())
            })
            .unwrap();
        total += device.unwrap_or_else(|| t.elapsed());
    }
    total
}

fn g1_msm(c: &mut Criterion) {
    if !wanted("g1_msm") {
        return;
    }
    let all = backends();
    let mut group = c.benchmark_group("g1_msm");
    group.sample_size(10);
    for log in (16..=max_log()).step_by(2) {
        let b = bases(log);
        for (label, like) in [("uniform", false), ("groth16", true)] {
            let sc = scalars(1 << log, like, log as u64);
            for (name, backend) in &all {
                if name == "cpu" && log > CPU_MAX_LOG {
                    continue;
                }
                let prepared = backend
                    .prepare_bases::<G1>(b.clone(), Placement::PLAIN)
                    .unwrap();
                group.bench_function(
                    BenchmarkId::new(format!("{}/{label}", name.as_str()), log),
                    |bench| {
                        bench.iter_custom(|iters| {
                            measure(backend.as_ref(), iters, || {
                                backend.msm(&prepared, &[MsmInput::dense(&sc)]).unwrap();
                            })
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

fn ntt_and_h(c: &mut Criterion) {
    if !wanted("ntt_and_h") {
        return;
    }
    let all = backends();
    let mut group = c.benchmark_group("ntt");
    group.sample_size(10);
    for log in [16, 20, 22, 24].into_iter().filter(|l| *l <= max_log()) {
        let values = scalars(1 << log, false, 7);
        for (name, backend) in &all {
            if name == "cpu" && log > CPU_MAX_LOG {
                continue;
            }
            group.bench_function(BenchmarkId::new(name.as_str(), log), |bench| {
                bench.iter_custom(|iters| {
                    let mut v = values.clone();
                    measure(backend.as_ref(), iters, || {
                        backend.ntt(&mut v, false).unwrap()
                    })
                })
            });
        }
    }
    group.finish();
    let mut group = c.benchmark_group("h");
    group.sample_size(10);
    for log in [16, 20, 22, 24].into_iter().filter(|l| *l <= max_log()) {
        let (a, b) = (scalars(1 << log, false, 1), scalars(1 << log, false, 2));
        let cc: Vec<Scalar> = a.par_iter().zip(&b).map(|(x, y)| *x * y).collect();
        for (name, backend) in &all {
            if name == "cpu" && log > CPU_MAX_LOG {
                continue;
            }
            group.bench_function(BenchmarkId::new(name.as_str(), log), |bench| {
                bench.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let (mut x, mut y, mut z) = (a.clone(), b.clone(), cc.clone());
                        total += measure(backend.as_ref(), 1, || {
                            backend.compute_h(&mut x, &mut y, &mut z).unwrap()
                        });
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

fn prove_from_assignment(c: &mut Criterion) {
    if !wanted("prove") {
        return;
    }
    // RUST_LOG=info prints each proof's stages (G1 side, B_G2, assembly)
    let _ = env_logger::try_init();
    let all = backends();
    let mut group = c.benchmark_group("prove_from_assignment");
    group.sample_size(10);
    for log in [16u32, 20, 22].into_iter().filter(|l| *l <= max_log()) {
        let spec: CircuitSpec = format!("chain:{log}").parse().unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let params =
            Arc::new(groth16::generate_random_parameters(spec.blank(), &mut rng, None).unwrap());
        let asg = synthesize(spec.instance(1)).unwrap();
        let (r, s) = groth16::draw_randomness(1, &mut rng);
        for (name, backend) in &all {
            // the cpu backend takes seconds a proof past 2^18; wgpu's figures are
            // wanted up to the 2^20 chain
            if (name == "cpu" && log > 18) || (name.starts_with("wgpu") && log > 20) {
                continue;
            }
            // The default placement (cuda: G1 bases as tables of precomputed
            // copies where they fit) and, where that differs, plain bases.
            let mut placements = vec![(name.clone(), PlacementConfig::default())];
            if backend.max_table_copies() > 1 {
                let plain = PlacementConfig {
                    tables: TablePolicy::Off,
                    ..PlacementConfig::default()
                };
                placements.push((format!("{name}-plain"), plain));
            }
            for (label, placed) in placements {
                let prover =
                    Prover::with_placement(backend.clone(), params.clone(), &placed).unwrap();
                group.bench_function(
                    BenchmarkId::new(label.as_str(), format!("chain:{log}")),
                    |bench| {
                        bench.iter_custom(|iters| {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let input = vec![asg.clone()];
                                let t = Instant::now();
                                prover.prove_assignments(input, &r, &s).unwrap();
                                total += t.elapsed();
                            }
                            total
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, g1_msm, ntt_and_h, prove_from_assignment);
criterion_main!(benches);

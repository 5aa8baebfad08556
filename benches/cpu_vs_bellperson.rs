//! crossgroth's CPU backend against bellperson 0.27's `create_proof`, same circuit,
//! parameters and (r, s), in one run. Target: crossgroth ≥ 1.5× faster on 2 cores.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{self, Parameters};
use ff::Field;
use rand_core::SeedableRng;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("prove");
    group.sample_size(10);
    for spec in ["sha256:512", "chain:16"] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let params = groth16::generate_random_parameters(spec.blank(), &mut rng, None).unwrap();
        let mut bytes = vec![];
        params.write(&mut bytes).unwrap();
        let bp = bellperson::groth16::Parameters::<blstrs::Bls12>::read(&bytes[..], false).unwrap();
        let params = Parameters::from_bytes(&bytes, false).unwrap();
        let circuit = spec.instance(2);
        let (r, s) = (
            blstrs::Scalar::random(&mut rng),
            blstrs::Scalar::random(&mut rng),
        );
        group.bench_function(BenchmarkId::new("crossgroth-cpu", spec), |b| {
            b.iter(|| groth16::create_proof(circuit.clone(), &params, r, s).unwrap())
        });
        group.bench_function(BenchmarkId::new("bellperson", spec), |b| {
            b.iter(|| bellperson::groth16::create_proof(circuit.clone(), &bp, r, s).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

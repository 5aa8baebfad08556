//! Recorded-mode synthesis (witness pass + sparse matrix-vector product) against
//! direct synthesis, on SHA-256 of 512 bytes.

use criterion::{criterion_group, criterion_main, Criterion};
use crossgroth::circuits::CircuitSpec;
use crossgroth::synthesis::{synthesize, RecordedShape};

fn bench(c: &mut Criterion) {
    let spec: CircuitSpec = "sha256:512".parse().unwrap();
    let (shape, _) = RecordedShape::record(spec.blank()).unwrap();
    let circuit = spec.instance(1);
    let mut group = c.benchmark_group("synthesis/sha256:512");
    group.sample_size(20);
    group.bench_function("direct", |b| {
        b.iter(|| synthesize(circuit.clone()).unwrap())
    });
    group.bench_function("recorded", |b| {
        b.iter(|| shape.synthesize(circuit.clone()).unwrap())
    });
    group.bench_function("record-once", |b| {
        b.iter(|| RecordedShape::record(circuit.clone()).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

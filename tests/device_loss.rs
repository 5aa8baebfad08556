//! A device lost in the middle of a proof (a CUDA kernel fault): it leaves the
//! engine at once, and the circuit it was proving goes to another device
//! where its assignment can still give a, b and c (a witness-only circuit's
//! witness; a circuit synthesized directly hands its a, b and c to the
//! device's steps). Simulated devices, so that every case is exact.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use crossgroth::backend::simulated::SimulatedDevice;
use crossgroth::backend::{Backend, CpuBackend};
use crossgroth::engine::{Engine, EngineConfig, Job};
use crossgroth::groth16::{self, Parameters, Proof};
use crossgroth::synthesis::RecordedShape;
use crossgroth::Error;

fn config() -> EngineConfig {
    EngineConfig {
        synthesis_workers: 2,
        memory_budget: 1 << 30,
        ..EngineConfig::default()
    }
}

/// Jobs of one circuit each, seeds 0..count, submitted at once; witness-only
/// (on `shape`) where one is given.
fn jobs(
    engine: &Engine,
    params: &Arc<Parameters>,
    shape: Option<&Arc<RecordedShape>>,
    count: u64,
) -> Vec<Result<Vec<Proof>, Error>> {
    let handles: Vec<_> = (0..count)
        .map(|i| {
            let circuits = vec![spec("sha256:64").instance(i)];
            let (r, s) = groth16::draw_randomness(1, &mut rng(i));
            let job = match shape {
                Some(shape) => {
                    Job::recorded(format!("j{i}"), params.clone(), shape.clone(), circuits)
                }
                None => Job::new(format!("j{i}"), params.clone(), circuits),
            };
            engine.submit(job.with_randomness(r, s)).unwrap()
        })
        .collect();
    handles.into_iter().map(|h| h.wait()).collect()
}

/// A good device and `lost`, both taking matrices of `matrices` bytes (a
/// witness-only circuit's a, b and c are computed on the device where they
/// fit, else on the host).
fn two_devices(lost: SimulatedDevice, matrices: usize) -> Vec<Arc<dyn Backend>> {
    let good = SimulatedDevice::new(Duration::from_millis(20))
        .with_memory(8 << 30)
        .with_matrices(matrices)
        .with_id(0)
        .shared();
    let lost = lost
        .with_memory(8 << 30)
        .with_matrices(matrices)
        .with_id(1)
        .shared();
    vec![good, lost]
}

#[test]
fn a_circuit_whose_device_is_lost_is_proved_on_another_with_the_same_bytes() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let shape = Arc::new(RecordedShape::record(spec("sha256:64").blank()).unwrap().0);
    let cpu = Engine::start(config(), vec![Arc::new(CpuBackend)]).unwrap();
    let expected: Vec<_> = jobs(&cpu, &params, None, 6)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_drained(&cpu);
    let lost_at = || SimulatedDevice::lost_at(Duration::from_millis(1), 1);
    let lost_during = || SimulatedDevice::lost_during(Duration::from_millis(1), 1);
    // (case, device, matrices' bytes, jobs witness-only / also direct)
    let cases = [
        ("lost before its steps", lost_at(), 1 << 20, true),
        ("lost after its steps", lost_during(), 1 << 20, false),
        (
            "lost after a, b, c from the host",
            lost_during(),
            1 << 40,
            false,
        ),
    ];
    for (what, lost, matrices, also_direct) in cases {
        let engine = Engine::start(config(), two_devices(lost, matrices)).unwrap();
        engine.wait_ready();
        let shapes = if also_direct {
            vec![Some(&shape), None]
        } else {
            vec![Some(&shape)]
        };
        for shape in shapes {
            let proofs: Vec<_> = jobs(&engine, &params, shape, 6)
                .into_iter()
                .map(|r| r.unwrap_or_else(|e| panic!("{what}: a job failed: {e}")))
                .collect();
            let witness_only = shape.is_some();
            assert_eq!(proofs, expected, "{what}, witness-only {witness_only}");
        }
        assert_eq!(engine.status().out_of_service, vec![false, true], "{what}");
        assert_eq!(engine.devices_in_service(), 1);
        assert_drained(&engine);
    }
}

#[test]
fn a_circuit_that_gave_its_a_b_and_c_to_a_lost_device_fails_alone() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let lost = SimulatedDevice::lost_during(Duration::from_millis(1), 1);
    let engine = Engine::start(config(), two_devices(lost, 1 << 20)).unwrap();
    engine.wait_ready();
    let results = jobs(&engine, &params, None, 6);
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    assert!(
        failed[0].to_string().contains("device lost"),
        "{}",
        failed[0]
    );
    assert_eq!(engine.status().out_of_service, vec![false, true]);
    assert_drained(&engine);
}

#[test]
fn a_circuit_moves_once_and_a_lone_lost_device_fails_its_circuit() {
    let params = Arc::new(params_for(&spec("sha256:64"), 1));
    let shape = Arc::new(RecordedShape::record(spec("sha256:64").blank()).unwrap().0);
    // Two devices that are each lost at their first proof: the circuit moves
    // from the first to the second, and fails there rather than moving again.
    let devices: Vec<Arc<dyn Backend>> = (0..2)
        .map(|id| {
            SimulatedDevice::lost_during(Duration::from_millis(1), 1)
                .with_memory(8 << 30)
                .with_matrices(1 << 20)
                .with_id(id)
                .shared()
        })
        .collect();
    let engine = Engine::start(config(), devices).unwrap();
    engine.wait_ready();
    let results = jobs(&engine, &params, Some(&shape), 1);
    let e = results[0].as_ref().expect_err("both devices were lost");
    assert!(e.to_string().contains("device lost"), "{e}");
    assert_eq!(engine.status().out_of_service, vec![true, true]);
    assert!(!engine.has_device_in_service());
    assert_drained(&engine);

    // One device, lost: its circuit fails with the device's error.
    let lost = SimulatedDevice::lost_at(Duration::from_millis(1), 1).shared();
    let engine = Engine::start(config(), vec![lost]).unwrap();
    let results = jobs(&engine, &params, Some(&shape), 1);
    let e = results[0].as_ref().expect_err("the only device was lost");
    assert!(e.to_string().contains("device lost"), "{e}");
    assert_drained(&engine);
}

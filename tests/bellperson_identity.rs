//! crossgroth's proofs are byte-identical to bellperson 0.27's for the same circuit,
//! parameters and (r, s); parameter files cross between the two; every proof verifies
//! with both verifiers.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use common::*;
use crossgroth::circuits::CircuitSpec;
use crossgroth::groth16::{self, Parameters, Proof};
use crossgroth::synthesis::{synthesize, RecordedShape};
use crossgroth::Scalar;
use ff::Field;

fn bellperson_verifies(params: &BpParams, proof: &Proof, inputs: &[Scalar]) -> bool {
    let pvk = bellperson::groth16::prepare_verifying_key(&params.vk);
    let bp = bellperson::groth16::Proof::<blstrs::Bls12>::read(&proof.to_bytes()[..]).unwrap();
    bellperson::groth16::verify_proof(&pvk, &bp, inputs).unwrap()
}

/// Proves `spec` with both provers on crossgroth-generated parameters and compares.
fn same_bytes(spec_str: &str) {
    let spec = spec(spec_str);
    let params = params_for(&spec, 1);
    let bp_params = to_bellperson(&params);
    for seed in [2u64, 3] {
        let circuit = spec.instance(seed);
        let inputs = circuit.public_inputs();
        let (r, s) = random_rs(seed);
        let ours = groth16::create_proof(circuit.clone(), &params, r, s).unwrap();
        let theirs = bellperson::groth16::create_proof(circuit, &bp_params, r, s).unwrap();
        assert_eq!(
            ours.to_bytes().to_vec(),
            bp_proof_bytes(&theirs),
            "{spec_str} seed {seed}"
        );
        assert!(
            verifies(&params, &ours, &inputs),
            "{spec_str}: ours must verify"
        );
        assert!(
            bellperson_verifies(&bp_params, &ours, &inputs),
            "{spec_str}: bellperson must accept ours"
        );
    }
}

#[test]
fn cubic() {
    same_bytes("cubic");
}

#[test]
fn sha256_64_bytes() {
    same_bytes("sha256:64");
}

#[test]
fn sha256_512_bytes() {
    let spec = spec("sha256:512");
    let params = params_for(&spec, 1);
    let bp_params = to_bellperson(&params);
    let circuit = spec.instance(9);
    let (r, s) = random_rs(9);
    let ours = groth16::create_proof(circuit.clone(), &params, r, s).unwrap();
    let theirs = bellperson::groth16::create_proof(circuit.clone(), &bp_params, r, s).unwrap();
    assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs));
    assert!(verifies(&params, &ours, &circuit.public_inputs()));
}

#[test]
fn squaring_chain() {
    same_bytes("chain:12");
}

#[test]
fn several_public_inputs_and_sparse_densities() {
    same_bytes("multi:5");
    // The multi circuit must really leave aux variables out of A and B.
    let asg = synthesize(spec("multi:5").instance(1)).unwrap();
    assert!(asg.a_aux_density.count() < asg.aux.len());
    assert!(asg.b_aux_density.count() < asg.aux.len());
}

#[test]
fn batch_matches_bellperson_batch() {
    let spec = spec("sha256:64");
    let params = params_for(&spec, 4);
    let bp_params = to_bellperson(&params);
    let circuits: Vec<_> = (0..3).map(|i| spec.instance(100 + i)).collect();
    let (r, s) = groth16::draw_randomness(3, &mut rng(5));
    let ours =
        groth16::create_proof_batch(circuits.clone(), &params, r.clone(), s.clone()).unwrap();
    let theirs =
        bellperson::groth16::create_proof_batch(circuits.clone(), &bp_params, r, s).unwrap();
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            o.to_bytes().to_vec(),
            bp_proof_bytes(t),
            "batch element {i}"
        );
        assert!(verifies(&params, o, &circuits[i].public_inputs()));
    }
    let pvk = groth16::prepare_verifying_key(&params.vk);
    let inputs: Vec<_> = circuits.iter().map(|c| c.public_inputs()).collect();
    let refs: Vec<&Proof> = ours.iter().collect();
    assert!(groth16::verify_proofs_batch(&pvk, &mut rng(6), &refs, &inputs).unwrap());
    let mut wrong = inputs.clone();
    wrong[1][0] += Scalar::ONE;
    assert!(!groth16::verify_proofs_batch(&pvk, &mut rng(6), &refs, &wrong).unwrap());
}

#[test]
fn random_proof_draws_r_then_s_like_bellperson() {
    let spec = spec("cubic");
    let params = params_for(&spec, 7);
    let bp_params = to_bellperson(&params);
    let ours = groth16::create_random_proof(spec.instance(1), &params, &mut rng(8)).unwrap();
    let theirs =
        bellperson::groth16::create_random_proof(spec.instance(1), &bp_params, &mut rng(8))
            .unwrap();
    assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs));
    let circuits = vec![spec.instance(1), spec.instance(2)];
    let ours = groth16::create_random_proof_batch(circuits.clone(), &params, &mut rng(9)).unwrap();
    let theirs =
        bellperson::groth16::create_random_proof_batch(circuits, &bp_params, &mut rng(9)).unwrap();
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o.to_bytes().to_vec(), bp_proof_bytes(t));
    }
}

#[test]
fn parameters_cross_between_bellperson_and_crossgroth() {
    for s in ["cubic", "multi:2"] {
        let spec = spec(s);
        // bellperson writes, crossgroth reads and proves.
        let bp_params: BpParams =
            bellperson::groth16::generate_random_parameters(spec.blank(), &mut rng(10)).unwrap();
        let params = from_bellperson(&bp_params);
        let circuit = spec.instance(11);
        let (r, sv) = random_rs(11);
        let ours = groth16::create_proof(circuit.clone(), &params, r, sv).unwrap();
        let theirs = bellperson::groth16::create_proof(circuit.clone(), &bp_params, r, sv).unwrap();
        assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs), "{s}");
        assert!(verifies(&params, &ours, &circuit.public_inputs()));
        // crossgroth writes what bellperson wrote, byte for byte.
        let mut bp_bytes = vec![];
        bp_params.write(&mut bp_bytes).unwrap();
        assert_eq!(param_bytes(&params), bp_bytes);
    }
}

#[test]
fn recorded_mode_gives_identical_assignments_and_proofs() {
    for s in ["cubic", "sha256:64", "multi:3", "chain:10"] {
        let spec = spec(s);
        let (shape, first) = RecordedShape::record(spec.instance(1)).unwrap();
        assert_eq!(
            first.unwrap(),
            synthesize(spec.instance(1)).unwrap(),
            "{s}: recording run"
        );
        for seed in [2, 3] {
            let direct = synthesize(spec.instance(seed)).unwrap();
            let recorded = shape.synthesize(spec.instance(seed)).unwrap();
            assert_eq!(direct, recorded, "{s} seed {seed}");
        }
    }
    let spec = spec("sha256:64");
    let params = std::sync::Arc::new(params_for(&spec, 12));
    let prover = groth16::Prover::new(
        std::sync::Arc::new(crossgroth::backend::CpuBackend),
        params.clone(),
    )
    .unwrap();
    let (shape, _) = RecordedShape::record(spec.blank()).unwrap();
    let (r, s) = groth16::draw_randomness(2, &mut rng(13));
    let circuits = vec![spec.instance(5), spec.instance(6)];
    let recorded = prover
        .prove_recorded(&shape, circuits.clone(), &r, &s)
        .unwrap();
    let direct = prover.prove_batch(circuits, &r, &s).unwrap();
    assert_eq!(recorded, direct);
}

/// A circuit synthesized in parts, extended into the root when the constraint system
/// is extensible (as Filecoin's PoSt circuits do), sequentially otherwise.
#[derive(Clone)]
struct Parts(Vec<Scalar>);

fn part<CS: ConstraintSystem<Scalar>>(cs: &mut CS, x: Scalar) -> Result<(), SynthesisError> {
    let a = cs.alloc(|| "x", || Ok(x))?;
    let y = cs.alloc_input(|| "y", || Ok(x.square() + x))?;
    let sq = cs.alloc(|| "sq", || Ok(x.square()))?;
    cs.enforce(|| "sq", |lc| lc + a, |lc| lc + a, |lc| lc + sq);
    cs.enforce(|| "y", |lc| lc + sq + a, |lc| lc + CS::one(), |lc| lc + y);
    Ok(())
}

impl Circuit<Scalar> for Parts {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if CS::is_extensible() {
            for x in self.0 {
                let mut sub = CS::new();
                sub.alloc_input(|| "temporary one", || Ok(Scalar::ONE))?;
                part(&mut sub, x)?;
                cs.extend(&sub);
            }
        } else {
            for x in self.0 {
                part(cs, x)?;
            }
        }
        Ok(())
    }
}

#[test]
fn extensible_constraint_systems_match_bellperson() {
    let circuit = Parts(vec![
        Scalar::from(3u64),
        Scalar::from(5u64),
        Scalar::from(7u64),
    ]);
    let params = groth16::generate_random_parameters(circuit.clone(), &mut rng(14), None).unwrap();
    let bp_params = to_bellperson(&params);
    let (r, s) = random_rs(15);
    let ours = groth16::create_proof(circuit.clone(), &params, r, s).unwrap();
    let theirs = bellperson::groth16::create_proof(circuit.clone(), &bp_params, r, s).unwrap();
    assert_eq!(ours.to_bytes().to_vec(), bp_proof_bytes(&theirs));
    let inputs: Vec<Scalar> = [3u64, 5, 7]
        .iter()
        .map(|&x| Scalar::from(x * x + x))
        .collect();
    assert!(verifies(&params, &ours, &inputs));
    // The recorded (non-extensible) path gives the same assignment.
    let (shape, asg) = RecordedShape::record(circuit.clone()).unwrap();
    assert_eq!(asg.unwrap(), synthesize(circuit.clone()).unwrap());
    assert_eq!(
        shape.synthesize(circuit.clone()).unwrap(),
        synthesize(circuit).unwrap()
    );
}

#[test]
fn every_spec_parses_and_unknown_ones_fail() {
    for s in ["cubic", "sha256:64", "chain:10", "multi:3"] {
        assert_eq!(s.parse::<CircuitSpec>().unwrap().to_string(), s);
    }
    for s in [
        "", "cube", "sha256", "sha256:x", "chain:1", "chain:40", "multi:0",
    ] {
        assert!(s.parse::<CircuitSpec>().is_err(), "{s}");
    }
    let _ = Parameters::from_bytes(&[], false).unwrap_err();
}

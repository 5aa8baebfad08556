//! Bad input gets a clear, typed error — never a panic, never a huge allocation.

mod common;

use std::sync::Arc;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use common::*;
use crossgroth::backend::CpuBackend;
use crossgroth::groth16::{self, Parameters, Proof, Prover};
use crossgroth::synthesis::{log_domain, synthesize, RecordedShape};
use crossgroth::{Error, Scalar};
use ff::Field;

/// Byte offsets of the parts of a parameter file.
struct Layout {
    ic_len: usize,
    h_len: usize,
    h0: usize,
}

fn layout(params: &Parameters) -> Layout {
    let ic_len = 96 * 2 + 192 * 2 + 96 + 192;
    let h_len = ic_len + 4 + 96 * params.vk.ic.len();
    Layout {
        ic_len,
        h_len,
        h0: h_len + 4,
    }
}

fn cubic_params() -> (Parameters, Vec<u8>) {
    let params = params_for(&spec("cubic"), 1);
    let bytes = param_bytes(&params);
    (params, bytes)
}

fn read_err(bytes: &[u8]) -> String {
    match Parameters::from_bytes(bytes, true) {
        Ok(_) => panic!("bad parameters were accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn truncated_parameter_files() {
    let (_, bytes) = cubic_params();
    for cut in [0, 1, 95, 500, bytes.len() / 2, bytes.len() - 1] {
        let e = read_err(&bytes[..cut]);
        assert!(
            e.contains("truncated") || e.contains("remain"),
            "cut {cut}: {e}"
        );
    }
}

#[test]
fn length_fields_larger_than_the_file_allocate_nothing() {
    let (params, mut bytes) = cubic_params();
    let at = layout(&params).h_len;
    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let e = read_err(&bytes);
    assert!(
        e.contains("4294967295 points") && e.contains("remain"),
        "{e}"
    );
}

#[test]
fn trailing_bytes_are_refused() {
    let (_, mut bytes) = cubic_params();
    bytes.extend_from_slice(&[0, 0, 0]);
    assert!(read_err(&bytes).contains("3 trailing bytes"));
}

#[test]
fn corrupt_points() {
    let (params, bytes) = cubic_params();
    let at = layout(&params).h0;
    // A flipped coordinate byte takes the point off the curve.
    let mut b = bytes.clone();
    b[at + 50] ^= 1;
    assert!(read_err(&b).contains("h[0]"));
    // A coordinate above the field modulus is not canonical.
    let mut b = bytes.clone();
    b[at..at + 48].copy_from_slice(&[0x1f; 48]);
    assert!(read_err(&b).contains("not on the curve or not canonically encoded"));
}

/// A point on y² = x³ + 4 outside the prime-order subgroup.
fn off_subgroup_g1() -> [u8; 96] {
    use blst::*;
    for x in 1u64.. {
        // SAFETY: plain blst field arithmetic on local values.
        unsafe {
            let (mut fx, mut rhs, mut y, mut four) = (
                blst_fp::default(),
                blst_fp::default(),
                blst_fp::default(),
                blst_fp::default(),
            );
            blst_fp_from_uint64(&mut fx, [x, 0, 0, 0, 0, 0].as_ptr());
            blst_fp_from_uint64(&mut four, [4, 0, 0, 0, 0, 0].as_ptr());
            blst_fp_sqr(&mut rhs, &fx);
            blst_fp_mul(&mut rhs, &rhs, &fx);
            blst_fp_add(&mut rhs, &rhs, &four);
            if blst_fp_sqrt(&mut y, &rhs) {
                let p = blst_p1_affine { x: fx, y };
                if blst_p1_affine_on_curve(&p) && !blst_p1_affine_in_g1(&p) {
                    let mut out = [0u8; 96];
                    blst_p1_affine_serialize(out.as_mut_ptr(), &p);
                    return out;
                }
            }
        }
    }
    unreachable!()
}

#[test]
fn points_outside_the_subgroup() {
    let (params, mut bytes) = cubic_params();
    let at = layout(&params).h0;
    bytes[at..at + 96].copy_from_slice(&off_subgroup_g1());
    assert!(read_err(&bytes).contains("not in the prime-order subgroup"));
    // Without subgroup checks the file still reads (bellperson's unchecked mode).
    assert!(Parameters::from_bytes(&bytes, false).is_ok());
}

#[test]
fn identity_points_where_forbidden() {
    let (params, bytes) = cubic_params();
    let lay = layout(&params);
    let mut infinity = [0u8; 96];
    infinity[0] = 0x40;
    let mut b = bytes.clone();
    b[lay.h0..lay.h0 + 96].copy_from_slice(&infinity);
    assert!(read_err(&b).contains("the point at infinity"));
    // δ₁ is the fifth vk point.
    let mut b = bytes.clone();
    b[96 * 2 + 192 * 2..96 * 3 + 192 * 2].copy_from_slice(&infinity);
    assert!(matches!(
        Parameters::from_bytes(&b, true),
        Err(Error::IdentityDelta)
    ));
    let _ = lay.ic_len;
}

#[test]
fn parameters_for_another_circuit() {
    let params = Arc::new(params_for(&spec("multi:2"), 1));
    let prover = Prover::new(Arc::new(CpuBackend), params).unwrap();
    let (r, s) = random_rs(1);
    let e = prover.prove(spec("cubic").instance(1), r, s).unwrap_err();
    assert!(matches!(e, Error::ParamsMismatch { .. }), "{e}");
    // One point too many in h is caught too (bellperson ignores it).
    let mut p = params_for(&spec("cubic"), 2);
    let mut h = (*p.h.host().unwrap()).clone();
    h.push(h[0]);
    p.h = groth16::Query::new("h", h);
    let e = groth16::create_proof(spec("cubic").instance(1), &p, r, s).unwrap_err();
    assert!(
        matches!(e, Error::ParamsMismatch { vector: "h", .. }),
        "{e}"
    );
}

#[test]
fn domains_too_large_for_the_field() {
    assert!(log_domain(1 << 31).is_ok());
    assert!(matches!(
        log_domain((1 << 31) + 1),
        Err(Error::DomainTooLarge { log: 32, .. })
    ));
}

struct Unconstrained;
impl Circuit<Scalar> for Unconstrained {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let a = cs.alloc(|| "used", || Ok(Scalar::ONE))?;
        cs.alloc(|| "forgotten", || Ok(Scalar::ONE))?;
        cs.enforce(|| "a", |lc| lc + a, |lc| lc + a, |lc| lc + a);
        Ok(())
    }
}

#[test]
fn unconstrained_variables_at_setup() {
    let e = groth16::generate_random_parameters(Unconstrained, &mut rng(1), None).unwrap_err();
    assert!(
        matches!(e, Error::UnconstrainedVariable(ref v) if v == "aux 1"),
        "{e}"
    );
}

#[test]
fn batches_mixing_shapes() {
    let params = params_for(&spec("sha256:64"), 3);
    let circuits = vec![spec("sha256:64").instance(1), spec("sha256:55").instance(1)];
    let (r, s) = groth16::draw_randomness(2, &mut rng(1));
    let e = groth16::create_proof_batch(circuits, &params, r, s).unwrap_err();
    assert!(
        matches!(e, Error::BatchShapeMismatch { index: 1, .. }),
        "{e}"
    );
    let e = groth16::create_proof_batch::<crossgroth::circuits::BuiltinCircuit>(
        vec![],
        &params,
        vec![],
        vec![],
    )
    .unwrap_err();
    assert!(matches!(e, Error::EmptyBatch));
}

#[test]
fn wrong_public_input_count() {
    let params = params_for(&spec("multi:2"), 1);
    let c = spec("multi:2").instance(1);
    let inputs = c.public_inputs();
    let (r, s) = random_rs(2);
    let proof = groth16::create_proof(c, &params, r, s).unwrap();
    let pvk = groth16::prepare_verifying_key(&params.vk);
    assert!(groth16::verify_proof(&pvk, &proof, &inputs).unwrap());
    let e = groth16::verify_proof(&pvk, &proof, &inputs[..1]).unwrap_err();
    assert!(matches!(
        e,
        Error::PublicInputCount {
            expected: 2,
            found: 1
        }
    ));
    // A wrong value is a failed verification, not an error.
    let mut wrong = inputs.clone();
    wrong[0] += Scalar::ONE;
    assert!(!groth16::verify_proof(&pvk, &proof, &wrong).unwrap());
}

#[test]
fn proof_files_of_the_wrong_size_or_encoding() {
    let params = params_for(&spec("cubic"), 1);
    let (r, s) = random_rs(3);
    let proof = groth16::create_proof(spec("cubic").instance(1), &params, r, s).unwrap();
    let bytes = proof.to_bytes();
    assert_eq!(Proof::from_bytes(&bytes).unwrap(), proof);
    for len in [0, 191, 193] {
        let mut v = bytes.to_vec();
        v.resize(len, 0);
        assert!(Proof::from_bytes(&v)
            .unwrap_err()
            .to_string()
            .contains("a proof has 192"));
    }
    let mut v = bytes;
    v[0] &= 0x7f; // clear the compression flag of A
    assert!(Proof::from_bytes(&v)
        .unwrap_err()
        .to_string()
        .contains("point A"));
    let mut v = bytes;
    v[60] ^= 0xff;
    assert!(Proof::from_bytes(&v).is_err());
    let mut v = bytes;
    v[144] = 0xc0; // C as the identity
    v[145..].fill(0);
    assert!(Proof::from_bytes(&v)
        .unwrap_err()
        .to_string()
        .contains("identity"));
}

/// The cubic circuit with a wrong x³ value.
struct BadCubic;
impl Circuit<Scalar> for BadCubic {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
        let x2 = cs.alloc(|| "x2", || Ok(Scalar::from(9u64)))?;
        cs.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + x2);
        let mut ns = cs.namespace(|| "cube");
        let x3 = ns.alloc(|| "x3", || Ok(Scalar::from(28u64)))?;
        ns.enforce(|| "x2*x", |lc| lc + x2, |lc| lc + x, |lc| lc + x3);
        Ok(())
    }
}

#[test]
fn unsatisfied_witnesses_are_refused_and_named() {
    let params = groth16::generate_random_parameters(BadCubic, &mut rng(1), None).unwrap();
    let (r, s) = random_rs(1);
    let e = groth16::create_proof(BadCubic, &params, r, s).unwrap_err();
    assert!(matches!(e, Error::Unsatisfied { row: 1, .. }), "{e}");
    let prover = Prover::new(Arc::new(CpuBackend), Arc::new(params)).unwrap();
    let (shape, _) = RecordedShape::record(BadCubic).unwrap();
    let e = prover
        .prove_recorded(&shape, vec![BadCubic], &[r], &[s])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "unsatisfied constraint: row 1 (cube/x2*x) has a·b ≠ c"
    );
    // With the check off, the proof is made (as bellperson would) and fails to verify.
    let prover = prover.with_options(groth16::ProveOptions {
        check_witness: false,
    });
    let proof = prover.prove(BadCubic, r, s).unwrap();
    let pvk = groth16::prepare_verifying_key(&prover.params().vk);
    assert!(!groth16::verify_proof(&pvk, &proof, &[]).unwrap());
}

struct Panics;
impl Circuit<Scalar> for Panics {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        cs.alloc(|| "x", || Ok(Scalar::ONE))?;
        panic!("gadget bug");
    }
}

#[test]
fn circuits_that_panic() {
    let e = synthesize(Panics).unwrap_err();
    assert!(
        matches!(e, Error::CircuitPanicked(ref m) if m == "gadget bug"),
        "{e}"
    );
    assert!(matches!(
        RecordedShape::record(Panics),
        Err(Error::CircuitPanicked(_))
    ));
}

#[test]
fn recorded_shapes_detect_drift() {
    let (shape, _) = RecordedShape::record(spec("multi:2").instance(1)).unwrap();
    let e = shape.synthesize(spec("multi:3").instance(1)).unwrap_err();
    assert!(matches!(e, Error::ShapeDrift(_)), "{e}");
}

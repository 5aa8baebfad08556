//! The CPU backend's MSMs and H against plain definitions, on fresh random inputs and
//! edge cases: scalars 0, 1 and p−1, identity and repeated bases, all-zero and all-one
//! vectors, empty densities, sizes that are not powers of two.

mod common;

use std::sync::Arc;

use crossgroth::backend::{CpuBackend, Msm, MsmInput, MsmScalars, Placement, G1, G2};
use crossgroth::density::Density;
use crossgroth::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand_core::RngCore;

/// n distinct points: a random walk, normalized.
fn random_points<P: Curve + Group>(n: usize, rng: &mut impl RngCore) -> Vec<P::AffineRepr>
where
    P::AffineRepr: Default + Copy,
{
    let step = P::random(&mut *rng);
    let proj: Vec<P> = (0..n)
        .scan(P::random(&mut *rng), |acc, _| {
            *acc += step;
            Some(*acc)
        })
        .collect();
    let mut out = vec![P::AffineRepr::default(); n];
    P::batch_normalize(&proj, &mut out);
    out
}

fn random_g1(n: usize, rng: &mut impl RngCore) -> Vec<G1Affine> {
    random_points::<G1Projective>(n, rng)
}

fn random_g2(n: usize, rng: &mut impl RngCore) -> Vec<G2Affine> {
    random_points::<G2Projective>(n, rng)
}

/// Scalars mixing the edge values with random ones, like a Groth16 witness.
fn scalars(n: usize, rng: &mut impl RngCore) -> Vec<Scalar> {
    (0..n)
        .map(|_| match rng.next_u32() % 5 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            2 => -Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        })
        .collect()
}

/// Σ scalars·bases by the definition of [`MsmInput`].
fn naive<P: Group + std::ops::Mul<Scalar, Output = P>, A: Copy + Into<P>>(
    bases: &[A],
    input: &MsmInput<'_>,
) -> P {
    let mut acc = P::identity();
    let mut k = input.base_offset;
    for (i, s) in input.scalars.host("test").unwrap().iter().enumerate() {
        if input.density.is_none_or(|d| d.get(i)) {
            acc += bases[k].into() * *s;
            k += 1;
        }
    }
    acc
}

fn naive_g1(bases: &[G1Affine], input: &MsmInput<'_>) -> G1Projective {
    naive(bases, input)
}

fn naive_g2(bases: &[G2Affine], input: &MsmInput<'_>) -> G2Projective {
    naive(bases, input)
}

fn random_density(n: usize, rng: &mut impl RngCore) -> Density {
    let mut d = Density::new();
    for _ in 0..n {
        d.push(!rng.next_u32().is_multiple_of(3));
    }
    d
}

#[test]
fn g1_msm_matches_the_definition() {
    let mut rng = common::rng(1);
    let cpu = CpuBackend;
    for n in [0usize, 1, 2, 31, 33, 100, 1000, 5000, 9001] {
        let bases = Arc::new(random_g1(n + 10, &mut rng));
        let prepared = cpu
            .prepare_bases::<G1>(bases.clone(), Placement::PLAIN)
            .unwrap();
        let sc = scalars(n, &mut rng);
        let density = random_density(n, &mut rng);
        let inputs = [
            MsmInput::dense(&sc),
            MsmInput {
                scalars: MsmScalars::Host(&sc),
                density: Some(&density),
                base_offset: 7,
            },
        ];
        let got = cpu.msm(&prepared, &inputs).unwrap();
        for (g, input) in got.iter().zip(&inputs) {
            assert_eq!(
                g.to_affine(),
                naive_g1(&bases, input).to_affine(),
                "n = {n}"
            );
        }
    }
}

#[test]
fn g2_msm_matches_the_definition() {
    let mut rng = common::rng(2);
    let cpu = CpuBackend;
    for n in [0usize, 1, 17, 300, 4500] {
        let bases = Arc::new(random_g2(n + 3, &mut rng));
        let prepared = cpu
            .prepare_bases::<G2>(bases.clone(), Placement::PLAIN)
            .unwrap();
        let sc = scalars(n, &mut rng);
        let density = random_density(n, &mut rng);
        let inputs = [
            MsmInput::dense(&sc),
            MsmInput {
                scalars: MsmScalars::Host(&sc),
                density: Some(&density),
                base_offset: 3,
            },
        ];
        let got = cpu.msm(&prepared, &inputs).unwrap();
        for (g, input) in got.iter().zip(&inputs) {
            assert_eq!(
                g.to_affine(),
                naive_g2(&bases, input).to_affine(),
                "n = {n}"
            );
        }
    }
}

#[test]
fn msm_edge_cases() {
    let mut rng = common::rng(3);
    let cpu = CpuBackend;
    let n = 4200;
    let mut bases = random_g1(n, &mut rng);
    // Identity and repeated bases.
    bases[5] = G1Affine::default();
    bases[6] = bases[7];
    bases[4100] = bases[4101];
    bases[4102] = -bases[4103];
    let bases = Arc::new(bases);
    let prepared = cpu
        .prepare_bases::<G1>(bases.clone(), Placement::PLAIN)
        .unwrap();
    let cases: Vec<Vec<Scalar>> = vec![
        vec![Scalar::ZERO; n],
        vec![Scalar::ONE; n],
        vec![-Scalar::ONE; n],
        scalars(n, &mut rng),
    ];
    for sc in &cases {
        let got = cpu.msm(&prepared, &[MsmInput::dense(sc)]).unwrap()[0];
        assert_eq!(
            got.to_affine(),
            naive_g1(&bases, &MsmInput::dense(sc)).to_affine()
        );
    }
    // An empty density reads no base at all.
    let empty = Density::empty(n);
    let got = cpu
        .msm(
            &prepared,
            &[MsmInput {
                scalars: MsmScalars::Host(&cases[3]),
                density: Some(&empty),
                base_offset: n,
            }],
        )
        .unwrap()[0];
    assert_eq!(got, G1Projective::identity());
    // Too few bases is an error, not a panic.
    let full = Density::full(n);
    assert!(cpu
        .msm(
            &prepared,
            &[MsmInput {
                scalars: MsmScalars::Host(&cases[3]),
                density: Some(&full),
                base_offset: 1
            }]
        )
        .is_err());
    let short = Density::full(n - 1);
    assert!(cpu
        .msm(
            &prepared,
            &[MsmInput {
                scalars: MsmScalars::Host(&cases[3]),
                density: Some(&short),
                base_offset: 0
            }]
        )
        .is_err());
}

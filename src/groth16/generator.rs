//! Random parameter generation for development and tests. The toxic waste comes from
//! the caller's RNG and is forgotten afterwards, but nobody else contributed to it:
//! **parameters made here are insecure for production** (anyone who knew the RNG
//! state could forge proofs). Production parameters come from a ceremony.
//!
//! Same math as bellperson's generator, parallel throughout: the QAP polynomials are
//! evaluated at τ through Lagrange coefficients (an inverse NTT of τ's powers), and
//! each query point is a fixed-base multiplication from a precomputed table.

use std::sync::Arc;

use bellpepper_core::Circuit;
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;

use super::{affine_batch, qap, Parameters, VerifyingKey};
use crate::backend::cpu::ntt;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::synthesis::{log_domain, RecordedShape};
use crate::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

/// Called with (stage, done, total) as generation advances.
pub type SetupProgress<'a> = &'a (dyn Fn(&str, usize, usize) + Sync);

/// How a setup runs.
#[derive(Clone, Default)]
pub struct SetupOptions<'a> {
    /// Where the fixed-base multiplications (every query point) and the
    /// Lagrange NTT run: a backend whose device has setup kernels
    /// ([`Backend::has_setup_kernels`]; at Filecoin scale, hundreds of
    /// millions of products, which the host's cores would take most of an
    /// hour for), or None for the host's cores. The points are the same bit
    /// for bit either way.
    pub device: Option<Arc<dyn Backend>>,
    pub progress: Option<SetupProgress<'a>>,
}

impl SetupOptions<'_> {
    /// The backend that runs the products, where it has kernels for them.
    fn device(&self) -> Option<&dyn Backend> {
        self.device.as_deref().filter(|b| b.has_setup_kernels())
    }
}

/// Generates random (insecure) parameters for `circuit`'s shape.
pub fn generate_random_parameters<C: Circuit<Scalar>, R: RngCore>(
    circuit: C,
    rng: &mut R,
    progress: Option<SetupProgress<'_>>,
) -> Result<Parameters> {
    let options = SetupOptions {
        device: None,
        progress,
    };
    generate_random_parameters_with(circuit, rng, &options)
}

/// [`generate_random_parameters`] with its multiplications where `options` says.
pub fn generate_random_parameters_with<C: Circuit<Scalar>, R: RngCore>(
    circuit: C,
    rng: &mut R,
    options: &SetupOptions<'_>,
) -> Result<Parameters> {
    if let Some(p) = options.progress {
        p("recording the shape", 0, 6);
    }
    let (shape, _) = RecordedShape::record(circuit)?;
    generate_random_parameters_for_shape(&shape, rng, options)
}

/// Random (insecure) parameters for a recorded shape (a caller that records a
/// large circuit once uses the same shape for its witnesses too).
pub fn generate_random_parameters_for_shape<R: RngCore>(
    shape: &RecordedShape,
    rng: &mut R,
    options: &SetupOptions<'_>,
) -> Result<Parameters> {
    let nonzero = |rng: &mut R| loop {
        let x = Scalar::random(&mut *rng);
        if !bool::from(x.is_zero()) {
            return x;
        }
    };
    let g1 = G1Projective::random(&mut *rng);
    let g2 = G2Projective::random(&mut *rng);
    let alpha = nonzero(rng);
    let beta = nonzero(rng);
    let gamma = nonzero(rng);
    let delta = nonzero(rng);
    let tau = nonzero(rng);
    generate_parameters(shape, g1, g2, [alpha, beta, gamma, delta, tau], options)
}

/// A fixed-base table: d·2^(bits·w)·G for every window w of `bits` bits and digit
/// d. The device's kernel takes 8-bit windows (a table that stays in its L2
/// cache); the CPU takes 16-bit windows for large setups, half the additions a
/// product for a table of 96 MB (G1) that its caches cannot hold.
struct FixedBase<A> {
    table: Vec<A>,
    bits: usize,
}

/// Window bits of the fixed-base table for `device` and a domain of `m`: a
/// 16-bit table costs about a million additions to build, repaid from about
/// 2^18 products on.
fn window_bits(device: Option<&dyn Backend>, m: usize) -> usize {
    match device {
        None if m >= 1 << 18 => 16,
        _ => 8,
    }
}

macro_rules! fixed_base {
    ($proj:ty, $aff:ty, $raw:ty, $raw_proj:ty, $to_affine:path, $on_device:ident) => {
        impl FixedBase<$aff> {
            /// Affine copies of `p` with one inversion a batch: blst's batch
            /// conversion (identities stay identities); the group crate's
            /// default `batch_normalize`, which blstrs keeps, inverts each point.
            fn to_affine(p: &[$proj], q: &mut [$aff]) {
                assert_eq!(p.len(), q.len());
                if p.is_empty() {
                    return;
                }
                // blst walks a contiguous array when the second pointer is null.
                let points: [*const $raw_proj; 2] = [p.as_ptr().cast(), std::ptr::null()];
                // SAFETY: blstrs' projective and affine points are
                // repr(transparent) over blst's, and q holds p.len() of them.
                unsafe { $to_affine(q.as_mut_ptr().cast::<$raw>(), points.as_ptr(), p.len()) }
            }

            /// `bits` is 8 or 16 (a whole number of bytes dividing 256).
            fn new(base: $proj, bits: usize) -> Self {
                let digits = 1usize << bits;
                let windows: Vec<$proj> = (0..256 / bits)
                    .scan(base, |b, _| {
                        let cur = *b;
                        for _ in 0..bits {
                            *b = b.double();
                        }
                        Some(cur)
                    })
                    .collect();
                let proj: Vec<$proj> = windows
                    .par_iter()
                    .flat_map_iter(|w| {
                        (0..digits).scan(<$proj>::identity(), move |acc, _| {
                            let cur = *acc;
                            *acc += w;
                            Some(cur)
                        })
                    })
                    .collect();
                let mut table = vec![<$aff>::identity(); proj.len()];
                proj.par_chunks(1 << 14)
                    .zip(table.par_chunks_mut(1 << 14))
                    .for_each(|(p, t)| Self::to_affine(p, t));
                FixedBase { table, bits }
            }

            /// k·G for every k, on `device` (the host's cores where None).
            fn mul_all(
                &self,
                scalars: &[Scalar],
                device: Option<&dyn Backend>,
            ) -> Result<Vec<$aff>> {
                let mut out = identities::<$aff>(scalars.len());
                if let Some(dev) = device {
                    let failed = |message: String| Error::Backend {
                        backend: dev.name(),
                        message: format!("setup: {message}"),
                    };
                    dev.$on_device(&self.table, scalars, &mut out)
                        .ok_or_else(|| failed("this backend has no fixed-base kernels".into()))?
                        .map_err(|e| failed(e.to_string()))?;
                    return Ok(out);
                }
                out.par_chunks_mut(1 << 12)
                    .zip(scalars.par_chunks(1 << 12))
                    .for_each_init(affine_batch::Scratch::default, |scratch, (o, s)| {
                        affine_batch::products(&self.table, self.bits, s, o, scratch)
                    });
                Ok(out)
            }
        }
    };
}
fixed_base!(
    G1Projective,
    G1Affine,
    blst::blst_p1_affine,
    blst::blst_p1,
    blst::blst_p1s_to_affine,
    fixed_base_mul_g1
);
fixed_base!(
    G2Projective,
    G2Affine,
    blst::blst_p2_affine,
    blst::blst_p2,
    blst::blst_p2s_to_affine,
    fixed_base_mul_g2
);

/// n affine identities, from zeroed pages (blst's identity is all zero bytes), so
/// that the gigabytes of a large setup are touched by the threads that fill
/// them rather than by one memset.
fn identities<A: PrimeCurveAffine>(n: usize) -> Vec<A> {
    // SAFETY: blstrs' affine points are plain limbs whose all-zero value is the
    // identity (checked below).
    let out = unsafe { crate::zeroed::zeroed_vec::<A>(n) };
    debug_assert!(out.iter().all(|p| bool::from(p.is_identity())));
    out
}

/// Host bytes a setup of `shape` holds at its peak besides the parameters it
/// returns: τ's powers and their Lagrange coefficients, or the coefficients
/// and the queries' scalars (`qap`), whichever is more, and the fixed-base
/// tables. A caller that charges a memory budget for a setup charges this
/// with the parameters.
pub fn setup_scratch_bytes(shape: &RecordedShape, options: &SetupOptions<'_>) -> Result<usize> {
    let m = 1usize << log_domain(shape.num_rows())?;
    let scalars = m * std::mem::size_of::<Scalar>();
    let bits = window_bits(options.device(), m);
    let entries = (256 / bits) << bits;
    let tables = entries
        * (std::mem::size_of::<G1Affine>()
            + std::mem::size_of::<G2Affine>()
            + std::mem::size_of::<G2Projective>());
    Ok((2 * scalars).max(scalars + qap::scratch_bytes(shape)) + tables)
}

/// Parameters for `shape` from explicit toxic waste [α, β, γ, δ, τ] and generators.
pub(crate) fn generate_parameters(
    shape: &RecordedShape,
    g1: G1Projective,
    g2: G2Projective,
    [alpha, beta, gamma, delta, tau]: [Scalar; 5],
    options: &SetupOptions<'_>,
) -> Result<Parameters> {
    let device = options.device();
    let report = |stage: &str, done: usize, total: usize| {
        if let Some(p) = options.progress {
            p(stage, done, total)
        }
    };
    let log = log_domain(shape.num_rows())?;
    let m = 1usize << log;
    let gamma_inv = gamma.invert().unwrap();
    let delta_inv = delta.invert().unwrap();

    report("lagrange", 0, 6);
    let started = std::time::Instant::now();
    let taus = ntt::powers(tau, Scalar::ONE, m);
    let mut lagrange = taus.clone();
    match device {
        None => ntt::ntt(&mut lagrange, true)?,
        Some(dev) => dev.ntt(&mut lagrange, true)?,
    }
    log::info!(
        "setup of 2^{log}: τ's powers and Lagrange coefficients in {:.2} s",
        started.elapsed().as_secs_f64()
    );

    report("tables", 1, 6);
    let bits = window_bits(device, m);
    let t1 = FixedBase::<G1Affine>::new(g1, bits);
    let t2 = FixedBase::<G2Affine>::new(g2, bits);

    // H first: τ's powers become its scalars in place, and are gone before
    // the QAP's evaluations need the room.
    report("h", 2, 6);
    let z_over_delta = (tau.pow_vartime([m as u64]) - Scalar::ONE) * delta_inv;
    let mut h_scalars = taus;
    h_scalars.truncate(m - 1);
    h_scalars.par_iter_mut().for_each(|t| *t *= z_over_delta);
    let h = t1.mul_all(&h_scalars, device)?;
    drop(h_scalars);

    report("ic and l", 3, 6);
    let started = std::time::Instant::now();
    let qap::QueryScalars { a, b, mut abc } = qap::query_scalars(shape, lagrange, alpha, beta)?;
    log::info!(
        "setup of 2^{log}: the QAP at τ in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let ni = shape.num_inputs();
    abc[..ni].par_iter_mut().for_each(|x| *x *= gamma_inv);
    abc[ni..].par_iter_mut().for_each(|x| *x *= delta_inv);
    let ic = t1.mul_all(&abc[..ni], device)?;
    let l = t1.mul_all(&abc[ni..], device)?;
    drop(abc);

    report("a", 4, 6);
    let a = t1.mul_all(&a, device)?;
    report("b", 5, 6);
    let b_g1 = t1.mul_all(&b, device)?;
    let b_g2 = t2.mul_all(&b, device)?;
    drop(b);
    report("done", 6, 6);

    let vk = VerifyingKey {
        alpha_g1: (g1 * alpha).to_affine(),
        beta_g1: (g1 * beta).to_affine(),
        beta_g2: (g2 * beta).to_affine(),
        gamma_g2: (g2 * gamma).to_affine(),
        delta_g1: (g1 * delta).to_affine(),
        delta_g2: (g2 * delta).to_affine(),
        ic,
    };
    for (what, v) in [
        ("a", &a),
        ("b_g1", &b_g1),
        ("h", &h),
        ("l", &l),
        ("vk.ic", &vk.ic),
    ] {
        if let Some(i) = v.par_iter().position_any(|p| bool::from(p.is_identity())) {
            return Err(Error::Invalid(format!(
                "setup produced the identity in {what}[{i}] (an unlucky τ); run it again"
            )));
        }
    }
    Ok(Parameters {
        vk,
        h: super::Query::new("h", h),
        l: super::Query::new("l", l),
        a: super::Query::new("a", a),
        b_g1: super::Query::new("b_g1", b_g1),
        b_g2: super::Query::new("b_g2", b_g2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_points_are_identities() {
        assert!(identities::<G1Affine>(1000)
            .iter()
            .all(|p| bool::from(p.is_identity())));
        assert!(identities::<G2Affine>(1000)
            .iter()
            .all(|p| bool::from(p.is_identity())));
        assert!(identities::<G1Affine>(0).is_empty());
    }

    /// Both window sizes give k·G exactly, for the scalars at the edges of the
    /// digits (0, 1, −1, digits of all ones) and random ones.
    #[test]
    fn fixed_base_products_are_scalar_multiples() {
        use group::Group;
        use rand_core::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let mut scalars = vec![
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE,
            Scalar::from(0xffffu64),
            Scalar::from(0x1_0000u64),
            Scalar::from(u64::MAX),
        ];
        scalars.extend((0..20).map(|_| Scalar::random(&mut rng)));
        let (g1, g2) = (G1Projective::generator(), G2Projective::generator());
        for bits in [8, 16] {
            let t1 = FixedBase::<G1Affine>::new(g1, bits);
            let t2 = FixedBase::<G2Affine>::new(g2, bits);
            let p1 = t1.mul_all(&scalars, None).unwrap();
            let p2 = t2.mul_all(&scalars, None).unwrap();
            for (i, s) in scalars.iter().enumerate() {
                assert_eq!(p1[i], (g1 * s).to_affine(), "G1, {bits}-bit windows, {s:?}");
                assert_eq!(p2[i], (g2 * s).to_affine(), "G2, {bits}-bit windows, {s:?}");
            }
        }
    }

    /// The batch conversion equals each point's own, identities included, over
    /// more points than one of blst's inversion strides (1536 G1, 768 G2).
    #[test]
    fn batch_affine_equals_each_points_affine() {
        use group::Group;
        use rand_core::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(9);
        let n = 2000;
        let identity_at = |i: usize| i == 0 || i == 1 || i == 777 || i == 1536 || i == n - 1;
        let g1: Vec<G1Projective> = (0..n)
            .map(|i| match identity_at(i) {
                true => G1Projective::identity(),
                false => G1Projective::random(&mut rng),
            })
            .collect();
        let g2: Vec<G2Projective> = (0..n)
            .map(|i| match identity_at(i) {
                true => G2Projective::identity(),
                false => G2Projective::random(&mut rng),
            })
            .collect();
        for len in [0, 1, 2, 767, 768, 769, 1536, 1537, n] {
            let mut a1 = vec![G1Affine::generator(); len];
            FixedBase::<G1Affine>::to_affine(&g1[..len], &mut a1);
            let want: Vec<G1Affine> = g1[..len].iter().map(|p| p.to_affine()).collect();
            assert_eq!(a1, want, "G1, {len} points");
            let mut a2 = vec![G2Affine::generator(); len];
            FixedBase::<G2Affine>::to_affine(&g2[..len], &mut a2);
            let want: Vec<G2Affine> = g2[..len].iter().map(|p| p.to_affine()).collect();
            assert_eq!(a2, want, "G2, {len} points");
        }
    }
}

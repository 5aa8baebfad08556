//! crossgroth-cuda benchmarks, timed on the device with CUDA events
//! (criterion `iter_custom`). Without a CUDA device they print SKIPPED and exit.
//!
//! - g1_msm/{20,22,24}: G1 MSM of 2^k uniform random scalars, bases resident on
//!   the device, scalars (Montgomery form) uploaded from host memory inside the
//!   timed call, result back on the host.
//! - g1_msm_precomputed/{20,22,24}: the same with the bases as a table of
//!   precomputed copies (CudaDevice::upload with up to 64 copies: the shape the
//!   cost model picks), made before timing.
//! - ntt/{20,24}: forward NTT of 2^k elements already on the device.
//! - g2_msm/{18,20}: the same over G2.
//! - compute_h/{20,24}: the whole H computation, transfers included.
//! - fq_inverse/{fermat,divsteps}/20: 2^20 Fq inversions on resident data, one
//!   a thread, by a^(p - 2) and by Bernstein-Yang divsteps.
//! - g1_msm_26/{resident,streamed}: G1 MSM of 2^26 uniform scalars with the bases
//!   on the device, and with them in host memory, streamed in chunks by the MSM
//!   (only when CROSSGROTH_BENCH_MAX_LOG >= 26: 6 GiB of bases, 2 GiB of scalars).
//! - g1_msm_26_filecoin/resident: the same resident bases with a 32 GiB PoRep
//!   partition's scalar mix for L (51.4% zero, 47.3% one, 1.3% wider, as
//!   measured on a real partition's aux), the shape of Filecoin's L, A and B.
//! - g1_msm_26_table/{2x22,3x22,2x24}: the uniform scalars over tables of two or
//!   three copies for 22- or 24-bit windows: what larger windows gain, and what
//!   their bucket side costs, where only a few copies of the bases fit.
//!
//! CROSSGROTH_BENCH_MAX_LOG caps the sizes (default 24); the CROSSGROTH_CUDA_*
//! variables of tests/common/options_from_env.rs set the backend's options.

use std::time::Duration;

use blst::*;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use crossgroth_cuda::{
    host, Bases, CudaDevice, CudaError, Curve, InverseMethod, MsmOptions, G1, G2,
};
use rand::{Rng, RngCore, SeedableRng};

#[path = "../tests/common/options_from_env.rs"]
mod options_from_env;

/// Device time of `iters` runs of `f` (CUDA events on the backend's stream).
fn device_time<R>(
    gpu: &CudaDevice,
    iters: u64,
    mut f: impl FnMut(&CudaDevice) -> Result<R, CudaError>,
) -> Duration {
    (0..iters)
        .map(|_| gpu.time(&mut f).expect("timed call").1)
        .sum()
}

/// Device time of `iters` MSMs of `scalars` over `bases`.
fn time_msms<C: Curve>(
    gpu: &CudaDevice,
    bases: &Bases<C>,
    scalars: &[blst_fr],
    iters: u64,
) -> Duration {
    device_time(gpu, iters, |g| g.msm(bases, 0, scalars, None))
}

fn random_fr_mont(rng: &mut impl RngCore) -> blst_fr {
    // Any 256-bit value below r is the Montgomery form of some element.
    const R3: u64 = 0x73eda753299d7d48;
    loop {
        let l = [
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64() & (u64::MAX >> 1),
        ];
        if l[3] < R3 {
            return blst_fr { l };
        }
    }
}

fn random_bases(rng: &mut impl RngCore, n: usize) -> Vec<blst_p1_affine> {
    // 2^16 distinct points from a random walk, tiled (the scalars are random,
    // so tiling changes nothing in the work done).
    let distinct = n.min(1 << 16);
    let mut step = blst_p1::default();
    let mut acc = blst_p1::default();
    let mut s = [0u8; 32];
    rng.fill_bytes(&mut s);
    unsafe { blst_p1_mult(&mut step, blst_p1_generator(), s.as_ptr(), 255) };
    rng.fill_bytes(&mut s);
    unsafe { blst_p1_mult(&mut acc, blst_p1_generator(), s.as_ptr(), 255) };
    let mut jac = Vec::with_capacity(distinct);
    for _ in 0..distinct {
        unsafe { blst_p1_add_or_double(&mut acc, &acc, &step) };
        jac.push(acc);
    }
    let mut aff = vec![blst_p1_affine::default(); distinct];
    let ptrs = [jac.as_ptr(), std::ptr::null()];
    unsafe { blst_p1s_to_affine(aff.as_mut_ptr(), ptrs.as_ptr(), distinct) };
    (0..n).map(|i| aff[i % distinct]).collect()
}

fn benches(c: &mut Criterion) {
    let gpu = match CudaDevice::new(0, options_from_env::options_from_env()) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("!!!!!!!! CUDA BENCHMARKS SKIPPED: {e} !!!!!!!!");
            return;
        }
    };
    eprintln!("device: {:?}, module: {}", gpu.info(), gpu.module_kind());
    let max_log: u32 = std::env::var("CROSSGROTH_BENCH_MAX_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::thread_rng().gen());

    // ---------------------------------------------------------------- G1 MSM
    let logs: Vec<u32> = [20u32, 22, 24]
        .into_iter()
        .filter(|&l| l <= max_log)
        .collect();
    if let Some(&top) = logs.last() {
        let n = 1usize << top;
        let bases = random_bases(&mut rng, n);
        let d_bases = gpu.upload::<G1>(&bases, 1).expect("upload bases");
        let scalars: Vec<blst_fr> = (0..n).map(|_| random_fr_mont(&mut rng)).collect();
        let mut g = c.benchmark_group("g1_msm");
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(4));
        for &l in &logs {
            let s = &scalars[..1 << l];
            g.bench_with_input(BenchmarkId::from_parameter(l), &l, |b, _| {
                b.iter_custom(|iters| time_msms(&gpu, &d_bases, s, iters))
            });
        }
        g.finish();
        drop(d_bases);

        // The same on tables of precomputed copies, each of the shape the cost
        // model picks for its size (made before timing, as at parameter load).
        let mut g = c.benchmark_group("g1_msm_precomputed");
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(4));
        for &l in &logs {
            let t = std::time::Instant::now();
            let table = gpu
                .upload::<G1>(&bases[..1 << l], 64)
                .expect("upload table");
            eprintln!(
                "g1_msm_precomputed/{l}: table of (copies, c) = {:?} made in {:.2?}",
                table.copies(),
                t.elapsed()
            );
            let s = &scalars[..1 << l];
            g.bench_with_input(BenchmarkId::from_parameter(l), &l, |b, _| {
                b.iter_custom(|iters| time_msms(&gpu, &table, s, iters))
            });
        }
        g.finish();
    }

    // ---------------------------------------------------------------- G2 MSM
    let g2_logs: Vec<u32> = [18u32, 20].into_iter().filter(|&l| l <= max_log).collect();
    if let Some(&top) = g2_logs.last() {
        let n = 1usize << top;
        let distinct = n.min(1 << 14);
        let mut s = [0u8; 32];
        let mut step = blst_p2::default();
        let mut acc = blst_p2::default();
        rng.fill_bytes(&mut s);
        unsafe { blst_p2_mult(&mut step, blst_p2_generator(), s.as_ptr(), 255) };
        rng.fill_bytes(&mut s);
        unsafe { blst_p2_mult(&mut acc, blst_p2_generator(), s.as_ptr(), 255) };
        let mut jac = Vec::with_capacity(distinct);
        for _ in 0..distinct {
            unsafe { blst_p2_add_or_double(&mut acc, &acc, &step) };
            jac.push(acc);
        }
        let mut aff = vec![blst_p2_affine::default(); distinct];
        let ptrs = [jac.as_ptr(), std::ptr::null()];
        unsafe { blst_p2s_to_affine(aff.as_mut_ptr(), ptrs.as_ptr(), distinct) };
        let bases: Vec<blst_p2_affine> = (0..n).map(|i| aff[i % distinct]).collect();
        let d_bases = gpu.upload::<G2>(&bases, 1).expect("upload G2 bases");
        let scalars: Vec<blst_fr> = (0..n).map(|_| random_fr_mont(&mut rng)).collect();
        let mut g = c.benchmark_group("g2_msm");
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for &l in &g2_logs {
            let s = &scalars[..1 << l];
            g.bench_with_input(BenchmarkId::from_parameter(l), &l, |b, _| {
                b.iter_custom(|iters| time_msms(&gpu, &d_bases, s, iters))
            });
        }
        g.finish();
    }

    // ------------------------------------------------------------------- NTT
    let mut g = c.benchmark_group("ntt");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for l in [20u32, 24].into_iter().filter(|&l| l <= max_log) {
        let v: Vec<blst_fr> = (0..1usize << l).map(|_| random_fr_mont(&mut rng)).collect();
        let mut buf = gpu.upload_fr(&v).expect("upload");
        gpu.ntt_resident(&mut buf, l, false).expect("warm-up");
        g.bench_with_input(BenchmarkId::from_parameter(l), &l, |b, _| {
            b.iter_custom(|iters| device_time(&gpu, iters, |g| g.ntt_resident(&mut buf, l, false)))
        });
    }
    g.finish();

    // ------------------------------------------------------------ Fq inverse
    // 2^20 inversions, each element by its own thread, data resident: what one
    // inversion costs in throughput, Fermat against divsteps.
    let mut g = c.benchmark_group("fq_inverse");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    {
        let xs: Vec<blst_fp> = random_bases(&mut rng, 1 << 20)
            .iter()
            .map(|p| p.x)
            .collect();
        let mut buf = gpu.upload_fq(&xs).expect("upload");
        for (name, method) in [
            ("fermat", InverseMethod::Fermat),
            ("divsteps", InverseMethod::Divsteps),
        ] {
            gpu.fq_inverse_resident(&mut buf, method).expect("warm-up");
            g.bench_with_input(BenchmarkId::new(name, 20), &method, |b, &method| {
                b.iter_custom(|iters| {
                    device_time(&gpu, iters, |g| g.fq_inverse_resident(&mut buf, method))
                })
            });
        }
    }
    g.finish();

    // ------------------------------------------------------------- compute_h
    let mut g = c.benchmark_group("compute_h");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for l in [20u32, 24].into_iter().filter(|&l| l <= max_log) {
        let m = 1usize << l;
        let a: Vec<blst_fr> = (0..m - 5).map(|_| random_fr_mont(&mut rng)).collect();
        let b: Vec<blst_fr> = (0..m - 5).map(|_| random_fr_mont(&mut rng)).collect();
        let cc: Vec<blst_fr> = a.iter().zip(&b).map(|(x, y)| host::fr_mul(x, y)).collect();
        g.bench_with_input(BenchmarkId::from_parameter(l), &l, |bch, _| {
            bch.iter_custom(|iters| device_time(&gpu, iters, |g| g.compute_h(&a, &b, &cc, l)))
        });
    }
    g.finish();

    // ------------------------------------------------- G1 MSM 2^26, both placements
    if max_log >= 26 {
        let n = 1usize << 26;
        let bases = std::sync::Arc::new(random_bases(&mut rng, n));
        let scalars: Vec<blst_fr> = (0..n).map(|_| random_fr_mont(&mut rng)).collect();
        let mut g = c.benchmark_group("g1_msm_26");
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(8));
        let resident = gpu.upload::<G1>(&bases, 1).expect("upload bases");
        let streamed = gpu.host_bases::<G1>(bases.clone());
        eprintln!("g1_msm_26: streamed in chunks sized from the free device memory");
        for (label, d) in [("resident", &resident), ("streamed", &streamed)] {
            g.bench_function(label, |b| {
                b.iter_custom(|iters| time_msms(&gpu, d, &scalars, iters))
            });
        }
        // the streamed MSM at a chunk size that a 24 GB card would use
        let msm = gpu.options().msm;
        gpu.set_msm_options(MsmOptions {
            stream_chunk: Some(1 << 24),
            ..msm.clone()
        });
        g.bench_function("streamed_chunks_2^24", |b| {
            b.iter_custom(|iters| time_msms(&gpu, &streamed, &scalars, iters))
        });
        gpu.set_msm_options(msm);
        g.finish();

        let mixed: Vec<blst_fr> = (0..n).map(|_| filecoin_aux_scalar(&mut rng)).collect();
        let mut g = c.benchmark_group("g1_msm_26_filecoin");
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(8));
        g.bench_function("resident", |b| {
            b.iter_custom(|iters| time_msms(&gpu, &resident, &mixed, iters))
        });
        g.finish();
        drop((resident, streamed, mixed));

        // A dense MSM too large for the cost model's table (a dozen copies),
        // as H's of 2^27 terms is, could still have a copy or two more.
        let mut g = c.benchmark_group("g1_msm_26_table");
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(8));
        for (copies, bits) in [(2u32, 22u32), (3, 22), (2, 24)] {
            let made = std::time::Instant::now();
            let table = gpu
                .upload_with_shape::<G1>(&bases, copies, bits)
                .expect("upload table");
            eprintln!(
                "g1_msm_26_table/{copies}x{bits}: made in {:.2?}",
                made.elapsed()
            );
            g.bench_function(format!("{copies}x{bits}"), |b| {
                b.iter_custom(|iters| time_msms(&gpu, &table, &scalars, iters))
            });
        }
        g.finish();
    }
}

/// A scalar drawn as a 32 GiB PoRep partition's aux is, for its L MSM: 51.4%
/// zero, 47.3% one, 1.3% any other (Montgomery form).
fn filecoin_aux_scalar(rng: &mut impl Rng) -> blst_fr {
    let p: f64 = rng.gen();
    if p < 0.514 {
        blst_fr::default()
    } else if p < 0.514 + 0.473 {
        host::fr_from_u64(1)
    } else {
        random_fr_mont(rng)
    }
}

criterion_group!(cuda, benches);
criterion_main!(cuda);

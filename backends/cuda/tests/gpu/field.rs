//! Fq inversion on the device (both methods, in place and resident), and the
//! pipe probe's products on the multiplier's and the FP64 pipe.

use blst::blst_fp;
use crossgroth_cuda::{InverseMethod, PipeProbe};
use crossgroth_gpu_host::reference::*;

#[test]
fn fq_inverse_matches_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("fq_inverse_matches_blst");
    for &n in &[1usize, 127, 128, 129, (1 << 16) + 3] {
        let mut input = fq_edge_cases();
        input.extend((0..n).map(|_| fq_random(&mut rng)));
        let want: Vec<blst_fp> = input.iter().map(fq_inverse).collect();
        for method in [InverseMethod::Divsteps, InverseMethod::Fermat] {
            let mut got = input.clone();
            gpu.fq_inverse(&mut got, method).unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g.l,
                    w.l,
                    "{method:?}: 1 / {:x?} (element {i} of {})",
                    input[i].l,
                    input.len()
                );
            }
            eprintln!("ok Fq inverse {method:?}, {} elements", input.len());
        }
    }
    // resident: upload, invert twice (back to the input), download
    let input: Vec<blst_fp> = (0..(1usize << 18) + 1)
        .map(|_| fq_random(&mut rng))
        .collect();
    let mut buf = gpu.upload_fq(&input).unwrap();
    gpu.fq_inverse_resident(&mut buf, InverseMethod::Divsteps)
        .unwrap();
    gpu.fq_inverse_resident(&mut buf, InverseMethod::Divsteps)
        .unwrap();
    let mut back = vec![blst_fp::default(); input.len()];
    gpu.download_fq(&buf, &mut back).unwrap();
    assert!(
        back.iter().zip(&input).all(|(a, b)| a.l == b.l),
        "1 / (1 / x) != x on the device"
    );
    eprintln!("ok Fq inverse resident, {} elements twice", input.len());
}

/// The pipe probe's products on either pipe (fq_t on the multiplier's, fq_f64
/// on the FP64 pipe) are blst's: each element of a group of four becomes
/// itself times the group's first element to the power `rounds`.
#[test]
fn fq_pipe_probe_products_match_blst() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("fq_pipe_probe_products_match_blst");
    let mut input = fq_edge_cases();
    input.extend((0..(4 << 10) + 4).map(|_| fq_random(&mut rng)));
    input.truncate(input.len() / 4 * 4);
    let rounds = 7u32;
    let want: Vec<blst_fp> = input
        .chunks(4)
        .flat_map(|group| {
            group
                .iter()
                .map(|x| (0..rounds).fold(*x, |acc, _| fq_mul(&acc, &group[0])))
        })
        .collect();
    for fp64_chains in 0..=4u32 {
        let mut buf = gpu.upload_fq(&input).unwrap();
        let probe = PipeProbe {
            rounds,
            fq_products: true,
            fp64_chains,
            limb_products: 0,
        };
        gpu.fq_pipe_probe(&mut buf, probe).unwrap();
        let mut got = vec![blst_fp::default(); input.len()];
        gpu.download_fq(&buf, &mut got).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.l, w.l,
                "{fp64_chains} chains on FP64: element {i} ({:x?})",
                input[i].l
            );
        }
        eprintln!(
            "ok Fq pipe probe, {fp64_chains} of 4 chains on FP64, {} elements",
            input.len()
        );
    }
}

//! Fq inversion on the device (both methods, in place and resident).

use blst::blst_fp;
use crossgroth_cuda::InverseMethod;
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

//! A proof's witness and H kept on the device (`witness_h`, `msm_witness`):
//! the same H as `compute_h_from_witness` downloads, and MSMs read in place
//! equal to blst's over the host copies, on resident and streamed bases.

use std::sync::Arc;

use crossgroth_cuda::{CsrMatrix, CudaDevice, WitnessPart, AUX_COLUMN, G1};
use crossgroth_gpu_host::reference::*;

use crate::common::with_msm_options;

/// Row i: x_i · x_i = y (input 1), for `n` aux variables x; rows past the
/// first are unsatisfied unless x_i² = y.
struct Squares {
    row_start: Vec<usize>,
    ab_col: Vec<u32>,
    c_col: Vec<u32>,
    coeff: Vec<u32>,
}

impl Squares {
    fn new(n: usize) -> Self {
        Squares {
            row_start: (0..=n).collect(),
            ab_col: (0..n as u32).map(|i| i | AUX_COLUMN).collect(),
            c_col: vec![1; n],
            coeff: vec![0; n],
        }
    }

    fn upload(&self, gpu: &CudaDevice, n: usize) -> crossgroth_cuda::ConstraintMatrices {
        let ab = CsrMatrix {
            row_start: &self.row_start,
            col: &self.ab_col,
            coeff: &self.coeff,
        };
        let c = CsrMatrix {
            col: &self.c_col,
            ..ab
        };
        let table = [fr_one(), fr_minus_one()];
        gpu.upload_matrices([ab, ab, c], &table, 2, n)
            .expect("matrices")
    }
}

#[test]
fn a_kept_witness_gives_the_downloaded_h_and_its_msms() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("a_kept_witness_gives_the_downloaded_h_and_its_msms");
    let n = 3000;
    let log_m = 12;
    let shape = Squares::new(n);
    let matrices = shape.upload(gpu, n);
    let input = [fr_one(), fr_from_u64(9)];
    let aux = edge_scalars(&mut rng, n, 11);

    let kept = gpu
        .witness_h(&matrices, &input, &aux, log_m, false)
        .expect("witness_h")
        .expect("unchecked");
    let m = 1usize << log_m;
    assert_eq!(kept.len(WitnessPart::H), m - 1);
    assert_eq!(kept.len(WitnessPart::Aux), n);
    let mut h = vec![fr_zero(); m - 1];
    let found = gpu
        .compute_h_from_witness(&matrices, &input, &aux, log_m, false, &mut h)
        .expect("compute_h_from_witness");
    assert_eq!(found, None);

    // H in place against the downloaded H.
    let h_bases = random_bases::<G1>(&mut rng, m - 1);
    let resident = gpu.upload::<G1>(&h_bases, 1).unwrap();
    let got = gpu
        .msm_witness(&resident, 0, &kept, WitnessPart::H, None)
        .unwrap();
    assert!(
        point_eq::<G1>(&got, &msm::<G1>(&h_bases, &h, None)),
        "H MSM"
    );

    // Aux through a density, its bases after the inputs' (A's layout).
    let (words, included) = random_density(&mut rng, n, 0.6);
    let bases = random_bases::<G1>(&mut rng, 2 + included.len());
    let expected = msm::<G1>(&bases[2..], &aux, Some(&words));
    let resident = gpu.upload::<G1>(&bases, 1).unwrap();
    let got = gpu
        .msm_witness(&resident, 2, &kept, WitnessPart::Aux, Some(&words))
        .unwrap();
    assert!(point_eq::<G1>(&got, &expected), "resident aux MSM");
    let got = gpu
        .msm_witness(&resident, 0, &kept, WitnessPart::Input, None)
        .unwrap();
    assert!(
        point_eq::<G1>(&got, &msm::<G1>(&bases, &input, None)),
        "input MSM"
    );

    // The same on bases streamed from host memory, several chunks.
    with_msm_options(
        gpu,
        |o| o.stream_chunk = Some(700),
        || {
            let streamed = gpu.host_bases::<G1>(Arc::new(bases[2..].to_vec()));
            let got = gpu
                .msm_witness(&streamed, 0, &kept, WitnessPart::Aux, Some(&words))
                .unwrap();
            assert!(point_eq::<G1>(&got, &expected), "streamed aux MSM");
        },
    );
    // The witness is unchanged by the MSMs that read it.
    let again = gpu
        .msm_witness(&resident, 2, &kept, WitnessPart::Aux, Some(&words))
        .unwrap();
    assert!(point_eq::<G1>(&again, &expected), "aux read twice");
}

#[test]
fn a_checked_witness_names_its_first_unsatisfied_row() {
    let gpu = gpu_or_skip!();
    let n = 100;
    let matrices = Squares::new(n).upload(gpu, n);
    let input = [fr_one(), fr_from_u64(9)];
    let mut aux = vec![fr_from_u64(3); n];
    aux[37] = fr_from_u64(4);
    let found = gpu.witness_h(&matrices, &input, &aux, 7, true).unwrap();
    assert_eq!(found.err(), Some(37));
    aux[37] = fr_minus_one(); // (-1)² = 1 ≠ 9
    let found = gpu.witness_h(&matrices, &input, &aux, 7, true).unwrap();
    assert_eq!(found.err(), Some(37));
    aux[37] = fr_from_u64(3);
    assert!(gpu
        .witness_h(&matrices, &input, &aux, 7, true)
        .unwrap()
        .is_ok());
    // A witness of the wrong size is refused, not read past.
    assert!(gpu
        .witness_h(&matrices, &input, &aux[..99], 7, true)
        .is_err());
    assert!(gpu.witness_h(&matrices, &input, &aux, 6, true).is_err());
}

/// A witness staged from another thread while the device runs an MSM (through
/// the pinned buffers: large enough) gives what the same witness uploaded
/// with its H gives; a staged witness of the wrong shape is refused.
#[test]
fn a_staged_witness_gives_what_an_uploaded_one_gives() {
    let gpu = gpu_or_skip!();
    let mut rng = rng("a_staged_witness_gives_what_an_uploaded_one_gives");
    let n = 200_000;
    let log_m = 18;
    let matrices = Squares::new(n).upload(gpu, n);
    let input = [fr_one(), fr_from_u64(9)];
    let aux = edge_scalars(&mut rng, n, 11);
    let bases = random_bases::<G1>(&mut rng, 1 << log_m);
    let resident = gpu.upload::<G1>(&bases, 1).unwrap();
    let uploaded = gpu
        .witness_h(&matrices, &input, &aux, log_m, false)
        .unwrap()
        .unwrap();
    let staged = std::thread::scope(|s| {
        let staging = s.spawn(|| gpu.stage_witness(&matrices, &input, &aux));
        // The device is busy meanwhile.
        gpu.msm_witness(&resident, 0, &uploaded, WitnessPart::H, None)
            .unwrap();
        staging.join().unwrap().expect("stage_witness")
    });
    assert_eq!(staged.bytes(), (n + 2) * 32);
    let kept = gpu
        .witness_h_staged(&matrices, staged, log_m, false)
        .unwrap()
        .unwrap();
    for (part, first) in [
        (WitnessPart::H, 0),
        (WitnessPart::Aux, 2),
        (WitnessPart::Input, 0),
    ] {
        let want = gpu
            .msm_witness(&resident, first, &uploaded, part, None)
            .unwrap();
        let got = gpu
            .msm_witness(&resident, first, &kept, part, None)
            .unwrap();
        assert!(point_eq::<G1>(&got, &want), "{part:?}");
    }
    let other = Squares::new(n - 1).upload(gpu, n - 1);
    assert!(gpu.stage_witness(&other, &input, &aux).is_err());
}

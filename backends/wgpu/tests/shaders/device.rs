//! The backends themselves: building every field path, the adapter, bad
//! input.

use blst::blst_p1;
use crossgroth_gpu_host::reference::*;
use crossgroth_wgpu::{probe, Bases, WgpuDevice, WgpuError, G1, G2};

use crate::devices::{all_backends, backends, path, settings};

#[test]
fn backends_build() {
    let bs = all_backends();
    for b in bs.ok.iter().chain(&bs.g2_int64) {
        eprintln!("tested path: {} on {}", path(b), b.info());
    }
    assert!(bs.errors.is_empty(), "backend failures: {:#?}", bs.errors);
}

#[allow(dead_code)]
fn assert_send_sync<T: Send + Sync + 'static>() {}
#[allow(dead_code)]
fn api_types_are_send_sync() {
    assert_send_sync::<WgpuDevice>();
    assert_send_sync::<Bases<G1>>();
    assert_send_sync::<Bases<G2>>();
    assert_send_sync::<WgpuError>();
}

#[test]
fn adapter_and_errors() {
    settings();
    match probe() {
        Ok(list) => {
            for a in &list {
                eprintln!("adapter: {a:?}");
            }
        }
        Err(e) => eprintln!("probe: {e}"),
    }
    let Some(b) = backends().first() else { return };
    eprintln!("info: {}", b.info());
    // Bad input is an error, not a panic.
    let mut v = vec![fr_from_u64(1); 3];
    assert!(matches!(
        b.ntt(&mut v, 2, false),
        Err(WgpuError::InvalidInput(_))
    ));
    assert!(matches!(
        b.ntt(&mut v, 40, false),
        Err(WgpuError::InvalidInput(_))
    ));
    let bases = b
        .upload::<G1>(&random_bases::<G1>(&mut rng("adapter_and_errors"), 4))
        .unwrap();
    assert_eq!(bases.len(), 4);
    let s = vec![fr_from_u64(5); 5];
    assert!(matches!(
        b.msm(&bases, 0, &s, None),
        Err(WgpuError::InvalidInput(_))
    ));
    // density with more set bits than bases
    assert!(matches!(
        b.msm(&bases, 0, &s, Some(&[0x1f])),
        Err(WgpuError::InvalidInput(_))
    ));
    // density too short for the scalars
    let s100 = vec![fr_from_u64(5); 100];
    assert!(matches!(
        b.msm(&bases, 0, &s100, Some(&[1])),
        Err(WgpuError::InvalidInput(_))
    ));
    assert!(matches!(
        b.compute_h(&[fr_from_u64(1); 5], &[], &[], 2),
        Err(WgpuError::InvalidInput(_))
    ));
    // Too large for the adapter: an error, not a panic or an abort.
    assert!(b.ntt(&mut [], 27, false).is_err());
    // Empty inputs.
    assert!(point_eq::<G1>(
        &b.msm(&bases, 0, &[], None).unwrap(),
        &blst_p1::default()
    ));
    assert!(b.compute_h(&[], &[], &[], 0).unwrap().is_empty());
    let mut one = vec![fr_from_u64(9)];
    b.ntt(&mut one, 0, true).unwrap();
    assert_eq!(one[0].l, fr_from_u64(9).l);
}

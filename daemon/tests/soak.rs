//! A soak of `crossgroth serve`: 1,000 proofs of mixed kinds (WinningPoSt and
//! WindowPoSt, each checked by filecoin-proofs' verifier) from four clients at
//! once over a loopback socket, both parameter sets evicted every 50 proofs, the
//! process's resident memory read from /proc after every proof. It passes when
//! memory is flat: the mean of the last hundred samples within 5% (plus a few
//! MiB) of the first hundred, and the level after an eviction likewise.
//!
//! About 15 minutes on two cores, so not part of `cargo test`:
//! `cargo test --release -p crossgroth-daemon --test soak -- --ignored --nocapture`
//! (`CROSSGROTH_SOAK_PROOFS=N` for another count).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use common::*;
use crossgroth_daemon::pb;

fn mib(b: f64) -> f64 {
    b / (1 << 20) as f64
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len().max(1) as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a 15-minute soak: run with --ignored"]
async fn a_thousand_mixed_proofs_with_evictions_keep_memory_flat() {
    let total: usize = std::env::var("CROSSGROTH_SOAK_PROOFS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let (server, addr) = start(config()).await;
    let next = Arc::new(AtomicUsize::new(0));
    let samples = Arc::new(Mutex::new(Vec::with_capacity(total)));
    let after_evictions = Arc::new(Mutex::new(vec![]));
    let began = Instant::now();
    let mut clients = vec![];
    for _ in 0..4 {
        let (addr, next, samples, after_evictions) = (
            addr.clone(),
            next.clone(),
            samples.clone(),
            after_evictions.clone(),
        );
        clients.push(tokio::spawn(async move {
            let mut c = connect(&addr).await;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    return;
                }
                let (request, vanilla) = if i % 3 == 0 {
                    (winning(&format!("soak-{i}")), winning_request())
                } else {
                    (window(&format!("soak-{i}")), window_request())
                };
                let r = prove(&mut c, request).await;
                assert_eq!(
                    r.status,
                    JobStatus::Completed as i32,
                    "proof {i}: {}",
                    r.error_message
                );
                verify_post(vanilla, &r.proof);
                samples.lock().unwrap().push(rss_anon());
                if i % 50 == 49 {
                    for id in ["winning-2k", "wpost-2k"] {
                        c.evict_srs(pb::EvictSrsRequest {
                            circuit_id: id.into(),
                        })
                        .await
                        .unwrap();
                    }
                    after_evictions.lock().unwrap().push(rss_anon());
                }
                if i % 100 == 99 {
                    eprintln!(
                        "{} proofs in {:.0} s, resident {:.1} MiB",
                        i + 1,
                        began.elapsed().as_secs_f64(),
                        mib(rss_anon() as f64)
                    );
                }
            }
        }));
    }
    for c in clients {
        c.await.unwrap();
    }
    let samples = samples.lock().unwrap().clone();
    let evicted = after_evictions.lock().unwrap().clone();
    let window = (samples.len() / 10).clamp(1, 100);
    let first = mean(&samples[..window]);
    let last = mean(&samples[samples.len() - window..]);
    let k = (evicted.len() / 4).max(1);
    let first_evicted = mean(&evicted[..k]);
    let last_evicted = mean(&evicted[evicted.len() - k..]);
    let mut c = connect(&addr).await;
    let s = status(&mut c).await;
    eprintln!(
        "soak: {} proofs in {:.0} s; resident mean of the first {window} {:.1} MiB, of the last {window} {:.1} MiB \
         ({:+.1}%); after evictions {:.1} -> {:.1} MiB; {} completed, {} failed",
        samples.len(),
        began.elapsed().as_secs_f64(),
        mib(first),
        mib(last),
        (last / first - 1.0) * 100.0,
        mib(first_evicted),
        mib(last_evicted),
        s.total_proofs_completed,
        s.total_proofs_failed
    );
    assert_eq!(s.total_proofs_completed as usize, total);
    let slack = 4.0 * (1 << 20) as f64;
    assert!(
        last <= first * 1.05 + slack,
        "resident memory grew: {:.1} -> {:.1} MiB",
        mib(first),
        mib(last)
    );
    assert!(
        last_evicted <= first_evicted * 1.05 + slack,
        "resident memory after evictions grew: {:.1} -> {:.1} MiB",
        mib(first_evicted),
        mib(last_evicted)
    );
    server.shutdown().await.unwrap();
}

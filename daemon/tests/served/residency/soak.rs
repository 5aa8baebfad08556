//! A soak of `crossgroth serve`: 1,000 proofs of mixed kinds (WinningPoSt and
//! WindowPoSt, each checked by filecoin-proofs' verifier) from four clients at
//! once over a loopback socket, in rounds of 50; after each round both
//! parameter sets are evicted and, once the daemon is idle, the process's
//! resident memory is read from /proc. Those idle levels are what must stay
//! flat: the mean of the last hundred proofs' levels within 5% (plus a few MiB)
//! of the first hundred's. Resident memory read after every proof, with other
//! proofs in flight, is reported beside them (it swings with what is in flight).
//!
//! glibc keeps freed memory in per-thread arenas, and which arenas the
//! daemon's threads land on changes from round to round: idle levels then
//! swing by tens of MiB with no trend, and hide what a leak would add. Run it
//! with glibc limited to two arenas from the process's start (a `mallopt`
//! inside the test comes after the harness's threads have theirs), so that
//! the idle levels show the daemon's own memory; the least-squares slope it
//! reports is raised by a leak, not by the allocator's swings.
//!
//! About 30 minutes on two cores, so not part of `cargo test`:
//! `MALLOC_ARENA_MAX=2 cargo test --release -p crossgroth-daemon --test served -- --ignored --nocapture`
//! (it shares the served binary and runs alone in it)
//! (`CROSSGROTH_SOAK_PROOFS=N` for another count).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use crossgroth_daemon::pb;

/// Proofs between two evictions and idle readings.
const ROUND: usize = 50;
const CLIENTS: usize = 4;

fn mib(b: f64) -> f64 {
    b / (1 << 20) as f64
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len().max(1) as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a 30-minute soak: run with --ignored"]
async fn a_thousand_mixed_proofs_with_evictions_keep_memory_flat() {
    let _turn = crate::sole_turn().await;
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        eprintln!("soak: MALLOC_ARENA_MAX is not set: idle levels will swing with glibc's arenas");
    }
    let total: usize = std::env::var("CROSSGROTH_SOAK_PROOFS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    // Finished jobs are kept for retries up to max_finished by design: a small
    // table reaches its steady state in the first round, so that what the
    // idle levels compare is everything else.
    let mut cfg = config();
    cfg.max_finished = 50;
    let (server, addr) = start(cfg).await;
    let in_flight = Arc::new(Mutex::new(Vec::with_capacity(total)));
    let mut idle = vec![];
    let began = Instant::now();
    let mut c = connect(&addr).await;
    let mut done = 0;
    while done < total {
        let round = ROUND.min(total - done);
        let mut clients = vec![];
        for k in 0..CLIENTS {
            let (addr, in_flight) = (addr.clone(), in_flight.clone());
            let mine: Vec<usize> = (done..done + round).filter(|i| i % CLIENTS == k).collect();
            clients.push(tokio::spawn(async move {
                let mut c = connect(&addr).await;
                for i in mine {
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
                    in_flight.lock().unwrap().push(rss_anon());
                }
            }));
        }
        for t in clients {
            t.await.unwrap();
        }
        done += round;
        for id in ["winning-2k", "wpost-2k"] {
            c.evict_srs(pb::EvictSrsRequest {
                circuit_id: id.into(),
            })
            .await
            .unwrap();
        }
        // Idle: nothing queued or running, freed buffers handed back.
        loop {
            let s = status(&mut c).await;
            if s.queues
                .iter()
                .all(|q| q.pending == 0 && q.in_progress == 0)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        idle.push(rss_anon());
        if done % 100 == 0 {
            eprintln!(
                "{done} proofs in {:.0} s, idle resident {:.1} MiB",
                began.elapsed().as_secs_f64(),
                mib(*idle.last().unwrap() as f64)
            );
        }
    }
    let in_flight = in_flight.lock().unwrap().clone();
    let per_hundred = (100 / ROUND).max(1);
    let k = per_hundred.min(idle.len());
    let (first, last) = (mean(&idle[..k]), mean(&idle[idle.len() - k..]));
    let w = (in_flight.len() / 10).clamp(1, 100);
    let s = status(&mut c).await;
    eprintln!(
        "soak: {} proofs in {:.0} s; idle resident after the first hundred {:.1} MiB, after the last \
         {:.1} MiB ({:+.1}%), over all rounds {:.1}..{:.1} MiB; with proofs in flight: means of the first and \
         last {w} {:.1} and {:.1} MiB; {} completed, {} failed",
        in_flight.len(),
        began.elapsed().as_secs_f64(),
        mib(first),
        mib(last),
        (last / first - 1.0) * 100.0,
        mib(*idle.iter().min().unwrap() as f64),
        mib(*idle.iter().max().unwrap() as f64),
        mib(mean(&in_flight[..w])),
        mib(mean(&in_flight[in_flight.len() - w..])),
        s.total_proofs_completed,
        s.total_proofs_failed
    );
    // A leak grows with every proof; allocator state swings from round to
    // round. The least-squares slope of the idle levels tells the two apart.
    let levels: Vec<String> = idle
        .iter()
        .map(|b| format!("{:.1}", mib(*b as f64)))
        .collect();
    eprintln!(
        "soak: idle levels by round of {ROUND} (MiB): {}",
        levels.join(" ")
    );
    let xs: Vec<f64> = (1..=idle.len()).map(|r| (r * ROUND) as f64).collect();
    let (mx, my) = (xs.iter().sum::<f64>() / xs.len() as f64, mean(&idle));
    let cov: f64 = xs
        .iter()
        .zip(&idle)
        .map(|(x, y)| (x - mx) * (*y as f64 - my))
        .sum();
    let var: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    if var > 0.0 {
        eprintln!(
            "soak: idle level slope {:.1} KiB a proof over all rounds",
            cov / var / 1024.0
        );
    }
    assert_eq!(s.total_proofs_completed as usize, total);
    let slack = 4.0 * (1 << 20) as f64;
    assert!(
        last <= first * 1.05 + slack,
        "idle resident memory grew: {:.1} -> {:.1} MiB",
        mib(first),
        mib(last)
    );
    server.shutdown().await.unwrap();
}

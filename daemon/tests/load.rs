//! Load, bounded in count and time, on loopback only: 200 concurrent clients
//! (tokio tasks, each with its own connection) submit one 2 KiB PoSt each at once,
//! three in four a WindowPoSt (HIGH, the kind's default), one in four a WinningPoSt
//! (sent at NORMAL, so that the queue's bound applies to it: CRITICAL jobs pass
//! the bound; a 2 KiB WinningPoSt is the larger circuit, 66 challenges to 10),
//! into a daemon with `max_queued` = 6 and 2 jobs in flight, so that most are
//! refused.
//!
//! Shown, and asserted:
//! - every client's job either completes with a proof that filecoin-proofs-api
//!   verifies (each is checked here again: about ten proofs, milliseconds each;
//!   the daemon itself verified each before returning it) or is refused at once
//!   with RESOURCE_EXHAUSTED and a message saying the queue is full, its bound
//!   and to retry;
//! - resident memory of the whole process (this test's 200 clients included),
//!   VmHWM reset after the fixture was made and VmRSS sampled every 20 ms, stays
//!   under the budget (256 MiB) plus a margin of 128 MiB: the margin is for what
//!   the budget does not cover (the binary and its libraries, file-backed pages,
//!   thread stacks, the runtime's and the 400 sockets' buffers, the clients'
//!   copies of the requests);
//! - a CRITICAL WinningPoSt submitted while the queue is full is accepted and
//!   completes within `3 × alone + longest + 2 s`, where `alone` is its own
//!   latency on the idle daemon and `longest` the longest job of the load alone
//!   (a NORMAL WinningPoSt: the same circuit; on the cpu backend its MSMs are
//!   nearly all of it), both measured first in the same test, after a warm-up.
//!   It starts at once, past the queue and the jobs-in-flight bound, and goes
//!   first in the engine's queues, but work already past those queues is not
//!   preempted: it may wait for one lower-priority unit's synthesis, one device
//!   step and the finalizer's work ahead of it (together within one unit alone:
//!   `longest`); its own work shares the two cores with the two jobs in flight
//!   (the factor 3: a third of the machine that it had alone); the 2 s are
//!   slack for a two-core machine that other work shares;
//! - and it overtakes the queue: when it completes, at least half of the
//!   `max_queued` jobs that waited before it have not finished (first come, first
//!   served would have finished them all first).
//!
//! The figures are printed (completed, refused, peak RSS, CRITICAL latency alone
//! and under load, with its stage times).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use crossgroth_daemon::{pb, Budget};

const CLIENTS: usize = 200;
const MAX_QUEUED: usize = 6;
const JOBS_IN_FLIGHT: usize = 2;
const BUDGET: u64 = 256 << 20;
const MARGIN: u64 = 128 << 20;

/// A field of /proc/self/status in bytes ("VmRSS", "VmHWM").
fn proc_status(field: &str) -> u64 {
    crossgroth::engine::process_status_bytes(field).unwrap() as u64
}

fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}

async fn timed(c: &mut Client, r: pb::SubmitProofRequest) -> (Duration, pb::AwaitProofResponse) {
    let t = Instant::now();
    let r = prove(c, r).await;
    (t.elapsed(), r)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_clients_a_bounded_queue_and_a_critical_winning_post() {
    let began = Instant::now();
    fixture();
    let mut cfg = config();
    cfg.budget = Budget::Bytes(BUDGET);
    cfg.max_queued = MAX_QUEUED;
    cfg.jobs_in_flight = JOBS_IN_FLIGHT;
    let (server, addr) = start(cfg).await;
    let engine = server.daemon().engine().clone();
    let mut c = connect(&addr).await;

    // A WinningPoSt to warm up (parameters read, first proof), then each kind alone.
    let warm = prove(&mut c, winning("warm")).await;
    assert_eq!(
        warm.status,
        JobStatus::Completed as i32,
        "{}",
        warm.error_message
    );
    let (alone, alone_reply) = timed(&mut c, winning("alone")).await;
    assert_eq!(
        alone_reply.status,
        JobStatus::Completed as i32,
        "{}",
        alone_reply.error_message
    );
    let (window_alone, r) = timed(&mut c, window("window-alone")).await;
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    let longest = alone.max(window_alone);
    let bound = (JOBS_IN_FLIGHT as u32 + 1) * alone + longest + Duration::from_secs(2);
    let before = status(&mut c).await.total_proofs_completed;

    // Resident memory from here on: the peak reset (Linux: 5 to clear_refs) and sampled.
    let hwm_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_at_start = proc_status("VmRSS");
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Acquire) {
                peak = peak.max(proc_status("VmRSS"));
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        })
    };

    let load_began = Instant::now();
    let barrier = Arc::new(tokio::sync::Barrier::new(CLIENTS));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let addr = addr.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                let mut own = connect(&addr).await;
                let r = if i % 4 != 1 {
                    window(&format!("load-{i}"))
                } else {
                    let mut r = winning(&format!("load-{i}"));
                    r.priority = pb::Priority::Normal as i32;
                    r
                };
                barrier.wait().await;
                let reply = own.prove(pb::ProveRequest { submit: Some(r) }).await;
                (i, reply.map(|r| r.into_inner().result.unwrap()))
            })
        })
        .collect();

    // Into the full queue: a CRITICAL WinningPoSt on a connection of its own.
    let t = Instant::now();
    let full = loop {
        let s = status(&mut c).await;
        let pending: u32 = s.queues.iter().map(|q| q.pending).sum();
        if pending as usize >= MAX_QUEUED {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the queue never filled: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let mut critical_client = connect(&addr).await;
    let (under_load, critical) = timed(&mut critical_client, winning("critical")).await;
    let after = status(&mut c).await;
    let left: u32 = after.queues.iter().map(|q| q.pending + q.in_progress).sum();
    assert_eq!(
        critical.status,
        JobStatus::Completed as i32,
        "{}",
        critical.error_message
    );
    verify_post(winning_request(), &critical.proof);

    let mut completed = 0;
    let mut refused = 0;
    let mut verified = 0;
    let mut refusal = String::new();
    for task in clients {
        let (i, reply) = task.await.unwrap();
        match reply {
            Ok(r) => {
                assert_eq!(
                    r.status,
                    JobStatus::Completed as i32,
                    "client {i}: {}",
                    r.error_message
                );
                completed += 1;
                let p = if i % 4 != 1 {
                    window_request()
                } else {
                    winning_request()
                };
                verify_post(p, &r.proof);
                verified += 1;
            }
            Err(e) => {
                assert_eq!(e.code(), tonic::Code::ResourceExhausted, "client {i}: {e}");
                assert!(
                    e.message().contains("the queue is full")
                        && e.message()
                            .contains(&format!("daemon.max_queued = {MAX_QUEUED}"))
                        && e.message().contains("retry later"),
                    "client {i}: {e}"
                );
                refusal = e.message().to_string();
                refused += 1;
            }
        }
    }
    let load_time = load_began.elapsed();
    stop.store(true, Ordering::Release);
    let sampled_peak = sampler.join().unwrap();
    let hwm = proc_status("VmHWM");
    let peak = if hwm_reset {
        hwm.max(sampled_peak)
    } else {
        sampled_peak
    };

    let s = status(&mut c).await;
    assert_eq!(
        s.total_proofs_completed - before,
        completed + 1,
        "every accepted job proved"
    );
    assert_eq!(s.total_proofs_failed, 0);
    assert_eq!(completed + refused, CLIENTS as u64);
    assert!(
        refused > completed,
        "most are refused: {refused} of {CLIENTS}"
    );
    assert!(
        completed >= (MAX_QUEUED + JOBS_IN_FLIGHT) as u64,
        "at least a full queue's worth completes: {completed}"
    );
    wait_until(Duration::from_secs(10), "every charge returned", || {
        engine.status().memory.charged == 0
    })
    .await;

    eprintln!(
        "load: {CLIENTS} clients, max_queued {MAX_QUEUED}, {JOBS_IN_FLIGHT} jobs in flight: \
         {completed} completed ({verified} checked by filecoin-proofs-api here), {refused} refused \
         ({refusal:?}), in {:.1} s; queues (pending, in progress) when the CRITICAL job came: {:?}, \
         jobs not finished when it completed: {left}",
        load_time.as_secs_f64(),
        full.queues
            .iter()
            .map(|q| (q.proof_kind.as_str(), q.pending, q.in_progress))
            .collect::<Vec<_>>()
    );
    eprintln!(
        "load: resident memory peak {:.0} MiB (VmHWM {:.0} MiB{}, sampled VmRSS {:.0} MiB; {:.0} MiB at the start), \
         budget {:.0} MiB + margin {:.0} MiB",
        mib(peak),
        mib(hwm),
        if hwm_reset { ", reset before the load" } else { ", not reset: the whole run's, not asserted" },
        mib(sampled_peak),
        mib(rss_at_start),
        mib(BUDGET),
        mib(MARGIN)
    );
    eprintln!(
        "load: CRITICAL WinningPoSt alone {:.0} ms, under load {:.0} ms (bound {} × alone + longest {:.0} ms + 2 s = {:.0} ms; WindowPoSt alone {:.0} ms); test {:.1} s",
        alone.as_secs_f64() * 1e3,
        under_load.as_secs_f64() * 1e3,
        JOBS_IN_FLIGHT + 1,
        longest.as_secs_f64() * 1e3,
        bound.as_secs_f64() * 1e3,
        window_alone.as_secs_f64() * 1e3,
        began.elapsed().as_secs_f64()
    );
    let stages = |r: &pb::AwaitProofResponse| {
        format!(
            "queue {} ms, parameters {} ms, synthesis {} ms, device {} ms, total {} ms",
            r.queue_wait_ms, r.srs_load_ms, r.synthesis_ms, r.gpu_compute_ms, r.total_ms
        )
    };
    eprintln!(
        "load: CRITICAL stages alone: {}; under load: {}",
        stages(&alone_reply),
        stages(&critical)
    );
    assert!(
        peak <= BUDGET + MARGIN,
        "resident memory {:.0} MiB over the budget and margin",
        mib(peak)
    );
    assert!(
        left as usize >= MAX_QUEUED / 2,
        "the CRITICAL job did not overtake the queue: {left} jobs left"
    );
    assert!(
        under_load <= bound,
        "CRITICAL under load {under_load:?} over its bound {bound:?}"
    );
    server.shutdown().await.unwrap();
}

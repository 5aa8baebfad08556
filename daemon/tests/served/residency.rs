//! What the daemon keeps resident between jobs, measured from outside: the
//! process's anonymous resident memory read from /proc (not the daemon's own
//! counters), over a real loopback socket.
//!
//! - evict-and-reload cycles of a parameter set: resident memory back to its
//!   level after every eviction, `freed_bytes` what the set held;
//! - idle eviction: a set no job uses is evicted when another needs the room;
//! - several cold requests of one kind at once: one read of the set, and peak
//!   memory within the budget;
//! - a set evicted while a job holds it: the job finishes, and the memory comes
//!   back when it ends;
//! - the retry rule: the same request id with the same inputs is the same job,
//!   with other inputs a new job that proves them.
//!
//! Each test runs alone in the process ([`crate::sole_turn`]): each reads the
//! whole process's memory. The 30-minute soak (`soak.rs`, ignored) is one of
//! them.

mod soak;

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use crossgroth::backend::simulated::SimulatedDevice;
use crossgroth::backend::Backend;
use crossgroth_daemon::pb;
use crossgroth_filecoin::ProofKind;

/// Resident memory once the allocator has handed back what earlier tests of
/// this process freed, so that a level taken now is not lowered later.
fn settled_rss() -> u64 {
    let trimmed = || {
        // SAFETY: malloc_trim has no preconditions.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        unsafe {
            libc::malloc_trim(0);
        }
        rss_anon()
    };
    // A test before this one in the process may still be freeing its server
    // (threads ending, their last references dropped): a level read then
    // would sink later by more than the margins these tests allow, so wait
    // until six readings over half a second agree within 1 MiB (at most 10 s).
    let mut recent = std::collections::VecDeque::from([trimmed()]);
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        recent.push_back(trimmed());
        if recent.len() > 6 {
            recent.pop_front();
        }
        let (lo, hi) = (recent.iter().min(), recent.iter().max());
        if let (6, Some(&lo), Some(&hi)) = (recent.len(), lo, hi) {
            if hi - lo < 1 << 20 {
                return lo;
            }
        }
    }
    recent.iter().copied().min().unwrap_or(0)
}

fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}

/// The size of a kind's 2 KiB parameter file: about what the set holds.
fn set_file_bytes(kind: ProofKind) -> u64 {
    let p = crossgroth_filecoin::Registered::for_sector_size(2048)
        .unwrap()
        .params(kind)
        .unwrap();
    std::fs::metadata(fixture().params_dir.join(p.params_file()))
        .unwrap()
        .len()
}

async fn evict(c: &mut Client, circuit_id: &str) -> pb::EvictSrsResponse {
    c.evict_srs(pb::EvictSrsRequest {
        circuit_id: circuit_id.into(),
    })
    .await
    .unwrap()
    .into_inner()
}

fn loaded(s: &pb::GetStatusResponse, circuit_id: &str) -> Option<pb::SrsStatus> {
    s.loaded_srs
        .iter()
        .find(|l| l.circuit_id == circuit_id)
        .cloned()
}

/// The value of an unlabelled metric in Prometheus text.
fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} not in the metrics:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

async fn completed(c: &mut Client, r: pb::SubmitProofRequest) -> pb::AwaitProofResponse {
    let id = r.request_id.clone();
    let reply = prove(c, r).await;
    assert_eq!(
        reply.status,
        JobStatus::Completed as i32,
        "{id}: {}",
        reply.error_message
    );
    reply
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evict_and_reload_cycles_return_the_memory() {
    let _turn = crate::sole_turn().await;
    let set = set_file_bytes(ProofKind::WindowPoSt);
    let (server, addr) = start(config()).await;
    let mut c = connect(&addr).await;
    let first = completed(&mut c, window("cycle-0")).await;
    verify_post(window_request(), &first.proof);
    let held = loaded(&status(&mut c).await, "wpost-2k").expect("loaded after a proof");
    assert_eq!(held.ref_count, 0, "no job holds it");
    let ev = evict(&mut c, "wpost-2k").await;
    assert!(ev.was_loaded);
    assert!(
        ev.freed_bytes >= held.size_bytes,
        "freed {} of the {} held",
        ev.freed_bytes,
        held.size_bytes
    );
    assert!(loaded(&status(&mut c).await, "wpost-2k").is_none());
    let level = rss_anon();
    eprintln!(
        "window-post set: {:.1} MiB file, {:.1} MiB held, {:.1} MiB freed; level {:.1} MiB",
        mib(set),
        mib(held.size_bytes),
        mib(ev.freed_bytes),
        mib(level)
    );
    // Each cycle reads the set again and proves; eviction gives it all back.
    // Before the engine owned its sets, each cycle kept one more copy.
    let tolerance = set / 4 + (8 << 20);
    let mut after = vec![];
    for i in 1..=6 {
        let r = completed(&mut c, window(&format!("cycle-{i}"))).await;
        verify_post(window_request(), &r.proof);
        let with_set = rss_anon();
        let ev = evict(&mut c, "wpost-2k").await;
        assert!(ev.was_loaded && ev.freed_bytes >= set / 2, "{ev:?}");
        let now = rss_anon();
        eprintln!(
            "cycle {i}: {:.1} MiB with the set, {:.1} MiB after its eviction (freed_bytes {:.1} MiB)",
            mib(with_set),
            mib(now),
            mib(ev.freed_bytes)
        );
        after.push(now);
        assert!(
            now <= level + tolerance,
            "cycle {i}: {:.1} MiB resident after the eviction, level {:.1} MiB",
            mib(now),
            mib(level)
        );
    }
    let m = metrics(&mut c).await;
    assert_eq!(metric(&m, "crossgroth_srs_loads_total"), 7.0);
    assert_eq!(metric(&m, "crossgroth_srs_evictions_total"), 7.0);
    assert_eq!(metric(&m, "crossgroth_srs_loaded_bytes"), 0.0);
    // An eviction of what is not loaded frees nothing, and says so.
    let none = evict(&mut c, "wpost-2k").await;
    assert!(!none.was_loaded && none.freed_bytes == 0);
    server.shutdown().await.unwrap();
}

/// A set nobody uses is evicted when another needs the room: with a budget
/// that holds one set and a proof's work but not two sets, WinningPoSt and
/// WindowPoSt take turns, each evicting the other, and memory stays within
/// the budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_set_is_evicted_when_another_needs_the_room() {
    let _turn = crate::sole_turn().await;
    let winning_set = set_file_bytes(ProofKind::WinningPoSt);
    let window_set = set_file_bytes(ProofKind::WindowPoSt);
    let larger = winning_set.max(window_set);
    let smaller = winning_set.min(window_set);
    // Room for the larger set and an eighth of the smaller, not for both:
    // the process's level may drift by several MiB between this reading and
    // the daemon's (threads of earlier tests ending), and a budget midway
    // between one set and two left the drift too little room. The proof's
    // own work (about 3 MiB on the cpu backend) is admitted alone anyway,
    // and the peak is checked with a margin below.
    let level = settled_rss();
    let budget = level + larger + smaller / 8;
    let mut cfg = config();
    cfg.budget = crossgroth_daemon::Budget::Bytes(budget);
    cfg.eviction_min_idle = Duration::from_millis(200);
    cfg.jobs_in_flight = 1;
    let (server, addr) = start(cfg).await;
    let mut c = connect(&addr).await;
    let mut peak = 0;
    for i in 0..2 {
        let w = completed(&mut c, winning(&format!("idle-w{i}"))).await;
        verify_post(winning_request(), &w.proof);
        peak = peak.max(rss_anon());
        tokio::time::sleep(Duration::from_millis(300)).await;
        let p = completed(&mut c, window(&format!("idle-p{i}"))).await;
        verify_post(window_request(), &p.proof);
        peak = peak.max(rss_anon());
        tokio::time::sleep(Duration::from_millis(300)).await;
        let s = status(&mut c).await;
        assert!(
            loaded(&s, "winning-2k").is_none(),
            "round {i}: the idle WinningPoSt set was evicted for WindowPoSt's: {:?} \
             (resident {:.1} MiB, level {:.1} MiB, budget {:.1} MiB)",
            s.loaded_srs,
            mib(rss_anon()),
            mib(level),
            mib(budget)
        );
    }
    let m = metrics(&mut c).await;
    let evictions = metric(&m, "crossgroth_srs_evictions_total");
    // Two rounds load four sets: each after the first evicted the one before.
    assert!(evictions >= 3.0, "{evictions} evictions:\n{m}");
    eprintln!(
        "idle eviction: sets {:.1} + {:.1} MiB, budget {:.1} MiB, peak {:.1} MiB, {evictions} evictions",
        mib(winning_set),
        mib(window_set),
        mib(budget),
        mib(peak)
    );
    let margin = 16 << 20;
    assert!(
        peak <= budget + margin,
        "peak {:.1} MiB over the budget of {:.1} MiB",
        mib(peak),
        mib(budget)
    );
    server.shutdown().await.unwrap();
}

/// Four cold requests of one kind at once read the set once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cold_requests_at_once_read_the_set_once() {
    let _turn = crate::sole_turn().await;
    let set = set_file_bytes(ProofKind::WindowPoSt);
    let level = settled_rss();
    let budget = level + 2 * set + (64 << 20);
    let mut cfg = config();
    cfg.budget = crossgroth_daemon::Budget::Bytes(budget);
    let (server, addr) = start(cfg).await;
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sampler = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                peak.fetch_max(rss_anon(), std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let mut tasks = vec![];
    for i in 0..4 {
        let addr = addr.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = connect(&addr).await;
            completed(&mut c, window(&format!("cold-{i}"))).await
        }));
    }
    for t in tasks {
        verify_post(window_request(), &t.await.unwrap().proof);
    }
    sampler.abort();
    let mut c = connect(&addr).await;
    let m = metrics(&mut c).await;
    assert_eq!(
        metric(&m, "crossgroth_srs_loads_total"),
        1.0,
        "one read for four requests"
    );
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "four cold requests: set {:.1} MiB, budget {:.1} MiB, peak {:.1} MiB",
        mib(set),
        mib(budget),
        mib(peak)
    );
    assert!(peak <= budget + (16 << 20), "peak {:.1} MiB", mib(peak));
    server.shutdown().await.unwrap();
}

/// A set evicted while a job holds it is released when the job ends; the job
/// finishes with a valid proof.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_set_evicted_while_in_use_is_freed_when_its_job_ends() {
    let _turn = crate::sole_turn().await;
    let set = set_file_bytes(ProofKind::WindowPoSt);
    // The device holds each proof for 3 s: long enough to evict meanwhile.
    let device: Vec<Arc<dyn Backend>> = vec![SimulatedDevice::new(Duration::from_secs(3)).shared()];
    let (server, addr) = start_with(config(), device).await;
    let mut c = connect(&addr).await;
    let level = rss_anon();
    let job = c
        .submit_proof(window("held"))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let engine = server.daemon().engine().clone();
    wait_until(Duration::from_secs(60), "the job is on the device", || {
        engine.status().on_device[0].is_some()
    })
    .await;
    let s = status(&mut c).await;
    assert_eq!(loaded(&s, "wpost-2k").map(|l| l.ref_count), Some(1));
    let ev = evict(&mut c, "wpost-2k").await;
    assert!(ev.was_loaded);
    assert_eq!(
        ev.freed_bytes, 0,
        "a held set is released when its job ends"
    );
    assert!(loaded(&status(&mut c).await, "wpost-2k").is_some());
    let r = await_job(&mut c, &job).await;
    assert_eq!(r.status, JobStatus::Completed as i32, "{}", r.error_message);
    verify_post(window_request(), &r.proof);
    wait_until(Duration::from_secs(10), "the set is released", || {
        engine.resident_sets().is_empty()
    })
    .await;
    let after = rss_anon();
    eprintln!(
        "evicted while in use: level {:.1} MiB before the job, {:.1} MiB after it (set {:.1} MiB)",
        mib(level),
        mib(after),
        mib(set)
    );
    assert!(
        after <= level + set / 4 + (8 << 20),
        "{:.1} MiB after, {:.1} MiB before",
        mib(after),
        mib(level)
    );
    assert_eq!(engine.set_counts().evictions, 1);
    server.shutdown().await.unwrap();
}

/// The same request id names a job only with the same inputs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_with_other_inputs_is_a_new_job() {
    let _turn = crate::sole_turn().await;
    let (server, addr) = start(config()).await;
    let mut c = connect(&addr).await;
    let id = "wdpost-1000-0-[1 2 3 4 5 6 7 8]";
    let a = completed(&mut c, window(id)).await;
    verify_post(window_request(), &a.proof);
    // The same inputs again: the same job and proof.
    let again = completed(&mut c, window(id)).await;
    assert_eq!((&again.job_id, &again.proof), (&a.job_id, &a.proof));
    // The same id with other inputs (another kind's request): a new job, whose
    // proof is of what it asked.
    let other = completed(&mut c, winning(id)).await;
    assert_ne!(other.job_id, a.job_id);
    verify_post(winning_request(), &other.proof);
    assert!(!post_verifies(window_request(), &other.proof));
    // The same id with other vanilla proofs (one changed): a new job that
    // proves those, not the first proof handed back; here they are bad, so
    // it fails.
    let mut changed = window(id);
    let v = &mut changed.vanilla_proofs[0];
    let mid = v.len() / 2;
    v[mid] ^= 0x40;
    let failed = prove(&mut c, changed).await;
    assert_ne!(failed.job_id, a.job_id);
    assert_ne!(failed.proof, a.proof);
    if failed.status == JobStatus::Completed as i32 {
        // The flipped bit did not matter to the statement: a valid proof anyway.
        verify_post(window_request(), &failed.proof);
    }
    // The first job is still found by its id and inputs.
    let first = completed(&mut c, window(id)).await;
    assert_eq!(first.job_id, a.job_id);
    let s = status(&mut c).await;
    assert_eq!(
        s.total_proofs_completed + s.total_proofs_failed,
        3,
        "three jobs for three sets of inputs: {s:?}"
    );
    server.shutdown().await.unwrap();
}

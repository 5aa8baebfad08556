//! The device time of a thread's own submissions ([`crate::WgpuDevice::time`]).
//!
//! Each thread counts the GPU time (timestamp queries) of the submissions it
//! makes while it times a device, so that calls timed at once on one device
//! (an engine's partition beside another job's B_G2) neither reset nor stop
//! each other's count, as one count shared by the device's threads did.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

thread_local! {
    /// The clock this thread is timing and the nanoseconds counted so far.
    static TIMED: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

/// A device's clock: the key of the threads' counts of its submissions.
pub(crate) struct Clock {
    id: u64,
}

impl Clock {
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Clock {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Runs `f` with this thread's submissions to the device timed; returns
    /// its result and their GPU time in ns. A timing of the device already
    /// running on this thread (a nested call) counts this one's time too.
    pub fn timed<R>(&self, f: impl FnOnce() -> R) -> (R, u64) {
        let restore = Restore {
            outer: TIMED.replace(Some((self.id, 0))),
            id: self.id,
        };
        let r = f();
        let ns = self.so_far().unwrap_or(0);
        drop(restore);
        (r, ns)
    }

    /// Whether this thread is timing this device.
    pub fn is_timing(&self) -> bool {
        self.so_far().is_some()
    }

    /// The ns counted so far by this thread's timing of this device.
    pub fn so_far(&self) -> Option<u64> {
        TIMED
            .get()
            .filter(|&(id, _)| id == self.id)
            .map(|(_, ns)| ns)
    }

    /// Counts `ns` of GPU time of a submission this thread made, if it is
    /// timing this device.
    pub fn add(&self, ns: u64) {
        if let Some(so_far) = self.so_far() {
            TIMED.set(Some((self.id, so_far + ns)));
        }
    }
}

/// Puts back the timing a [`Clock::timed`] call found, with the call's time
/// added where it was of the same device; on unwinding too.
struct Restore {
    outer: Option<(u64, u64)>,
    id: u64,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let inner = TIMED
            .get()
            .filter(|&(id, _)| id == self.id)
            .map_or(0, |(_, ns)| ns);
        TIMED.set(match self.outer {
            Some((id, ns)) if id == self.id => Some((id, ns + inner)),
            outer => outer,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;

    #[test]
    fn each_thread_counts_its_own_submissions() {
        let clock = Clock::new();
        let barrier = std::sync::Barrier::new(2);
        std::thread::scope(|s| {
            let a = s.spawn(|| {
                clock.timed(|| {
                    clock.add(5);
                    barrier.wait(); // b times and finishes here
                    barrier.wait();
                    clock.add(7);
                })
            });
            let b = s.spawn(|| {
                barrier.wait();
                let got = clock.timed(|| clock.add(100));
                barrier.wait();
                got
            });
            assert_eq!(a.join().unwrap().1, 12);
            assert_eq!(b.join().unwrap().1, 100);
        });
        // untimed submissions count nowhere; a nested timing adds to its outer
        clock.add(3);
        assert!(!clock.is_timing());
        let other = Clock::new();
        let ((), ns) = clock.timed(|| {
            clock.add(1);
            let ((), inner) = clock.timed(|| clock.add(2));
            assert_eq!(inner, 2);
            let ((), elsewhere) = other.timed(|| {
                clock.add(50);
                other.add(4);
            });
            assert_eq!(elsewhere, 4);
            assert_eq!(clock.so_far(), Some(3));
        });
        assert_eq!(ns, 3);
    }
}

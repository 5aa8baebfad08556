//! `--lose-device D:AFTER`: a drill of a GPU lost in the middle of a run. Once
//! device D has finished AFTER circuits, its context is spoiled on purpose (a
//! trapping kernel on cuda), as an Xid or a kernel fault would spoil it; the
//! circuit it works on then fails there and goes to the other devices, and the
//! run goes on without D.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossgroth::backend::Backend;
use crossgroth::engine::Engine;

/// Which device to lose, and after how many of its circuits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoseDevice {
    pub device: usize,
    pub after: usize,
}

impl std::str::FromStr for LoseDevice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not DEVICE:AFTER (e.g. 1:3: device 1 after 3 circuits)");
        let (d, a) = s.split_once(':').ok_or_else(bad)?;
        Ok(LoseDevice {
            device: d.trim().parse().map_err(|_| bad())?,
            after: a.trim().parse().map_err(|_| bad())?,
        })
    }
}

/// Watches `engine` until the device has done its circuits (or `done` is
/// set), then faults it through `backend`, which must be that device's.
pub(super) fn run(
    engine: &Engine,
    backend: &Arc<dyn Backend>,
    lose: LoseDevice,
    done: &AtomicBool,
) {
    while !done.load(Ordering::Acquire) {
        let units = engine
            .status()
            .devices
            .get(lose.device)
            .map_or(0, |d| d.units);
        if units >= lose.after {
            let outcome = match backend.inject_fault_for_tests() {
                Ok(()) => "it ran without an error".to_string(),
                Err(e) => format!("{e}"),
            };
            println!(
                "drill: device {} ({}) faulted on purpose after {units} circuits: {outcome}",
                lose.device,
                backend.device()
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::LoseDevice;

    #[test]
    fn lose_device_parses_device_and_count() {
        assert_eq!(
            "1:3".parse::<LoseDevice>(),
            Ok(LoseDevice {
                device: 1,
                after: 3
            })
        );
        for bad in ["1", "a:3", "1:", ":3", "1:-2"] {
            let e = bad.parse::<LoseDevice>().unwrap_err();
            assert!(e.contains("DEVICE:AFTER"), "{bad}: {e}");
        }
    }
}

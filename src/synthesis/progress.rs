//! How much of its assignment the synthesis running on this thread has written,
//! in bytes. The engine's memory budget counts what a running synthesis has yet
//! to write from this, rather than its whole estimate on top of what is already
//! resident; a circuit run on other threads reports nothing, so the budget then
//! counts its whole estimate, which errs on the safe side.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Allocations between two reports: a thread-local lookup every 2^12
/// variables or rows costs nothing measurable.
pub(crate) const REPORT_EVERY: usize = 1 << 12;

thread_local! {
    static WRITTEN: RefCell<Option<Arc<AtomicUsize>>> = const { RefCell::new(None) };
}

/// Runs `f` with the syntheses it runs on this thread reporting their
/// written bytes into `written`.
pub fn reporting<R>(written: Arc<AtomicUsize>, f: impl FnOnce() -> R) -> R {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            WRITTEN.with(|w| *w.borrow_mut() = None);
        }
    }
    WRITTEN.with(|w| *w.borrow_mut() = Some(written));
    let _clear = Clear;
    f()
}

/// Reports that the synthesis on this thread has written `bytes` so far.
pub(crate) fn report(bytes: usize) {
    WRITTEN.with(|w| {
        if let Some(written) = &*w.borrow() {
            written.store(bytes, Ordering::Relaxed);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_only_inside_reporting() {
        let written = Arc::new(AtomicUsize::new(0));
        report(5);
        reporting(written.clone(), || report(7));
        report(9);
        assert_eq!(written.load(Ordering::Relaxed), 7);
    }
}

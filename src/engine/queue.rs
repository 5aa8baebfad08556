//! A bounded queue between two stages that hands out its highest-priority task
//! first, so that a CRITICAL proof's finishing steps pass the ones queued before it.

use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How often a waiting side looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

pub(crate) struct PriorityQueue<T> {
    heap: Mutex<BinaryHeap<T>>,
    cv: Condvar,
    capacity: usize,
}

impl<T: Ord> PriorityQueue<T> {
    pub fn new(capacity: usize) -> Self {
        PriorityQueue {
            heap: Mutex::new(BinaryHeap::new()),
            cv: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    /// Queues `task`, waiting while the queue is full; gives it back once `stop`
    /// is set.
    pub fn push(&self, task: T, stop: &AtomicBool) -> Result<(), T> {
        let mut heap = self.heap.lock().unwrap();
        while heap.len() >= self.capacity {
            if stop.load(Ordering::Acquire) {
                return Err(task);
            }
            heap = self.cv.wait_timeout(heap, STOP_POLL).unwrap().0;
        }
        heap.push(task);
        drop(heap);
        self.cv.notify_all();
        Ok(())
    }

    /// The highest-priority task, waiting for one; None once `stop` is set and
    /// the queue is empty.
    pub fn pop(&self, stop: &AtomicBool) -> Option<T> {
        let mut heap = self.heap.lock().unwrap();
        loop {
            if let Some(task) = heap.pop() {
                drop(heap);
                self.cv.notify_all();
                return Some(task);
            }
            if stop.load(Ordering::Acquire) {
                return None;
            }
            heap = self.cv.wait_timeout(heap, STOP_POLL).unwrap().0;
        }
    }

    pub fn len(&self) -> usize {
        self.heap.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn highest_first_bounded_and_stoppable() {
        let q = Arc::new(PriorityQueue::new(2));
        let stop = Arc::new(AtomicBool::new(false));
        q.push(1, &stop).unwrap();
        q.push(5, &stop).unwrap();
        // Full: a third push waits until a pop makes room.
        let (q2, stop2) = (q.clone(), stop.clone());
        let pusher = std::thread::spawn(move || q2.push(3, &stop2));
        assert_eq!(q.pop(&stop), Some(5));
        pusher.join().unwrap().unwrap();
        assert_eq!(q.pop(&stop), Some(3));
        assert_eq!(q.len(), 1);
        stop.store(true, Ordering::Release);
        // Stopped: what is queued still comes out, then None; a full queue refuses.
        q.push(7, &stop).unwrap();
        assert_eq!(q.push(8, &stop), Err(8));
        assert_eq!(q.pop(&stop), Some(7));
        assert_eq!(q.pop(&stop), Some(1));
        assert_eq!(q.pop(&stop), None);
    }
}

//! Per-phase device timings of the MSM and the H computation
//! ([`crate::CudaOptions::profile`]).

use std::sync::OnceLock;
use std::time::Instant;

use crate::CudaDevice;

/// Per-phase device timings, printed to stderr when the backend's options ask
/// for a profile (CUDA events between the phases; costs nothing otherwise).
pub(crate) struct Profiler<'a> {
    b: &'a CudaDevice,
    /// Each phase's end: its event on the stream and when the host enqueued it.
    marks: Vec<(
        std::borrow::Cow<'static, str>,
        cudarc::driver::CudaEvent,
        Instant,
    )>,
    on: bool,
    host_start: Instant,
    /// Host time before the first mark, by step (input checks, the wait for
    /// the device's lock): gaps between operations that no event can show.
    before: Vec<(&'static str, f64)>,
}

/// The host clock's origin for the profile lines' `at=` (the first profiled
/// operation of the process), so that gaps between operations show.
static EPOCH: OnceLock<Instant> = OnceLock::new();
impl<'a> Profiler<'a> {
    pub(crate) fn new(b: &'a CudaDevice) -> Self {
        let on = b.options.profile;
        let host_start = Instant::now();
        if on {
            EPOCH.get_or_init(|| host_start);
        }
        let mut p = Profiler {
            b,
            marks: Vec::new(),
            on,
            host_start,
            before: Vec::new(),
        };
        p.mark("start");
        p
    }

    /// A profiler whose operation was entered at `entered`, with the host's
    /// steps before the first mark (`steps`: each step's name and end), so
    /// that the line's `at=` is the entry and `before:` names the steps.
    pub(crate) fn entered(
        b: &'a CudaDevice,
        entered: Instant,
        steps: &[(&'static str, Instant)],
    ) -> Self {
        let mut p = Self::new(b);
        if !p.on {
            return p;
        }
        p.host_start = entered;
        let mut last = entered;
        for &(name, end) in steps {
            p.before
                .push((name, end.duration_since(last).as_secs_f64() * 1e3));
            last = end;
        }
        p
    }
    pub(crate) fn mark(&mut self, what: &'static str) {
        self.mark_named(what.into());
    }
    /// A phase of one of several passes ("p1.scatter"); of a single pass, the
    /// plain phase name.
    pub(crate) fn mark_pass(&mut self, pass: usize, passes: usize, what: &'static str) {
        if !self.on {
            return;
        }
        if passes == 1 {
            self.mark_named(what.into());
        } else {
            self.mark_named(format!("p{pass}.{what}").into());
        }
    }
    fn mark_named(&mut self, what: std::borrow::Cow<'static, str>) {
        if !self.on {
            return;
        }
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        if let Ok(e) = self.b.ctx.new_event(flags) {
            if e.record(&self.b.stream).is_ok() {
                self.marks.push((what, e, Instant::now()));
            }
        }
    }
    pub(crate) fn report(&self, title: &str) {
        if !self.on || self.marks.len() < 2 {
            return;
        }
        let mut line = format!("crossgroth-cuda profile {title}:");
        for w in self.marks.windows(2) {
            if let Ok(ms) = w[0].1.elapsed_ms(&w[1].1) {
                line += &format!(" {}={:.3}ms", w[1].0, ms);
            }
        }
        if let Ok(ms) = self.marks[0]
            .1
            .elapsed_ms(&self.marks[self.marks.len() - 1].1)
        {
            line += &format!(" total={ms:.3}ms");
        }
        // host clock: when the operation began (since the first profiled one)
        // and how long it took until this report, waits included
        let epoch = *EPOCH.get_or_init(|| self.host_start);
        line += &format!(
            " at={:.3}ms host={:.3}ms",
            self.host_start.duration_since(epoch).as_secs_f64() * 1e3,
            self.host_start.elapsed().as_secs_f64() * 1e3
        );
        // The host's time between the marks: a phase whose device time is
        // mostly host time (allocations, transfers from pageable memory,
        // waits for a lock) shows as large here too.
        if !self.before.is_empty() {
            line += " before:";
            for (name, ms) in &self.before {
                line += &format!(" {name}={ms:.1}");
            }
        }
        line += " enqueued:";
        for w in self.marks.windows(2) {
            let ms = w[1].2.duration_since(w[0].2).as_secs_f64() * 1e3;
            line += &format!(" {}={ms:.1}", w[1].0);
        }
        eprintln!("{line}");
    }
}

//! One submission of kernel launches and buffer operations: recorded in one
//! command encoder, submitted, and its reads mapped once it is done.
//!
//! [`Ctx::submit_steps`] returns as soon as the work is queued, so that a
//! caller can prepare its next submission (an MSM's next chunk of bases)
//! while the device runs this one; [`Submitted::finish`] then waits for this
//! submission alone, not for whatever other threads queued on the device
//! since.

use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

use crate::error::WgpuError;
use crate::gpu::{catch, Ctx, Job, Step};

/// Bytes of one launch's uniform parameters (`params` in gpu.rs).
const PARAMS_BYTES: u64 = 128;

/// Which of a submission's mappings are done: (mapping, outcome).
type Mapped = Arc<Mutex<Vec<(usize, Result<(), String>)>>>;

/// A submission whose device work may still be running, and the staging
/// buffers its reads and timestamps land in.
pub(crate) struct Submitted {
    what: String,
    index: wgpu::SubmissionIndex,
    /// Per read: its place in the caller's list, its staging buffer and its
    /// word count.
    reads: Vec<(usize, wgpu::Buffer, u64)>,
    timestamps: Option<wgpu::Buffer>,
    mapped: Mapped,
}

impl Ctx {
    /// Records the jobs in one command encoder (one compute pass each, in
    /// order), then the copies `reads` (buffer, word offset, word count), submits,
    /// waits and returns the words read.
    pub fn run(
        &self,
        what: &str,
        jobs: &[Job<'_>],
        reads: &[(&wgpu::Buffer, u64, u64)],
    ) -> Result<Vec<Vec<u32>>, WgpuError> {
        let mut out: Vec<Vec<u32>> = reads
            .iter()
            .map(|r| Vec::with_capacity(r.2 as usize))
            .collect();
        self.run_reading(what, jobs, reads, &mut |i, _, words| {
            out[i].extend_from_slice(words)
        })?;
        Ok(out)
    }

    /// [`Self::run`] handing read `i`'s words to `read(i, offset, words)`
    /// where they are mapped, instead of copying them into a vector first
    /// (gigabytes for an H): in one piece (offset 0) for a small read, in
    /// order a staging slot at a time for a large one, `offset` counting
    /// words from the read's start.
    pub fn run_reading(
        &self,
        what: &str,
        jobs: &[Job<'_>],
        reads: &[(&wgpu::Buffer, u64, u64)],
        read: &mut dyn FnMut(usize, u64, &[u32]),
    ) -> Result<(), WgpuError> {
        let steps: Vec<Step<'_>> = jobs.iter().map(|j| Step::Run(*j)).collect();
        self.run_steps(what, &steps, reads, read)
    }

    /// [`Self::run_reading`] of launches with buffer operations between
    /// them, all in one submission.
    pub fn run_steps(
        &self,
        what: &str,
        steps: &[Step<'_>],
        reads: &[(&wgpu::Buffer, u64, u64)],
        read: &mut dyn FnMut(usize, u64, &[u32]),
    ) -> Result<(), WgpuError> {
        // Large reads go through the read-back slots once the steps are done.
        let large = |n: u64| n * 4 >= self.staged_min;
        let small: Vec<(usize, (&wgpu::Buffer, u64, u64))> = reads
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, r)| !large(r.2))
            .collect();
        self.submit_indexed(what, steps, &small)?
            .finish(self, read)?;
        for (i, r) in reads.iter().enumerate().filter(|(_, r)| large(r.2)) {
            let take = &mut |at: u64, words: &[u32]| read(i, at, words);
            catch(what, || {
                self.downloads
                    .read(&self.device, &self.queue, *r, take, what)
            })??;
        }
        self.check(what)
    }

    /// Queues `steps` and copies of `reads` (buffer, word offset, word count;
    /// each read is staged whole, so keep them small) in one submission and
    /// returns without waiting for the device. Later writes and submissions
    /// run after it on the device, so the buffers it reads may be refilled
    /// for the next submission at once.
    pub fn submit_steps(
        &self,
        what: &str,
        steps: &[Step<'_>],
        reads: &[(&wgpu::Buffer, u64, u64)],
    ) -> Result<Submitted, WgpuError> {
        let reads: Vec<_> = reads.iter().copied().enumerate().collect();
        self.submit_indexed(what, steps, &reads)
    }

    fn submit_indexed(
        &self,
        what: &str,
        steps: &[Step<'_>],
        reads: &[(usize, (&wgpu::Buffer, u64, u64))],
    ) -> Result<Submitted, WgpuError> {
        self.check(what)?;
        let jobs: Vec<&Job<'_>> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Run(j) => Some(j),
                _ => None,
            })
            .collect();
        let mut pipes = Vec::with_capacity(jobs.len());
        for j in &jobs {
            pipes.push(self.pipeline(j.module, j.entry)?);
        }
        self.save_pipeline_cache();
        let timing = self.clock.is_timing() && self.timestamps && !jobs.is_empty();
        let submitted = catch(what, || -> Result<Submitted, WgpuError> {
            let mut enc = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
            let qs = timing.then(|| {
                self.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                })
            });
            let groups = self.bind_groups(&jobs, what)?;
            self.record(&mut enc, steps, &pipes, &groups, qs.as_ref())?;
            let mut staged = Vec::with_capacity(reads.len());
            for &(i, (b, off, n)) in reads {
                let s = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("readback"),
                    size: (n * 4).max(4).div_ceil(4) * 4,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                if n > 0 {
                    enc.copy_buffer_to_buffer(b, off * 4, &s, 0, n * 4);
                }
                staged.push((i, s, n));
            }
            let timestamps = qs.as_ref().map(|q| {
                let r = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("ts resolve"),
                    size: 16,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                let s = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("ts read"),
                    size: 16,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                enc.resolve_query_set(q, 0..2, &r, 0);
                enc.copy_buffer_to_buffer(&r, 0, &s, 0, 16);
                s
            });
            self.check(what)?;
            let index = self.queue.submit([enc.finish()]);
            self.check(what)?;
            let mapped: Mapped = Arc::new(Mutex::new(Vec::new()));
            let all = staged.iter().map(|(_, s, _)| s).chain(&timestamps);
            for (k, s) in all.enumerate() {
                let st = mapped.clone();
                s.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                    if let Ok(mut g) = st.lock() {
                        g.push((k, r.map_err(|e| e.to_string())));
                    }
                });
            }
            Ok(Submitted {
                what: what.to_string(),
                index,
                reads: staged,
                timestamps,
                mapped,
            })
        })??;
        self.check(what)?;
        Ok(submitted)
    }

    /// One bind group a job: its parameters (a slice of one uniform buffer
    /// for the whole submission, so that a submission of a hundred launches
    /// makes one mapped buffer, not a hundred) and its storage buffers.
    fn bind_groups(
        &self,
        jobs: &[&Job<'_>],
        what: &str,
    ) -> Result<Vec<wgpu::BindGroup>, WgpuError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let stride = PARAMS_BYTES.max(u64::from(self.limits.min_uniform_buffer_offset_alignment));
        let stride = stride.div_ceil(PARAMS_BYTES) * PARAMS_BYTES;
        let uniforms = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: stride * jobs.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM,
            mapped_at_creation: true,
        });
        {
            let mut v = uniforms
                .slice(..)
                .get_mapped_range_mut()
                .map_err(|e| WgpuError::gpu(what, format!("params mapping: {e}")))?;
            for (i, j) in jobs.iter().enumerate() {
                let at = i * stride as usize;
                v.slice(at..at + PARAMS_BYTES as usize)
                    .copy_from_slice(bytemuck::cast_slice(&j.params));
            }
        }
        uniforms.unmap();
        let groups = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let mut entries = vec![wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &uniforms,
                        offset: i as u64 * stride,
                        size: NonZeroU64::new(PARAMS_BYTES),
                    }),
                }];
                for k in 0..5 {
                    let b = j.bufs[k].unwrap_or(&self.dummies[k]);
                    entries.push(wgpu::BindGroupEntry {
                        binding: k as u32 + 1,
                        resource: b.as_entire_binding(),
                    });
                }
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(j.entry),
                    layout: &self.layout,
                    entries: &entries,
                })
            })
            .collect();
        Ok(groups)
    }

    /// The steps into `enc`: a compute pass a launch (timestamps at the first
    /// launch's start and the last's end), clears and copies between them.
    fn record(
        &self,
        enc: &mut wgpu::CommandEncoder,
        steps: &[Step<'_>],
        pipes: &[wgpu::ComputePipeline],
        groups: &[wgpu::BindGroup],
        qs: Option<&wgpu::QuerySet>,
    ) -> Result<(), WgpuError> {
        let maxdim = self.limits.max_compute_workgroups_per_dimension.max(1) as u64;
        let last = pipes.len().saturating_sub(1);
        let mut launched = 0;
        for step in steps {
            let j = match step {
                Step::Run(j) => j,
                Step::Clear(b) => {
                    enc.clear_buffer(b, 0, None);
                    continue;
                }
                Step::Copy {
                    src,
                    from,
                    dst,
                    at,
                    bytes,
                } => {
                    enc.copy_buffer_to_buffer(src, *from, dst, *at, *bytes);
                    continue;
                }
            };
            let i = launched;
            launched += 1;
            let wg = j.threads.div_ceil(64);
            if wg == 0 {
                continue;
            }
            let x = wg.min(maxdim);
            let y = wg.div_ceil(x);
            if y > maxdim {
                return Err(WgpuError::InvalidInput(format!(
                    "{}: {} invocations exceed the 2D dispatch limit",
                    j.entry, j.threads
                )));
            }
            let tw = qs
                .filter(|_| i == 0 || i == last)
                .map(|q| wgpu::ComputePassTimestampWrites {
                    query_set: q,
                    beginning_of_pass_write_index: (i == 0).then_some(0),
                    end_of_pass_write_index: (i == last).then_some(1),
                });
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(j.entry),
                timestamp_writes: tw,
            });
            pass.set_pipeline(&pipes[i]);
            pass.set_bind_group(0, &groups[i], &[]);
            pass.dispatch_workgroups(x as u32, y as u32, 1);
        }
        Ok(())
    }
}

impl Submitted {
    /// Waits for this submission, hands each read's words to
    /// `read(i, 0, words)` (`i`: its place in the reads given) and counts the
    /// submission's GPU time on the submitting thread's clock.
    pub fn finish(
        self,
        ctx: &Ctx,
        read: &mut dyn FnMut(usize, u64, &[u32]),
    ) -> Result<(), WgpuError> {
        let what = self.what.as_str();
        catch(what, || -> Result<(), WgpuError> {
            ctx.device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(self.index.clone()),
                    timeout: None,
                })
                .map_err(|e| WgpuError::gpu(what, format!("poll: {e}")))?;
            ctx.check(what)?;
            let expected = self.reads.len() + usize::from(self.timestamps.is_some());
            let mappings_done = || self.mapped.lock().map_or(0, |g| g.len());
            // A mapping the poll that saw the submission done did not yet
            // complete is caught by one more (staging.rs waits the same way).
            if mappings_done() != expected {
                ctx.device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .map_err(|e| WgpuError::gpu(what, format!("poll: {e}")))?;
            }
            let st = self
                .mapped
                .lock()
                .map_err(|_| WgpuError::gpu(what, "poisoned lock"))?
                .clone();
            if st.len() != expected {
                return Err(WgpuError::gpu(what, "buffer mapping did not complete"));
            }
            if let Some((_, Err(e))) = st.iter().find(|(_, r)| r.is_err()) {
                return Err(WgpuError::gpu(what, format!("map_async: {e}")));
            }
            for (i, s, n) in &self.reads {
                let v = s
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| WgpuError::gpu(what, format!("get_mapped_range: {e}")))?;
                let words: &[u32] = bytemuck::cast_slice(&v);
                read(*i, 0, &words[..*n as usize]);
                drop(v);
                s.unmap();
            }
            if let Some(s) = &self.timestamps {
                let v = s
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| WgpuError::gpu(what, format!("get_mapped_range: {e}")))?;
                let t: &[u64] = bytemuck::cast_slice(&v);
                let ticks = t[1].saturating_sub(t[0]);
                let ns = ticks as f64 * ctx.queue.get_timestamp_period() as f64;
                ctx.clock.add(ns as u64);
                drop(v);
                s.unmap();
            }
            Ok(())
        })??;
        ctx.check(what)
    }
}

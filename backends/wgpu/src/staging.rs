//! Large transfers between host and device through staging buffers kept for
//! the device's life, two for each direction. A fresh staging buffer the
//! size of each transfer (what `write_buffer` makes, and a read back did)
//! is gigabytes for a chunk of streamed bases, a, b, c or H, which the
//! driver maps and the OS zeroes before the copy can start; here the host
//! fills or reads one slot while the other's copy runs on the device.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::WgpuError;

/// Bytes of one staging slot at the most.
const SLOT_BYTES: u64 = 128 << 20;

/// Transfers of at least this many bytes go through the slots; smaller ones
/// through a buffer of their own, whose one allocation costs less than a
/// round trip.
const RING_MIN_BYTES: u64 = 32 << 20;

/// The slot size and the least transfer through the slots for a binding
/// limit of `binding` bytes: lowered with it, so that a backend whose limits
/// are lowered to test its chunks (lavapipe in CI) moves its vectors through
/// several slots too.
pub(crate) fn sizes(binding: u64) -> (u64, u64) {
    let slot = (binding / 4).max(1 << 12);
    let slot = (1u64 << slot.ilog2()).min(SLOT_BYTES);
    (slot, RING_MIN_BYTES.min(2 * slot))
}

/// Copies host bytes into a mapped slot.
pub(crate) type Fill = dyn Fn(wgpu::WriteOnly<'_, [u8]>, &[u8]);

const MAPPING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

struct Slot {
    buf: wgpu::Buffer,
    /// The submission of this slot's last copy; the slot is mapped (ready to
    /// fill) when None.
    copying: Option<wgpu::SubmissionIndex>,
}

/// A direction's two slots of `slot_bytes` each, made on its first large
/// transfer and kept.
struct Slots<T> {
    slot_bytes: u64,
    slots: Mutex<Vec<T>>,
}

impl<T> Slots<T> {
    fn new(slot_bytes: u64) -> Self {
        Slots {
            slot_bytes,
            slots: Mutex::new(Vec::new()),
        }
    }

    /// The slots, locked for one transfer; `make` makes them the first time.
    fn lock(
        &self,
        what: &str,
        make: impl FnOnce() -> [T; 2],
    ) -> Result<std::sync::MutexGuard<'_, Vec<T>>, WgpuError> {
        let mut slots = self
            .slots
            .lock()
            .map_err(|_| WgpuError::gpu(what, "poisoned staging lock"))?;
        if slots.is_empty() {
            slots.extend(make());
        }
        Ok(slots)
    }
}

/// The two upload slots, made on the first large write.
pub(crate) struct Uploader(Slots<Slot>);

impl Uploader {
    pub fn new(slot_bytes: u64) -> Self {
        Uploader(Slots::new(slot_bytes))
    }

    /// Writes `bytes` at the start of `dst` (ordered before later
    /// submissions), a slot at a time. `fill` copies host bytes into a
    /// mapped slot.
    pub fn write(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        dst: &wgpu::Buffer,
        bytes: &[u8],
        fill: &Fill,
        what: &str,
    ) -> Result<(), WgpuError> {
        let slot_bytes = self.0.slot_bytes;
        let mut slots = self.0.lock(what, || {
            let usage = wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC;
            slot_pair(device, "upload slot", slot_bytes, usage, true)
                .map(|buf| Slot { buf, copying: None })
        })?;
        for (k, piece) in bytes.chunks(slot_bytes as usize).enumerate() {
            let slot = &mut slots[k % 2];
            if let Some(index) = slot.copying.take() {
                remap(device, &slot.buf, index, what)?;
            }
            let len = piece.len() as u64;
            {
                let mut view = slot
                    .buf
                    .get_mapped_range_mut(..len)
                    .map_err(|e| WgpuError::gpu(what, format!("upload slot: {e}")))?;
                fill(view.slice(..), piece);
            }
            slot.buf.unmap();
            let mut enc = device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
            let at = k as u64 * slot_bytes;
            enc.copy_buffer_to_buffer(&slot.buf, 0, dst, at, len);
            slot.copying = Some(queue.submit([enc.finish()]));
        }
        Ok(())
    }
}

/// Maps `buf` for writing again once its copy (submission `index`) is done.
fn remap(
    device: &wgpu::Device,
    buf: &wgpu::Buffer,
    index: wgpu::SubmissionIndex,
    what: &str,
) -> Result<(), WgpuError> {
    let state = map(buf, wgpu::MapMode::Write, buf.size());
    wait_mapped(device, index, &state, what)
}

/// Two staging buffers of `bytes` each.
fn slot_pair(
    device: &wgpu::Device,
    label: &str,
    bytes: u64,
    usage: wgpu::BufferUsages,
    mapped_at_creation: bool,
) -> [wgpu::Buffer; 2] {
    [(); 2].map(|_| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage,
            mapped_at_creation,
        })
    })
}

/// Asks for `buf`'s first `len` bytes to be mapped once its copies are
/// done; the state says when (MAPPING, then MAPPED or FAILED).
fn map(buf: &wgpu::Buffer, mode: wgpu::MapMode, len: u64) -> Arc<AtomicU8> {
    let state = Arc::new(AtomicU8::new(MAPPING));
    let s = state.clone();
    buf.map_async(mode, ..len, move |r| {
        s.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::SeqCst);
    });
    state
}

/// The two read-back slots, made on the first large read.
pub(crate) struct Downloader(Slots<wgpu::Buffer>);

/// A slot's copy in flight: its piece, submission and mapping state.
struct InFlight {
    piece: u64,
    slot: usize,
    index: wgpu::SubmissionIndex,
    state: Arc<AtomicU8>,
}

impl Downloader {
    pub fn new(slot_bytes: u64) -> Self {
        Downloader(Slots::new(slot_bytes))
    }

    /// Reads `words` u32 words of `src` from word `at` (after every earlier
    /// submission), handing them to `take(offset, words)` a slot at a time,
    /// in order, `offset` counted in words from `at`. A slot holds a power of
    /// two of words, so a vector of 8-word elements is never split.
    pub fn read(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        (src, at, words): (&wgpu::Buffer, u64, u64),
        take: &mut dyn FnMut(u64, &[u32]),
        what: &str,
    ) -> Result<(), WgpuError> {
        let slot_bytes = self.0.slot_bytes;
        let slots = self.0.lock(what, || {
            let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
            slot_pair(device, "read-back slot", slot_bytes, usage, false)
        })?;
        let per = slot_bytes / 4;
        let pieces = words.div_ceil(per);
        let len = |piece: u64| (words - piece * per).min(per) * 4;
        let start = |piece: u64, slot: usize| {
            let buf = &slots[slot];
            let mut enc = device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
            enc.copy_buffer_to_buffer(src, (at + piece * per) * 4, buf, 0, len(piece));
            let index = queue.submit([enc.finish()]);
            let state = map(buf, wgpu::MapMode::Read, len(piece));
            InFlight {
                piece,
                slot,
                index,
                state,
            }
        };
        let mut queued: std::collections::VecDeque<InFlight> =
            (0..pieces.min(2)).map(|k| start(k, k as usize)).collect();
        while let Some(f) = queued.pop_front() {
            wait_mapped(device, f.index, &f.state, what)?;
            let buf = &slots[f.slot];
            {
                let view = buf
                    .get_mapped_range(..len(f.piece))
                    .map_err(|e| WgpuError::gpu(what, format!("read-back slot: {e}")))?;
                take(f.piece * per, bytemuck::cast_slice(&view));
            }
            buf.unmap();
            if f.piece + 2 < pieces {
                queued.push_back(start(f.piece + 2, f.slot));
            }
        }
        Ok(())
    }
}

/// Waits for submission `index` and the mapping that follows it.
fn wait_mapped(
    device: &wgpu::Device,
    index: wgpu::SubmissionIndex,
    state: &AtomicU8,
    what: &str,
) -> Result<(), WgpuError> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })
        .map_err(|e| WgpuError::gpu(what, format!("poll: {e}")))?;
    // The callback runs in the poll that sees the copy done; a later poll
    // catches one that was not yet due.
    if state.load(Ordering::SeqCst) == MAPPING {
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| WgpuError::gpu(what, format!("poll: {e}")))?;
    }
    match state.load(Ordering::SeqCst) {
        MAPPED => Ok(()),
        _ => Err(WgpuError::gpu(what, "a staging slot could not be mapped")),
    }
}

#[cfg(test)]
mod tests {
    use super::{sizes, Downloader, Uploader};

    #[test]
    fn transfers_through_the_slots_land_whole_and_in_order() {
        let ctx = match crate::gpu::Ctx::new(true, true, None, None, None) {
            Ok(c) => c,
            Err(e) if std::env::var("CROSSGROTH_REQUIRE_WGPU").as_deref() != Ok("1") => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "\n*** SKIPPED: upload slots: {e} ***\n");
                return;
            }
            Err(e) => panic!("CROSSGROTH_REQUIRE_WGPU=1 but {e}"),
        };
        // Small slots, so that a write wraps around both several times.
        let up = Uploader::new(1 << 16);
        let n = (5 << 14) + 123;
        let dst = ctx.storage(4 * n as u64, "upload test").unwrap();
        let fill =
            |d: wgpu::WriteOnly<'_, [u8]>, s: &[u8]| super::super::gpu::par_copy_in(d, s, 3, 1000);
        // The second write must land over the first, after it.
        for round in 0..2u32 {
            let words: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2654435761) ^ round)
                .collect();
            up.write(
                &ctx.device,
                &ctx.queue,
                &dst,
                bytemuck::cast_slice(&words),
                &fill,
                "test",
            )
            .unwrap();
            let got = ctx.run("read back", &[], &[(&dst, 0, n as u64)]).unwrap();
            assert!(got[0] == words, "round {round}: the words read back differ");
            // and through small read-back slots, from an offset
            let down = Downloader::new(1 << 14);
            let mut back = vec![0u32; n - 5];
            let mut next = 0;
            let mut take = |at: u64, w: &[u32]| {
                assert_eq!(at, next, "pieces out of order");
                back[at as usize..][..w.len()].copy_from_slice(w);
                next += w.len() as u64;
            };
            let src = (&dst, 5, (n - 5) as u64);
            down.read(&ctx.device, &ctx.queue, src, &mut take, "test")
                .unwrap();
            assert!(back == words[5..], "round {round}: the slots' read differs");
        }
    }

    #[test]
    fn slots_follow_the_binding_limit_down_and_stop_at_128_mib() {
        assert_eq!(sizes(2 << 30), (128 << 20, 32 << 20));
        assert_eq!(sizes((2 << 30) - 16), (128 << 20, 32 << 20));
        assert_eq!(sizes(1 << 20), (1 << 18, 1 << 19));
        assert_eq!(sizes(64 << 10), (16 << 10, 32 << 10));
        assert_eq!(sizes(4096), (4096, 8192));
    }
}

//! Large host-to-device writes through two staging buffers kept for the
//! device's life. wgpu's `write_buffer` allocates a fresh staging buffer the
//! size of each write (gigabytes for a chunk of streamed bases or a, b, c),
//! which the driver maps and the OS zeroes before the copy can start; here
//! one slot is filled on the host while the other's copy runs on the device.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::WgpuError;

/// Bytes of one staging slot.
const SLOT_BYTES: u64 = 128 << 20;

/// Writes of at least this many bytes go through the slots; smaller ones
/// through `write_buffer`, whose one allocation costs less than a round trip.
pub(crate) const RING_MIN_BYTES: usize = 32 << 20;

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

/// The two slots, made on the first large write.
pub(crate) struct Uploader {
    slot_bytes: u64,
    slots: Mutex<Vec<Slot>>,
}

impl Default for Uploader {
    fn default() -> Self {
        Uploader {
            slot_bytes: SLOT_BYTES,
            slots: Mutex::new(Vec::new()),
        }
    }
}

impl Uploader {
    /// Writes `bytes` at `offset` of `dst` (ordered before later
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
        let mut slots = self
            .slots
            .lock()
            .map_err(|_| WgpuError::gpu(what, "poisoned upload lock"))?;
        if slots.is_empty() {
            for _ in 0..2 {
                slots.push(Slot {
                    buf: device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("upload slot"),
                        size: self.slot_bytes,
                        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                        mapped_at_creation: true,
                    }),
                    copying: None,
                });
            }
        }
        for (k, piece) in bytes.chunks(self.slot_bytes as usize).enumerate() {
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
            let at = k as u64 * self.slot_bytes;
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
    let state = Arc::new(AtomicU8::new(MAPPING));
    let s = state.clone();
    buf.map_async(wgpu::MapMode::Write, .., move |r| {
        s.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::SeqCst);
    });
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
        _ => Err(WgpuError::gpu(what, "the upload slot could not be mapped")),
    }
}

#[cfg(test)]
mod tests {
    use super::Uploader;
    use std::sync::Mutex;

    #[test]
    fn writes_through_the_slots_land_whole_and_in_order() {
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
        let up = Uploader {
            slot_bytes: 1 << 16,
            slots: Mutex::new(Vec::new()),
        };
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
        }
    }
}

//! NTTs over Fr and the Groth16 H computation on the device.
//!
//! A transform is a few passes of `ntt_pass4` (kernels/ntt/ntt.cuh): the first
//! reads its input through the bit-reversal permutation into a second buffer,
//! the others work in place there, and the last scales its output when asked
//! (n^-1, coset powers). A 2^24 transform is three passes over device memory.

use std::sync::Arc;

use blst::blst_fr;
use cudarc::driver::{CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use crate::profile::Profiler;
use crate::{host, ConstraintMatrices, CudaDevice, CudaError};

/// Must match NTT_BLOCK_LOG in kernels/ntt/ntt.cuh: a block holds at most
/// 2^NTT_BLOCK_LOG elements.
const NTT_BLOCK_LOG: u32 = 10;
/// Stages per pass at most (leaves at least 2 groups per block for runs of
/// contiguous memory accesses).
const NTT_PASS_MAX: u32 = NTT_BLOCK_LOG - 1;

/// Fr elements resident on the device (blst_fr layout).
pub struct FrBuffer {
    pub(crate) buf: CudaSlice<u64>,
    pub(crate) len: usize,
}
impl FrBuffer {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What a device keeps per domain size for its transforms and H.
#[derive(Default)]
pub(crate) struct DomainTables {
    /// Twiddles per (log_n, inverse): tw[j] = omega^j, j < n/2.
    twiddles: std::collections::HashMap<(u32, bool), Arc<CudaSlice<u64>>>,
    /// H's coset tables per log_m.
    cosets: std::collections::HashMap<u32, Arc<CosetTables>>,
}

impl DomainTables {
    pub(crate) fn clear(&mut self) {
        self.twiddles.clear();
        self.cosets.clear();
    }
}

/// The scales of H's transforms on a 2^log_m domain, as split power tables
/// (element i takes lo[i & (2^bits - 1)] * hi[i >> bits]): into the coset
/// (m^-1 g^i, after the inverse transform of a, b and c) and out of it
/// (m^-1 g^-i, after the inverse transform of the combination); and
/// (g^m - 1)^-1, the vanishing polynomial's inverse on the coset.
pub(crate) struct CosetTables {
    to_lo: CudaSlice<u64>,
    to_hi: CudaSlice<u64>,
    to_bits: u32,
    from_lo: CudaSlice<u64>,
    from_hi: CudaSlice<u64>,
    from_bits: u32,
    zinv: blst_fr,
}

/// What the last pass multiplies its output by.
enum OutputScale<'a> {
    None,
    /// Every element by one constant (n^-1 of an inverse transform).
    Constant(blst_fr),
    /// Element i by lo[i & (2^bits - 1)] * hi[i >> bits] (a constant times the
    /// coset generator's powers; the constant is folded into lo).
    Powers {
        lo: &'a CudaSlice<u64>,
        hi: &'a CudaSlice<u64>,
        bits: u32,
    },
}

/// The block size of a pass over blocks of 2^log_e elements: the radix-4
/// kernel takes four elements a thread, with at least a warp a block.
fn pass_block(log_e: u32) -> u32 {
    (1u32 << log_e.saturating_sub(2)).max(32)
}

/// One pass of a transform's plan: stages s0 .. s0 + k, 2^g groups per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pass {
    s0: u32,
    k: u32,
    g: u32,
}

/// The passes of a 2^log_n transform: as few as the block size allows, with the
/// stages spread evenly (earlier passes take the remainder).
fn plan(log_n: u32) -> Vec<Pass> {
    if log_n == 0 {
        return Vec::new();
    }
    let npass = if log_n <= NTT_BLOCK_LOG {
        1
    } else {
        log_n.div_ceil(NTT_PASS_MAX)
    };
    let mut passes = Vec::with_capacity(npass as usize);
    let mut s0 = 0;
    for i in 0..npass {
        let k = log_n / npass + u32::from(i < log_n % npass);
        // groups available to a block: the first pass has 2^(log_n - k) groups
        // along the high bits, later ones 2^s0 along the low bits.
        let room = if i == 0 { log_n - k } else { s0 };
        passes.push(Pass {
            s0,
            k,
            g: (NTT_BLOCK_LOG - k).min(room),
        });
        s0 += k;
    }
    passes
}

/// Host-side multiply of every element of `v` by `c`.
fn scaled(v: &[blst_fr], c: &blst_fr) -> Vec<blst_fr> {
    v.iter().map(|x| host::fr_mul(x, c)).collect()
}

impl CudaDevice {
    /// Copies Fr elements to the device.
    pub fn upload_fr(&self, v: &[blst_fr]) -> Result<FrBuffer, CudaError> {
        let _g = self.guard();
        let buf = self.upload_fr_raw(v, "Fr buffer")?;
        self.sync("upload Fr")?;
        Ok(FrBuffer { buf, len: v.len() })
    }

    /// Copies Fr elements back from the device.
    pub fn download_fr(&self, b: &FrBuffer) -> Result<Vec<blst_fr>, CudaError> {
        let _g = self.guard();
        let mut out = vec![blst_fr::default(); b.len];
        self.download_large(&b.buf, host::fr_as_u64s_mut(&mut out), "download Fr")?;
        Ok(out)
    }

    fn upload_fr_raw(&self, v: &[blst_fr], what: &str) -> Result<CudaSlice<u64>, CudaError> {
        self.upload_large(host::fr_as_u64s(v), what)
    }

    fn check_ntt_len(len: usize, log_n: u32) -> Result<(), CudaError> {
        if log_n > 31 || len != 1usize << log_n {
            return Err(CudaError::InvalidInput(format!(
                "NTT of {len} elements with log_n = {log_n}"
            )));
        }
        Ok(())
    }

    /// In-place NTT of 2^log_n elements (natural order in and out) with
    /// omega = ROOT_OF_UNITY^(2^(32 - log_n)); inverse = true computes the
    /// inverse transform including the factor n^-1 (bellperson's `ifft`).
    pub fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), CudaError> {
        Self::check_ntt_len(data.len(), log_n)?;
        let _g = self.guard();
        let mut buf = self.upload_fr_raw(data, "NTT data")?;
        self.ntt_scaled(&mut buf, log_n, inverse)?;
        self.download_large(&buf, host::fr_as_u64s_mut(data), "NTT")
    }

    /// [`Self::ntt`] on device-resident data (no transfers), e.g. for timing.
    pub fn ntt_resident(
        &self,
        data: &mut FrBuffer,
        log_n: u32,
        inverse: bool,
    ) -> Result<(), CudaError> {
        Self::check_ntt_len(data.len, log_n)?;
        let _g = self.guard();
        self.ntt_scaled(&mut data.buf, log_n, inverse)?;
        self.sync("NTT")
    }

    /// The transform of [`Self::ntt`] on a device buffer (n^-1 included when
    /// inverse).
    fn ntt_scaled(
        &self,
        buf: &mut CudaSlice<u64>,
        log_n: u32,
        inverse: bool,
    ) -> Result<(), CudaError> {
        let tw = self.twiddles(log_n, inverse)?;
        let scale = if inverse && log_n > 0 {
            OutputScale::Constant(host::fr_inv(&host::fr_from_u64(1u64 << log_n)))
        } else {
            OutputScale::None
        };
        self.ntt_device(buf, log_n, &tw, scale)
    }

    /// Twiddle table omega^j (j < n/2) for a 2^log_n transform (omega^-1 when
    /// inverse), cached per size and direction.
    fn twiddles(&self, log_n: u32, inverse: bool) -> Result<Arc<CudaSlice<u64>>, CudaError> {
        if let Some(t) = self.domain_tables().twiddles.get(&(log_n, inverse)) {
            return Ok(t.clone());
        }
        let mut w = host::omega(log_n);
        if inverse {
            w = host::fr_inv(&w);
        }
        let count = 1u64 << (log_n.max(1) - 1);
        let (lo, hi, lo_bits) = host::split_power_tables(&w, count);
        let d_lo = self.upload_fr_raw(&lo, "twiddle table")?;
        let d_hi = self.upload_fr_raw(&hi, "twiddle table")?;
        let mut tw = self.alloc_u64(4 * count as usize, "twiddles")?;
        let count32 = count as u32;
        launch!(self, self.k.ntt_twiddles, count, 256; &mut tw, &d_lo, &d_hi, &lo_bits, &count32);
        let tw = Arc::new(tw);
        self.domain_tables()
            .twiddles
            .insert((log_n, inverse), tw.clone());
        Ok(tw)
    }

    fn domain_tables(&self) -> std::sync::MutexGuard<'_, DomainTables> {
        self.domain_tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// H's coset tables for a 2^log_m domain, made on the first H of that
    /// size and kept with the twiddles: they depend on the size alone, so an
    /// H need not compute them on the host and copy them up each time.
    fn coset_tables(&self, log_m: u32) -> Result<Arc<CosetTables>, CudaError> {
        if let Some(t) = self.domain_tables().cosets.get(&log_m) {
            return Ok(t.clone());
        }
        let m = 1u64 << log_m;
        let g = host::fr_from_u64(host::COSET_GENERATOR);
        let ginv = host::fr_inv(&g);
        let minv = host::fr_inv(&host::fr_from_u64(m));
        // (g^m - 1)^-1
        let zinv = host::fr_inv(&host::fr_sub(&host::fr_pow(&g, m), &host::fr_one()));
        // m^-1 g^i and m^-1 g^-i: the scale after each inverse transform.
        let (glo, ghi, gbits) = host::split_power_tables(&g, m);
        let (ilo, ihi, ibits) = host::split_power_tables(&ginv, m);
        let tables = Arc::new(CosetTables {
            to_lo: self.upload_fr_raw(&scaled(&glo, &minv), "coset table")?,
            to_hi: self.upload_fr_raw(&ghi, "coset table")?,
            to_bits: gbits,
            from_lo: self.upload_fr_raw(&scaled(&ilo, &minv), "coset table")?,
            from_hi: self.upload_fr_raw(&ihi, "coset table")?,
            from_bits: ibits,
            zinv,
        });
        self.domain_tables().cosets.insert(log_m, tables.clone());
        Ok(tables)
    }

    /// The transform's passes on the device; `buf` is replaced by the buffer
    /// that holds the result (the first pass is out of place).
    fn ntt_device(
        &self,
        buf: &mut CudaSlice<u64>,
        log_n: u32,
        tw: &CudaSlice<u64>,
        scale: OutputScale<'_>,
    ) -> Result<(), CudaError> {
        let n = 1usize << log_n;
        let passes = plan(log_n);
        if passes.is_empty() {
            // A one-point transform is the identity, and its n^-1 is 1; compute_h
            // never asks for a coset scale on one point.
            debug_assert!(!matches!(scale, OutputScale::Powers { .. }));
            return Ok(());
        }
        let mut out = self.alloc_u64(4 * n, "NTT buffer")?;
        let null: u64 = 0;
        let zero = [0u64; 4];
        for (i, p) in passes.iter().enumerate() {
            let first = u32::from(i == 0);
            let last = i + 1 == passes.len();
            let block = pass_block(p.g + p.k);
            let grid = (n >> (p.g + p.k)) as u32;
            let cfg = LaunchConfig {
                grid_dim: (grid, 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let (mode, c): (u32, [u64; 4]) = match (&scale, last) {
                (OutputScale::Constant(c), true) => (1, c.l),
                (OutputScale::Powers { .. }, true) => (2, zero),
                _ => (0, zero),
            };
            // Later passes read and write `out` (in place); the kernel gets its
            // address twice.
            let src: u64 = if i == 0 {
                let (ptr, _read) = buf.device_ptr(&self.stream);
                ptr
            } else {
                let (ptr, _read) = out.device_ptr(&self.stream);
                ptr
            };
            let mut b = self.stream.launch_builder(&self.k.ntt_pass4);
            b.arg(&src)
                .arg(&mut out)
                .arg(tw)
                .arg(&log_n)
                .arg(&p.s0)
                .arg(&p.k)
                .arg(&p.g)
                .arg(&first)
                .arg(&mode)
                .arg(&c);
            match (&scale, last) {
                (OutputScale::Powers { lo, hi, bits }, true) => {
                    b.arg(*lo).arg(*hi).arg(bits);
                }
                _ => {
                    b.arg(&null).arg(&null).arg(&0u32);
                }
            }
            // SAFETY: the arguments match ntt_pass4's signature; `out` and `buf`
            // hold n elements, the grid covers n / 2^(g + k) blocks of that many
            // elements, tw holds n / 2 twiddles and the scale tables cover n.
            unsafe { b.launch(cfg) }.map_err(|e| CudaError::launch("ntt_pass4", e))?;
        }
        std::mem::swap(buf, &mut out);
        Ok(())
    }

    /// The Groth16 quotient polynomial H for a 2^log_m domain (bellperson's
    /// steps): a, b, c (each at most m long, zero-padded) are interpolated
    /// (inverse NTT), evaluated on the coset `g·<omega>` (g = 7), combined as
    /// (a·b − c)·(g^m − 1)^-1 and interpolated back from the coset; the first
    /// m − 1 coefficients are returned (Montgomery form).
    pub fn compute_h(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<Vec<blst_fr>, CudaError> {
        let on_device = self.h_on_host_evaluations([a, b, c], log_m)?;
        let mut h = vec![blst_fr::default(); on_device.len];
        self.download_h(on_device, &mut h)?;
        Ok(h)
    }

    /// [`Self::compute_h`] with the coefficients written over a: on return
    /// a[..m − 1] holds H (a must be at least that long). The prover's a is
    /// not needed after H, and its memory is already mapped, whereas the pages
    /// of a fresh vector fault in during the download and cost more than the
    /// copy itself.
    pub fn compute_h_in_place(
        &self,
        a: &mut [blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<(), CudaError> {
        let m = 1usize << log_m.min(28);
        if a.len() < m - 1 {
            return Err(CudaError::InvalidInput(format!(
                "compute_h_in_place: a has {} elements, H needs {}",
                a.len(),
                m - 1
            )));
        }
        let on_device = self.h_on_host_evaluations([a, b, c], log_m)?;
        let len = on_device.len;
        self.download_h(on_device, &mut a[..len])
    }

    fn h_on_host_evaluations(
        &self,
        abc: [&[blst_fr]; 3],
        log_m: u32,
    ) -> Result<HOnDevice<'_>, CudaError> {
        match self.h_on_device(Evaluations::Host(abc), log_m)? {
            HOutcome::H(h) => Ok(h),
            HOutcome::Unsatisfied(row) => Err(CudaError::InvalidInput(format!(
                "compute_h: row {row} reported unsatisfied for evaluations that were not checked"
            ))),
        }
    }

    pub(crate) fn download_h(
        &self,
        h: HOnDevice<'_>,
        out: &mut [blst_fr],
    ) -> Result<(), CudaError> {
        let HOnDevice {
            buf,
            len,
            mut prof,
            log_m,
            _guard,
        } = h;
        self.download_large(&buf, host::fr_as_u64s_mut(&mut out[..len]), "compute_h")?;
        prof.mark("download");
        prof.report(&format!("H m=2^{log_m}"));
        Ok(())
    }

    /// H's coefficients computed on the device, not yet downloaded; or, when
    /// asked to check them, the first row whose evaluations have a·b ≠ c.
    pub(crate) fn h_on_device(
        &self,
        evaluations: Evaluations<'_>,
        log_m: u32,
    ) -> Result<HOutcome<'_>, CudaError> {
        if log_m == 0 || log_m > 28 {
            return Err(CudaError::InvalidInput(format!(
                "compute_h: log_m = {log_m} is out of range 1..=28"
            )));
        }
        let m = 1usize << log_m;
        if let Evaluations::Host(vectors) = &evaluations {
            for (name, v) in ["a", "b", "c"].into_iter().zip(vectors) {
                if v.len() > m {
                    return Err(CudaError::InvalidInput(format!(
                        "compute_h: {name} has {} > 2^{log_m} elements",
                        v.len()
                    )));
                }
            }
        }
        let guard = self.guard();
        let mut prof = Profiler::new(self);
        let m32 = m as u32;
        let coset = self.coset_tables(log_m)?;
        let to_coset = || OutputScale::Powers {
            lo: &coset.to_lo,
            hi: &coset.to_hi,
            bits: coset.to_bits,
        };
        let tw_f = self.twiddles(log_m, false)?;
        let tw_i = self.twiddles(log_m, true)?;
        let zinv_arg = host::fr_arg(&coset.zinv);
        prof.mark("tables");

        let mut bufs = match evaluations {
            Evaluations::Host(vectors) => {
                let mut bufs = Vec::with_capacity(3);
                for (name, v) in ["a", "b", "c"].into_iter().zip(vectors) {
                    bufs.push(self.upload_large_padded(host::fr_as_u64s(v), 4 * m, name)?);
                    prof.mark(name);
                }
                bufs
            }
            Evaluations::Witness {
                matrices,
                input,
                aux,
                check,
            } => {
                let bufs = self.evaluate_matrices(matrices, input, aux, m, &mut prof)?;
                if check {
                    if let Some(row) = self.first_unsatisfied(&bufs, matrices.rows())? {
                        return Ok(HOutcome::Unsatisfied(row));
                    }
                    prof.mark("check");
                }
                bufs.into()
            }
        };
        for (d, name) in bufs.iter_mut().zip(["a", "b", "c"]) {
            // iNTT (omega^-1) with x m^-1 g^i fused in, then NTT: the values on the coset.
            self.ntt_device(d, log_m, &tw_i, to_coset())?;
            self.ntt_device(d, log_m, &tw_f, OutputScale::None)?;
            prof.mark(name);
        }
        let cb = bufs.pop().expect("three buffers");
        let bb = bufs.pop().expect("three buffers");
        let mut ab = bufs.pop().expect("three buffers");
        launch!(self, self.k.h_combine, m32, 256; &mut ab, &bb, &cb, &m32, &zinv_arg);
        prof.mark("combine");
        drop((bb, cb));
        let from_coset = OutputScale::Powers {
            lo: &coset.from_lo,
            hi: &coset.from_hi,
            bits: coset.from_bits,
        };
        self.ntt_device(&mut ab, log_m, &tw_i, from_coset)?;
        prof.mark("inverse");
        Ok(HOutcome::H(HOnDevice {
            buf: ab,
            len: m - 1,
            prof,
            log_m,
            _guard: guard,
        }))
    }
}

/// Where the H computation takes a, b and c from.
pub(crate) enum Evaluations<'a> {
    /// Host vectors of at most m elements each, uploaded and zero-padded.
    Host([&'a [blst_fr]; 3]),
    /// Computed on the device from a witness already there and the circuit's
    /// resident matrices; `check` looks for an unsatisfied row first.
    Witness {
        matrices: &'a ConstraintMatrices,
        input: &'a CudaSlice<u64>,
        aux: &'a CudaSlice<u64>,
        check: bool,
    },
}

/// H on the device, or the first unsatisfied row that stopped it.
pub(crate) enum HOutcome<'a> {
    H(HOnDevice<'a>),
    Unsatisfied(usize),
}

/// H on the device (the first `len` elements of buf), with the lock and the
/// profile of the computation that made it.
pub(crate) struct HOnDevice<'a> {
    buf: CudaSlice<u64>,
    len: usize,
    prof: Profiler<'a>,
    log_m: u32,
    _guard: std::sync::MutexGuard<'a, ()>,
}

impl HOnDevice<'_> {
    /// H's buffer, to stay on the device (its profile reported, the lock
    /// given back).
    pub(crate) fn keep(self) -> CudaSlice<u64> {
        let mut prof = self.prof;
        prof.mark("kept");
        prof.report(&format!("H m=2^{} kept on the device", self.log_m));
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_every_stage_once_within_a_block() {
        for log_n in 1..=28 {
            let p = plan(log_n);
            let mut s = 0;
            for (i, pass) in p.iter().enumerate() {
                assert_eq!(pass.s0, s, "log_n {log_n}");
                assert!(pass.k >= 1 && pass.g + pass.k <= NTT_BLOCK_LOG, "{pass:?}");
                let room = if i == 0 { log_n - pass.k } else { pass.s0 };
                assert!(pass.g <= room, "{pass:?}");
                s += pass.k;
            }
            assert_eq!(s, log_n);
        }
        assert_eq!(plan(24).len(), 3);
        assert_eq!(plan(20).len(), 3);
        assert_eq!(plan(10).len(), 1);
    }
}

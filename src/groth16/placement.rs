//! Where parameter bases live on each device — the one owner of that decision,
//! for the engine and the [`Prover`](super::Prover) alike (here, beside the
//! prepared parameters it fills, so that the prover need not reach up into
//! the engine).
//!
//! A parameter set's five base sets (H, L, A, B_G1, B_G2) are placed together,
//! in the first of these that fits the device's room beside what it already
//! holds and one proof's working buffers:
//!
//! 1. resident, the G1 sets as tables of precomputed copies (the fastest MSMs;
//!    on a backend that makes tables, unless [`TablePolicy::Off`]);
//! 2. resident, plain;
//! 3. in host memory, streamed to the device by every MSM (on a backend that
//!    can stream);
//!
//! and otherwise the job fails, naming the bytes. Backends only do as told.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use super::{Parameters, PreparedParams};
use crate::backend::{Backend, DeviceMatrices, Group, Placement};
use crate::error::{Error, Result};
use crate::synthesis::RecordedShape;
use crate::Scalar;

/// Whether the G1 bases are kept as tables of precomputed copies (copy k of a
/// base is 2^(c·w·k) times it, so several MSM windows share one bucket set):
/// the fastest MSMs, for device memory and a precomputation when the
/// parameters are loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TablePolicy {
    /// Tables where the whole parameter set's tables fit, plain bases otherwise.
    #[default]
    Auto,
    /// Plain bases always.
    Off,
    /// Tables of at most this many copies per base, where they fit.
    MaxCopies(u32),
}

impl std::str::FromStr for TablePolicy {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(TablePolicy::Auto),
            "off" => Ok(TablePolicy::Off),
            n => match n.parse::<u32>() {
                Ok(k) if k >= 1 => Ok(TablePolicy::MaxCopies(k)),
                _ => Err(format!(
                    "`{n}` is not auto, off or a number of copies (1 or more)"
                )),
            },
        }
    }
}

/// How the placement decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacementConfig {
    /// Share of each device's memory that resident bases and one proof's
    /// working buffers may fill (the rest is left to the driver and other work).
    pub device_memory_fraction: f64,
    pub tables: TablePolicy,
    /// Release the host copy of the G1 queries (H, L, A, B_G1) once every
    /// device of an engine holds them resident: most of a proving host's
    /// memory at Filecoin scale. B_G2 stays, for the MSMs the CPU takes. The
    /// price: a device rebuilt after a fault cannot place them again, so their
    /// jobs fail, naming the query, until the parameters are loaded anew.
    pub release_host_copies: bool,
}

impl Default for PlacementConfig {
    fn default() -> Self {
        PlacementConfig {
            device_memory_fraction: 0.9,
            tables: TablePolicy::Auto,
            release_host_copies: false,
        }
    }
}

/// What one device holds: placed parameter sets by address, circuit shapes'
/// constraint matrices, and their bytes. Entries live as long as their owner
/// (a prover serves few parameter sets); matrices go with their shape.
#[derive(Default)]
pub struct DevicePlacement {
    /// Per set: its prepared bases and the device bytes they took.
    sets: HashMap<usize, (Arc<PreparedParams>, usize)>,
    matrices: HashMap<usize, PlacedMatrices>,
    resident: usize,
}

/// A shape's matrices on the device, or None where they did not fit (its
/// a, b and c are then computed on the host).
struct PlacedMatrices {
    shape: Weak<RecordedShape>,
    matrices: Option<Arc<DeviceMatrices>>,
}

impl DevicePlacement {
    /// `params` prepared on `backend`, placed on first use.
    pub fn prepared(
        &mut self,
        backend: &dyn Backend,
        params: &Arc<Parameters>,
        config: &PlacementConfig,
    ) -> Result<Arc<PreparedParams>> {
        let key = Arc::as_ptr(params) as usize;
        if let Some((p, _)) = self.sets.get(&key) {
            return Ok(p.clone());
        }
        let (prepared, bytes) = place(backend, params, config, self.resident)?;
        let prepared = Arc::new(prepared);
        self.resident += bytes;
        self.sets.insert(key, (prepared.clone(), bytes));
        Ok(prepared)
    }

    /// `shape`'s constraint matrices on `backend`, placed on first use beside
    /// what the device holds and the working buffers of one proof with
    /// `params`; None where the backend computes a, b and c on the host or the
    /// matrices do not fit (they are then computed on the host).
    pub fn matrices(
        &mut self,
        backend: &dyn Backend,
        shape: &Arc<RecordedShape>,
        params: &Parameters,
        config: &PlacementConfig,
    ) -> Option<Arc<DeviceMatrices>> {
        self.drop_matrices_of_dropped_shapes();
        let key = Arc::as_ptr(shape) as usize;
        if let Some(p) = self.matrices.get(&key) {
            return p.matrices.clone();
        }
        let bytes = backend.matrices_bytes(shape)?;
        let room = room(backend, config, self.resident).unwrap_or(usize::MAX);
        let working = working_bytes(backend, params);
        let matrices = if bytes + working > room {
            log::info!(
                "{}: a circuit's constraint matrices ({}) do not fit beside {} resident \
                 and {} of working buffers: its a, b and c are computed on the host",
                backend.name(),
                bytesize::ByteSize(bytes as u64),
                bytesize::ByteSize(self.resident as u64),
                bytesize::ByteSize(working as u64)
            );
            None
        } else {
            match backend.prepare_matrices(shape) {
                Ok(m) => {
                    self.resident += m.bytes;
                    Some(Arc::new(m))
                }
                Err(e) => {
                    log::warn!(
                        "{}: constraint matrices not placed ({e}): a, b and c are computed on the host",
                        backend.name()
                    );
                    None
                }
            }
        };
        self.matrices.insert(
            key,
            PlacedMatrices {
                shape: Arc::downgrade(shape),
                matrices: matrices.clone(),
            },
        );
        matrices
    }

    /// Frees the matrices of shapes nobody holds any more (their address may
    /// be reused by another shape).
    fn drop_matrices_of_dropped_shapes(&mut self) {
        let resident = &mut self.resident;
        self.matrices.retain(|_, p| {
            let alive = p.shape.strong_count() > 0;
            if !alive {
                if let Some(m) = &p.matrices {
                    *resident = resident.saturating_sub(m.bytes);
                }
            }
            alive
        });
    }

    /// Whether `params`' G1 queries are placed here with no host copy kept
    /// (see [`PlacementConfig::release_host_copies`]).
    pub fn holds_g1_alone(&self, params: &Arc<Parameters>) -> bool {
        self.sets
            .get(&(Arc::as_ptr(params) as usize))
            .is_some_and(|(p, _)| p.g1_sets().iter().all(|b| b.host.is_none()))
    }

    /// Drops `params`' bases and `shape`'s matrices from this device; the
    /// device bytes that frees now (a set a proof still holds is freed when it
    /// lets go, and not counted).
    pub fn release(
        &mut self,
        params: &Arc<Parameters>,
        shape: Option<&Arc<RecordedShape>>,
    ) -> usize {
        let mut freed = 0;
        if let Some((prepared, bytes)) = self.sets.remove(&(Arc::as_ptr(params) as usize)) {
            self.resident = self.resident.saturating_sub(bytes);
            if Arc::into_inner(prepared).is_some() {
                freed += bytes;
            }
        }
        if let Some(shape) = shape {
            if let Some(placed) = self.matrices.remove(&(Arc::as_ptr(shape) as usize)) {
                if let Some(m) = placed.matrices {
                    self.resident = self.resident.saturating_sub(m.bytes);
                    let bytes = m.bytes;
                    if Arc::into_inner(m).is_some() {
                        freed += bytes;
                    }
                }
            }
        }
        freed
    }

    /// Forgets every placed set and matrices (after a device error: a rebuilt
    /// context has lost them, and the next circuit places them again).
    pub fn forget(&mut self) {
        self.sets.clear();
        self.matrices.clear();
        self.resident = 0;
    }

    /// Device bytes the placed sets hold.
    pub fn resident_bytes(&self) -> usize {
        self.resident
    }
}

/// Device bytes one proof needs beside the bases: a, b, c, H and scratch of
/// the H computation (six vectors of the domain), and the largest MSM's
/// working buffers; and where the backend stages witnesses, the next proof's
/// witness sent ahead. A backend that sends a, b and c ahead computes H in
/// their three buffers and writes the next proof's once H exists, so the six
/// vectors hold both.
fn working_bytes(backend: &dyn Backend, params: &Parameters) -> usize {
    let staged = if backend.stages_witnesses() {
        (params.vk.ic.len() + params.l.len()) * std::mem::size_of::<Scalar>()
    } else {
        0
    };
    let largest = [
        params.h.len(),
        params.l.len(),
        params.a.len(),
        params.b_g1.len(),
        params.b_g2.len(),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    6 * (params.h.len() + 1) * std::mem::size_of::<Scalar>()
        + backend.msm_scratch_bytes(largest)
        + staged
}

/// Device bytes the engine may still fill beside `held`: its own share of the
/// device, and never more than is free now beside the share left to others
/// (None: the backend reports no device memory).
fn room(backend: &dyn Backend, config: &PlacementConfig, held: usize) -> Option<usize> {
    let (free, total) = backend.memory()?;
    let limit = (total as f64 * config.device_memory_fraction) as usize;
    Some(
        limit
            .saturating_sub(held)
            .min(free.saturating_sub(total.saturating_sub(limit))),
    )
}

/// How the five base sets are kept, and the device bytes that takes.
struct Plan {
    g1: Placement,
    g2: Placement,
    bytes: usize,
}

fn plan(
    backend: &dyn Backend,
    params: &Parameters,
    config: &PlacementConfig,
    held: usize,
) -> Result<Plan> {
    let g1_lens = [
        params.h.len(),
        params.l.len(),
        params.a.len(),
        params.b_g1.len(),
    ];
    let resident_with = |copies: u32, g2_copies: u32| -> usize {
        g1_lens
            .iter()
            .map(|&n| backend.resident_bytes(Group::G1, n, copies))
            .sum::<usize>()
            + backend.resident_bytes(Group::G2, params.b_g2.len(), g2_copies)
    };
    let resident = |copies: u32| resident_with(copies, 1);
    let Some((free, total)) = backend.memory() else {
        // No device memory to plan (the CPU; wgpu, which does not report it).
        return Ok(Plan {
            g1: Placement::PLAIN,
            g2: Placement::PLAIN,
            bytes: resident(1),
        });
    };
    let limit = (total as f64 * config.device_memory_fraction) as usize;
    let room = room(backend, config, held).unwrap_or(0);
    let working = working_bytes(backend, params);
    let copies = match config.tables {
        TablePolicy::Off => 1,
        TablePolicy::Auto => backend.max_table_copies(),
        TablePolicy::MaxCopies(k) => k.min(backend.max_table_copies()),
    };
    // Tables for every set first (a G2 addition costs about three G1 ones, so
    // B_G2's copies save the most), then for the G1 sets alone, then plain
    // bases: the first that fits.
    let mut candidates = vec![];
    if copies > 1 {
        candidates.extend([(copies, copies), (copies, 1)]);
    }
    candidates.push((1, 1));
    for (g1_copies, g2_copies) in candidates {
        let bytes = resident_with(g1_copies, g2_copies);
        if bytes + working <= room {
            return Ok(Plan {
                g1: Placement::Resident {
                    max_copies: g1_copies,
                },
                g2: Placement::Resident {
                    max_copies: g2_copies,
                },
                bytes,
            });
        }
    }
    let plain = resident(1);
    if backend.streams_bases() && working <= room {
        log::info!(
            "{}: {} of bases and {} of one proof's working buffers over the device's room of {}: \
             streaming the bases from host memory",
            backend.name(),
            bytesize::ByteSize(plain as u64),
            bytesize::ByteSize(working as u64),
            bytesize::ByteSize(room as u64)
        );
        return Ok(Plan {
            g1: Placement::Streamed,
            g2: Placement::Streamed,
            bytes: 0,
        });
    }
    Err(Error::Backend {
        backend: backend.name(),
        message: format!(
            "these parameters need {} of device memory ({} of bases, {} of working buffers) \
             beside {} already resident, over the device budget of {} ({} free){}",
            bytesize::ByteSize((plain + working) as u64),
            bytesize::ByteSize(plain as u64),
            bytesize::ByteSize(working as u64),
            bytesize::ByteSize(held as u64),
            bytesize::ByteSize(limit as u64),
            bytesize::ByteSize(free as u64),
            if backend.streams_bases() {
                ""
            } else {
                " (this backend cannot stream bases from host memory)"
            }
        ),
    })
}

/// Places `params` on `backend` beside `held` bytes already resident there;
/// returns the prepared bases and the device bytes they took (what the
/// device's free memory says, where that is more than planned).
pub fn place(
    backend: &dyn Backend,
    params: &Arc<Parameters>,
    config: &PlacementConfig,
    held: usize,
) -> Result<(PreparedParams, usize)> {
    let plan = plan(backend, params, config, held)?;
    let before = backend.memory();
    let mut prepared = PreparedParams::with_placement(backend, params.clone(), plan.g1, plan.g2)?;
    if config.release_host_copies
        && backend.copies_resident_bases()
        && matches!(plan.g1, Placement::Resident { .. })
    {
        // The device's copies are what its MSMs read.
        for bases in [
            &mut prepared.h,
            &mut prepared.l,
            &mut prepared.a,
            &mut prepared.b_g1,
        ] {
            bases.host = None;
        }
    }
    let grown = match (before, backend.memory()) {
        (Some((free_before, _)), Some((free_after, _))) => free_before.saturating_sub(free_after),
        _ => 0,
    };
    if plan.g1 != Placement::PLAIN {
        log::info!(
            "{}: bases placed {:?} (G1), {:?} (G2): {} on the device",
            backend.name(),
            plan.g1,
            plan.g2,
            bytesize::ByteSize(plan.bytes.max(grown) as u64)
        );
    }
    // A backend without a device keeps its "bases" in the host copy itself.
    let bytes = if backend.has_device() {
        plan.bytes.max(grown)
    } else {
        0
    };
    Ok((prepared, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BasesRef, DeviceBases, HostBases, MsmInput, Sums};

    /// A device that reports `total` bytes, all free, keeps tables of up to
    /// eight copies and streams bases where `streams`: only the placement's
    /// arithmetic is exercised.
    struct Sized {
        total: usize,
        streams: bool,
    }

    impl Backend for Sized {
        fn name(&self) -> &'static str {
            "sized"
        }
        fn device(&self) -> String {
            format!("{} bytes", self.total)
        }
        fn has_device(&self) -> bool {
            true
        }
        fn max_table_copies(&self) -> u32 {
            8
        }
        fn resident_bytes(&self, group: Group, len: usize, max_copies: u32) -> usize {
            let point = match group {
                Group::G1 => 96,
                Group::G2 => 192,
            };
            len * point * max_copies as usize
        }
        fn msm_scratch_bytes(&self, _len: usize) -> usize {
            0
        }
        fn memory(&self) -> Option<(usize, usize)> {
            Some((self.total, self.total))
        }
        fn streams_bases(&self) -> bool {
            self.streams
        }
        fn prepare(&self, _: &HostBases, _: Placement) -> Result<DeviceBases> {
            Ok(None)
        }
        fn ntt(&self, _: &mut [Scalar], _: bool) -> Result<()> {
            unreachable!("placement runs no NTT")
        }
        fn compute_h(
            &self,
            _: &mut Vec<Scalar>,
            _: &mut Vec<Scalar>,
            _: &mut Vec<Scalar>,
        ) -> Result<()> {
            unreachable!("placement computes no H")
        }
        fn msm_sums(&self, _: BasesRef<'_>, _: &[MsmInput<'_>]) -> Result<Sums> {
            unreachable!("placement runs no MSM")
        }
    }

    #[test]
    fn b_g2_gets_a_table_where_every_table_fits_and_plain_bases_otherwise() {
        let params = crate::groth16::generate_random_parameters(
            crate::circuits::CircuitSpec::Chain { log_rows: 6 }.blank(),
            &mut <rand_chacha::ChaCha8Rng as rand_core::SeedableRng>::seed_from_u64(1),
            None,
        )
        .unwrap();
        let g1: usize = [
            params.h.len(),
            params.l.len(),
            params.a.len(),
            params.b_g1.len(),
        ]
        .iter()
        .map(|n| n * 96)
        .sum();
        let g2 = params.b_g2.len() * 192;
        let working = 6 * (params.h.len() + 1) * std::mem::size_of::<Scalar>();
        let config = PlacementConfig {
            device_memory_fraction: 1.0,
            ..PlacementConfig::default()
        };
        let placed = |total: usize| {
            let sized = Sized {
                total,
                streams: false,
            };
            let p = plan(&sized, &params, &config, 0).unwrap();
            (p.g1, p.g2, p.bytes)
        };
        let table = Placement::Resident { max_copies: 8 };
        assert_eq!(
            placed(8 * (g1 + g2) + working),
            (table, table, 8 * (g1 + g2))
        );
        assert_eq!(
            placed(8 * (g1 + g2) + working - 1),
            (table, Placement::PLAIN, 8 * g1 + g2)
        );
        assert_eq!(
            placed(8 * g1 + g2 + working - 1),
            (Placement::PLAIN, Placement::PLAIN, g1 + g2)
        );
    }

    /// Over the room for resident bases, a backend that streams keeps them in
    /// host memory while one proof's working buffers fit; below that, and on
    /// a backend that cannot stream, the placement refuses in one line
    /// naming the bytes.
    #[test]
    fn bases_stream_where_only_the_working_buffers_fit_and_are_refused_below() {
        let params = crate::groth16::generate_random_parameters(
            crate::circuits::CircuitSpec::Chain { log_rows: 6 }.blank(),
            &mut <rand_chacha::ChaCha8Rng as rand_core::SeedableRng>::seed_from_u64(1),
            None,
        )
        .unwrap();
        let working = 6 * (params.h.len() + 1) * std::mem::size_of::<Scalar>();
        let config = PlacementConfig {
            device_memory_fraction: 1.0,
            tables: TablePolicy::Off,
            ..PlacementConfig::default()
        };
        let planned =
            |total: usize, streams: bool| plan(&Sized { total, streams }, &params, &config, 0);
        let p = planned(working, true).unwrap();
        assert_eq!(
            (p.g1, p.g2, p.bytes),
            (Placement::Streamed, Placement::Streamed, 0)
        );
        for (total, streams) in [(working - 1, true), (working, false)] {
            let e = planned(total, streams).err().expect("refused").to_string();
            assert!(!e.contains('\n') && e.contains("need"), "{e}");
            assert_eq!(e.contains("cannot stream"), !streams, "{e}");
        }
    }
}

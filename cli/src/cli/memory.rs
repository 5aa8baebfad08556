//! Whether a command's memory fits before it starts: an estimate from the circuit's
//! size against what this process may use (MemAvailable, the cgroup's limit, the
//! address-space and data limits), so that a circuit too large for the machine is
//! refused with the figures instead of aborting on a failed allocation.

use std::path::Path;

use anyhow::{bail, Result};
use crossgroth::circuits::CircuitSpec;

/// The tightest of the limits on this process's memory, and which one it is.
#[derive(Clone, Copy, Debug)]
pub struct Room {
    /// Bytes of new anonymous memory the process may allocate.
    pub anon: u64,
    /// Bytes of new address space (mapped files included), where limited.
    pub address_space: Option<u64>,
    pub what: &'static str,
}

fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn meminfo_available() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let l = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
    Some(l.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Room left under the memory cgroup's limit (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), the tightest along the path to the root.
fn cgroup_room() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<u64> = None;
    let mut consider = |limit: Option<u64>, usage: Option<u64>| {
        if let (Some(l), Some(u)) = (limit, usage) {
            if l < (1 << 60) {
                let room = l.saturating_sub(u);
                best = Some(best.map_or(room, |b| b.min(room)));
            }
        }
    };
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        let (root, limit, usage) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut dir = Path::new(root).join(path.trim_start_matches('/'));
        loop {
            consider(read_u64(&dir.join(limit)), read_u64(&dir.join(usage)));
            if dir == Path::new(root) || !dir.pop() {
                break;
            }
        }
    }
    best
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(resource, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(r.rlim_cur)
}

/// What this process may still allocate.
pub fn room() -> Option<Room> {
    let mut rooms: Vec<(u64, &'static str)> = vec![];
    if let Some(a) = meminfo_available() {
        rooms.push((a, "available memory (MemAvailable)"));
    }
    if let Some(c) = cgroup_room() {
        rooms.push((c, "the memory cgroup's limit"));
    }
    let mut address_space = None;
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let used = |f| status_kb(f).unwrap_or(0) * 1024;
        if let Some(l) = rlimit(libc::RLIMIT_AS) {
            let r = l.saturating_sub(used("VmSize:"));
            address_space = Some(r);
            rooms.push((r, "the address-space limit (ulimit -v)"));
        }
        if let Some(l) = rlimit(libc::RLIMIT_DATA) {
            rooms.push((
                l.saturating_sub(used("VmData:")),
                "the data limit (ulimit -d)",
            ));
        }
    }
    let _ = status_kb;
    let (anon, what) = rooms.into_iter().min_by_key(|r| r.0)?;
    Some(Room {
        anon,
        address_space,
        what,
    })
}

/// Bytes in binary units: "2.9 GiB".
pub fn size(n: u64) -> String {
    bytesize::ByteSize(n).to_string_as(true)
}

/// Refuses a command whose estimated peak memory (`anon` bytes of allocations,
/// `mapped` bytes of memory-mapped files) does not fit.
pub fn ensure_fits(command: &str, anon: u64, mapped: u64, basis: &str) -> Result<()> {
    let Some(room) = room() else { return Ok(()) };
    let short = |what: &str, need: u64, have: u64| -> Result<()> {
        if need > have {
            bail!(
                "{command} needs about {} of memory ({basis}), more than the {} left under {what}; \
                 use a smaller circuit or a larger machine",
                size(need),
                size(have),
            );
        }
        Ok(())
    };
    short(room.what, anon, room.anon)?;
    if let Some(asp) = room.address_space {
        short("the address-space limit (ulimit -v)", anon + mapped, asp)?;
    }
    Ok(())
}

/// Rows, variables and B-query points of a built-in circuit, estimated from its
/// spec alone (before synthesizing anything): (rows, variables, b points).
pub fn circuit_size(spec: &CircuitSpec) -> (u64, u64, u64) {
    match *spec {
        CircuitSpec::Cubic => (8, 8, 8),
        // Measured on bellpepper's gadget: ~134 rows a preimage byte, ~19,000 a
        // compression block (an upper bound within a few percent).
        CircuitSpec::Sha256 { bytes } => {
            let bytes = bytes as u64;
            let blocks = (bytes * 8 + 1 + 64).div_ceil(512);
            let rows = 134 * bytes + 19_000 * blocks + 100;
            (rows, rows, rows / 4)
        }
        CircuitSpec::Chain { log_rows } => {
            let m = 1u64 << log_rows;
            (m, m, m)
        }
        CircuitSpec::Multi { inputs } => {
            let n = inputs as u64;
            (4 * n + 8, 4 * n + 8, 4 * n + 8)
        }
    }
}

/// Bytes of the parameter file (and of the decoded parameters in memory) for a
/// circuit of this size.
pub fn params_bytes(rows: u64, vars: u64, b: u64) -> u64 {
    let m = rows.max(1).next_power_of_two();
    96 * (m + 2 * vars + b) + 192 * b
}

/// Fixed cost of a run: the binary, thread stacks, allocator arenas.
pub const BASE: u64 = 64 << 20;

/// `setup`'s peak: the parameters themselves, and beside them the QAP at τ (three
/// scalars a variable), τ's powers and the Lagrange coefficients (two a domain
/// element) and the recorded shape (about one scalar's bytes a row); the products
/// are normalised chunk by chunk, never held projective.
pub fn setup_bytes(spec: &CircuitSpec) -> (u64, String) {
    let (rows, vars, b) = circuit_size(spec);
    let m = rows.max(1).next_power_of_two();
    (
        BASE + params_bytes(rows, vars, b) + 32 * (3 * vars + 3 * m),
        format!("{} rows", rows_text(rows)),
    )
}

/// A proof's peak besides the parameters: the assignment (a, b, c, aux), the
/// H computation's buffers over the domain, the MSMs' buckets.
pub fn proof_bytes(domain: u64, vars: u64) -> u64 {
    32 * (8 * domain + 2 * vars)
}

pub fn rows_text(rows: u64) -> String {
    if rows.is_power_of_two() {
        format!("2^{}", rows.trailing_zeros())
    } else {
        format!("about {rows}")
    }
}

//! Registered proof numbers as Curio sends them (the FFI's `#[repr(i32)]` values of
//! Go's `abi.RegisteredSealProof`, `abi.RegisteredPoStProof`,
//! `abi.RegisteredUpdateProof`) and the filecoin-proofs-api types they name.

use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};

use crate::error::{FilecoinError, Result};

/// The seal proofs, in FFI order.
const SEAL: [RegisteredSealProof; 20] = {
    use RegisteredSealProof::*;
    [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ]
};

/// The PoSt proofs, in FFI order; the FFI's WindowPoSt `V1_1` (10–14) is the api's
/// `V1_2`, the grindability fix.
const POST: [RegisteredPoStProof; 15] = {
    use RegisteredPoStProof::*;
    [
        StackedDrgWinning2KiBV1,
        StackedDrgWinning8MiBV1,
        StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1,
        StackedDrgWindow8MiBV1,
        StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1,
        StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2,
        StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2,
        StackedDrgWindow64GiBV1_2,
    ]
};

const UPDATE: [RegisteredUpdateProof; 5] = {
    use RegisteredUpdateProof::*;
    [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
    ]
};

pub fn seal_proof(n: u64) -> Result<RegisteredSealProof> {
    lookup(&SEAL, n, "seal", "0–19")
}

pub fn seal_proof_number(p: RegisteredSealProof) -> u64 {
    SEAL.iter()
        .position(|&q| q == p)
        .expect("every seal proof is listed") as u64
}

pub fn post_proof(n: u64) -> Result<RegisteredPoStProof> {
    lookup(&POST, n, "PoSt", "0–14")
}

pub fn post_proof_number(p: RegisteredPoStProof) -> u64 {
    // The api's WindowPoSt V1_1 has no FFI number of its own.
    POST.iter()
        .position(|&q| q == p)
        .map_or(u64::MAX, |i| i as u64)
}

pub fn update_proof(n: u64) -> Result<RegisteredUpdateProof> {
    lookup(&UPDATE, n, "update", "0–4")
}

pub fn update_proof_number(p: RegisteredUpdateProof) -> u64 {
    UPDATE
        .iter()
        .position(|&q| q == p)
        .expect("every update proof is listed") as u64
}

fn lookup<T: Copy>(table: &[T], n: u64, what: &str, known: &str) -> Result<T> {
    usize::try_from(n)
        .ok()
        .and_then(|i| table.get(i).copied())
        .ok_or_else(|| {
            FilecoinError::input(format!(
                "unknown registered {what} proof {n} (known: {known})"
            ))
        })
}

/// "2KiB", "32GiB": a sector size as Filecoin names it.
pub fn sector_size_name(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{}GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => format!("{b}B"),
    }
}

/// Parses "2KiB", "32GiB", "2048": the sector sizes Filecoin knows.
pub fn parse_sector_size(text: &str) -> Result<u64> {
    const KNOWN: [u64; 5] = [2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30];
    let t = text.trim();
    let bytes = KNOWN
        .iter()
        .copied()
        .find(|&b| sector_size_name(b).eq_ignore_ascii_case(t))
        .or_else(|| t.parse::<u64>().ok().filter(|b| KNOWN.contains(b)));
    bytes.ok_or_else(|| {
        FilecoinError::input(format!(
            "unknown sector size {text:?} (known: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB)"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for n in 0..20 {
            assert_eq!(seal_proof_number(seal_proof(n).unwrap()), n);
        }
        for n in 0..15 {
            assert_eq!(post_proof_number(post_proof(n).unwrap()), n);
        }
        for n in 0..5 {
            assert_eq!(update_proof_number(update_proof(n).unwrap()), n);
        }
        assert!(seal_proof(20).is_err());
        assert_eq!(
            post_proof(10).unwrap(),
            RegisteredPoStProof::StackedDrgWindow2KiBV1_2
        );
        let e = update_proof(u64::MAX).unwrap_err().to_string();
        assert!(e.contains("unknown registered update proof"), "{e}");
    }

    #[test]
    fn sector_sizes() {
        assert_eq!(parse_sector_size("2KiB").unwrap(), 2048);
        assert_eq!(parse_sector_size("32gib").unwrap(), 32 << 30);
        assert_eq!(parse_sector_size("2048").unwrap(), 2048);
        assert!(parse_sector_size("3KiB").is_err());
        assert_eq!(sector_size_name(64 << 30), "64GiB");
    }
}

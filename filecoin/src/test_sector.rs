//! Test sectors: a small sector sealed with filecoin-proofs, and the inputs Curio
//! would send for it — the C1 output, PoSt vanilla proofs, SnapDeals partition
//! proofs — so that every kind can be tried in a minute without a Filecoin node.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use filecoin_proofs_api::{
    post, seal, update, PieceInfo, PrivateReplicaInfo, SectorId, UnpaddedBytesAmount,
};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use crate::error::{FilecoinError, Result};
use crate::{inputs, registered, PoRepRequest, PoStRequest, Registered, SnapRequest};

/// Which inputs to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestKind {
    PoRep,
    /// WinningPoSt and WindowPoSt.
    PoSt,
    Snap,
}

impl std::str::FromStr for TestKind {
    type Err = FilecoinError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "porep" => Ok(TestKind::PoRep),
            "post" => Ok(TestKind::PoSt),
            "snap" => Ok(TestKind::Snap),
            _ => Err(FilecoinError::input(format!(
                "unknown test-sector kind {s:?} (known: porep, post, snap)"
            ))),
        }
    }
}

/// A sealed test sector's inputs, as Curio would send them.
pub struct TestSector {
    pub miner_id: u64,
    pub sector_number: u64,
    pub registered: Registered,
    pub porep: Option<PoRepRequest>,
    pub winning: Option<PoStRequest>,
    pub window: Option<PoStRequest>,
    pub snap: Option<SnapRequest>,
}

/// The miner every test sector belongs to (f01000, Lotus's devnet miner).
pub const TEST_MINER: u64 = 1000;

/// Seals a sector of `sector_size` in `work` (a directory of its own) and makes the
/// inputs of `kinds`. Deterministic for a given seed.
pub fn make(sector_size: u64, kinds: &[TestKind], work: &Path, seed: u64) -> Result<TestSector> {
    let registered = Registered::for_sector_size(sector_size)?;
    let proof = registered.seal;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let fail = |what: &'static str| move |e| FilecoinError::filecoin(what, e);
    fs::create_dir_all(work).map_err(|e| FilecoinError::io(work, e))?;
    let prover_id = inputs::prover_id(TEST_MINER);
    let sector_number = 1 + rng.next_u64() % 1_000_000;
    let sector_id = SectorId::from(sector_number);
    let ticket = random32(&mut rng);

    let cache = fresh_dir(&work.join("cache"))?;
    let staged = work.join("staged");
    let sealed = work.join("sealed");
    let piece = write_piece(proof, &staged, sector_size, &mut rng)?;
    File::create(&sealed).map_err(|e| FilecoinError::io(&sealed, e))?;
    let p1 = seal::seal_pre_commit_phase1(
        proof,
        &cache,
        &staged,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        std::slice::from_ref(&piece),
    )
    .map_err(fail("sealing the test sector (pre-commit 1)"))?;
    let pre = seal::seal_pre_commit_phase2(p1, &cache, &sealed)
        .map_err(fail("sealing the test sector (pre-commit 2)"))?;
    let comm_r = pre.comm_r;

    let mut sector = TestSector {
        miner_id: TEST_MINER,
        sector_number,
        registered,
        porep: None,
        winning: None,
        window: None,
        snap: None,
    };
    if kinds.contains(&TestKind::PoRep) {
        let seed32 = random32(&mut rng);
        let c1 = seal::seal_commit_phase1(
            &cache,
            &sealed,
            prover_id,
            sector_id,
            ticket,
            seed32,
            pre.clone(),
            std::slice::from_ref(&piece),
        )
        .map_err(fail("the test sector's C1"))?;
        let inner = serde_json::to_vec(&c1).expect("a C1 output serializes");
        use base64::Engine as _;
        let wrapper = serde_json::json!({
            "SectorNum": sector_number,
            "Phase1Out": base64::engine::general_purpose::STANDARD.encode(inner),
            "SectorSize": sector_size,
        });
        sector.porep = Some(PoRepRequest {
            c1: serde_json::to_vec(&wrapper).expect("JSON serializes"),
            miner_id: TEST_MINER,
            sector_number: Some(sector_number),
            registered_proof: Some(registered::seal_proof_number(proof)),
            sector_size: Some(sector_size),
        });
    }
    if kinds.contains(&TestKind::PoSt) {
        for winning in [true, false] {
            let post_proof = if winning {
                registered.winning
            } else {
                registered.window
            };
            let randomness = random_field32(&mut rng);
            let challenges = post::generate_fallback_sector_challenges(
                post_proof,
                &randomness,
                &[sector_id],
                prover_id,
            )
            .map_err(fail("the test sector's PoSt challenges"))?;
            let replica =
                PrivateReplicaInfo::new(post_proof, comm_r, cache.clone(), sealed.clone());
            let vanilla = post::generate_single_vanilla_proof(
                post_proof,
                sector_id,
                &replica,
                &challenges[&sector_id],
            )
            .map_err(fail("the test sector's PoSt vanilla proof"))?;
            let request = PoStRequest {
                registered_proof: registered::post_proof_number(post_proof),
                miner_id: TEST_MINER,
                randomness: randomness.to_vec(),
                vanilla_proofs: vec![vanilla],
                partition_index: 0,
            };
            match winning {
                true => sector.winning = Some(request),
                false => sector.window = Some(request),
            }
        }
    }
    if kinds.contains(&TestKind::Snap) {
        let update_proof = registered.update;
        let new_staged = work.join("update-staged");
        let new_replica = work.join("update-sealed");
        let new_cache = fresh_dir(&work.join("update-cache"))?;
        let piece = write_piece(proof, &new_staged, sector_size, &mut rng)?;
        // filecoin-proofs writes the new replica in place, at the sector key's size.
        File::create(&new_replica)
            .and_then(|f| f.set_len(sector_size))
            .map_err(|e| FilecoinError::io(&new_replica, e))?;
        let encoded = update::empty_sector_update_encode_into(
            update_proof,
            &new_replica,
            &new_cache,
            &sealed,
            &cache,
            &new_staged,
            std::slice::from_ref(&piece),
        )
        .map_err(fail("encoding the test sector's update"))?;
        let proofs = update::generate_partition_proofs(
            update_proof,
            comm_r,
            encoded.comm_r_new,
            encoded.comm_d_new,
            &sealed,
            &cache,
            &new_replica,
            &new_cache,
        )
        .map_err(fail("the test sector's update vanilla proofs"))?;
        sector.snap = Some(SnapRequest {
            registered_proof: registered::update_proof_number(update_proof),
            vanilla_proofs: proofs.into_iter().map(|p| p.0).collect(),
            comm_r_old: comm_r.to_vec(),
            comm_r_new: encoded.comm_r_new.to_vec(),
            comm_d_new: encoded.comm_d_new.to_vec(),
        });
    }
    Ok(sector)
}

fn random32(rng: &mut ChaCha20Rng) -> [u8; 32] {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    b
}

/// 32 random bytes that are a canonical field element (PoSt randomness is one).
fn random_field32(rng: &mut ChaCha20Rng) -> [u8; 32] {
    let mut b = random32(rng);
    b[31] &= 0x3f;
    b
}

fn fresh_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    }
    fs::create_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    Ok(dir.to_path_buf())
}

/// Fills a staged sector file with one random piece of the whole sector.
fn write_piece(
    proof: filecoin_proofs_api::RegisteredSealProof,
    path: &Path,
    sector_size: u64,
    rng: &mut ChaCha20Rng,
) -> Result<PieceInfo> {
    let unpadded = sector_size / 128 * 127;
    let mut data = vec![0u8; unpadded as usize];
    rng.fill_bytes(&mut data);
    let mut target = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| FilecoinError::io(path, e))?;
    let (piece, _) = seal::add_piece(
        proof,
        data.as_slice(),
        &mut target,
        UnpaddedBytesAmount(unpadded),
        &[],
    )
    .map_err(|e| FilecoinError::filecoin("writing the test sector's piece", e))?;
    Ok(piece)
}

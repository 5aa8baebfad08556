//! Parameter sets by filecoin-proofs' names: found in the parameter cache and
//! read (the engine keeps what is read, once for every proof of its circuit);
//! and, for development, random (insecure) ones written under the same names.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crossgroth::groth16::{generate_random_parameters, Parameters, ParamsLengths};
use crossgroth::synthesis::Shape;
use crossgroth::{Circuit, Scalar};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use storage_proofs_core::parameter_cache::{metadata_id, parameter_id, verifying_key_id};

use crate::error::{FilecoinError, Result};
use crate::registered::sector_size_name;

/// Where filecoin-proofs looks for parameters unless told otherwise.
pub const DEFAULT_PARAMETER_CACHE: &str = "/var/tmp/filecoin-proof-parameters";

/// The label written beside random parameters: every file it lists is insecure.
pub const INSECURE_LABEL: &str = "CROSSGROTH-INSECURE-TEST-PARAMETERS.txt";

/// One circuit's parameter set, named as filecoin-proofs names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CircuitParams {
    /// "porep", "winning-post", "window-post", "snap".
    pub kind: &'static str,
    pub sector_size: u64,
    /// filecoin-proofs' cache id (`<prefix>-<sha256 of the public parameters>`).
    pub cache_id: String,
}

impl CircuitParams {
    pub fn new(kind: &'static str, sector_size: u64, cache_id: String) -> Self {
        CircuitParams {
            kind,
            sector_size,
            cache_id,
        }
    }

    /// "porep-2KiB": how operators name a circuit.
    pub fn label(&self) -> String {
        format!("{}-{}", self.kind, sector_size_name(self.sector_size))
    }

    /// `v28-<cache id>.params`.
    pub fn params_file(&self) -> String {
        parameter_id(&self.cache_id)
    }

    pub fn vk_file(&self) -> String {
        verifying_key_id(&self.cache_id)
    }

    fn meta_file(&self) -> String {
        metadata_id(&self.cache_id)
    }
}

/// A parameter directory: where each set's file is, and reading it. What is
/// read is kept by the engine (`Engine::acquire_set`), which loads a set once
/// and frees it on eviction; this type keeps nothing.
pub struct ParamsCache {
    dir: PathBuf,
    /// Where set: each file is checked against Filecoin's published digest
    /// before its first read.
    digests: Option<crate::digest::DigestCheck>,
}

impl ParamsCache {
    /// Opens a parameter directory. filecoin-proofs' verifiers read their keys from
    /// the directory it was configured with (`FIL_PROOFS_PARAMETER_CACHE`), so the
    /// two must agree: proofs are checked against the keys they were made with.
    pub fn open(dir: &Path) -> Result<Self> {
        let canonical = |p: &Path| p.canonicalize().map_err(|e| FilecoinError::io(p, e));
        let dir = canonical(dir)?;
        if !dir.is_dir() {
            return Err(FilecoinError::io(
                &dir,
                std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            ));
        }
        let theirs = storage_proofs_core::parameter_cache::parameter_cache_dir();
        let agree = theirs.canonicalize().map(|t| t == dir).unwrap_or(false);
        if !agree {
            return Err(FilecoinError::input(format!(
                "filecoin-proofs reads parameters from {} (FIL_PROOFS_PARAMETER_CACHE) but crossgroth was given {}: they must be the same directory",
                theirs.display(),
                dir.display()
            )));
        }
        Ok(ParamsCache { dir, digests: None })
    }

    /// Checks each parameter file against the digest Filecoin publishes for it
    /// before it is first read (filecoin-proofs' FIL_PROOFS_VERIFY_PRODUCTION_PARAMS).
    pub fn verifying_digests(mut self, on: bool) -> Self {
        self.digests = on.then(Default::default);
        self
    }

    /// Checks each parameter file with `check` before its first read.
    pub fn with_digest_check(mut self, check: crate::digest::DigestCheck) -> Self {
        self.digests = Some(check);
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, p: &CircuitParams) -> PathBuf {
        self.dir.join(p.params_file())
    }

    /// Fails, naming the file, when the circuit's parameter file is not there;
    /// else its size in bytes (about what the set holds in memory: bellperson's
    /// files keep points uncompressed).
    pub fn require(&self, p: &CircuitParams) -> Result<u64> {
        let path = self.path(p);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(m.len()),
            _ => Err(missing(&path, p)),
        }
    }

    /// Checks that the file's vector lengths fit the circuit, reading only its
    /// head: milliseconds, before gigabytes are read.
    pub fn check(&self, p: &CircuitParams, shape: &Shape) -> Result<()> {
        let path = self.path(p);
        let lengths = ParamsLengths::read_file(&path).map_err(|e| missing_or(&path, p, e))?;
        check_lengths(&path, p, lengths, shape)
    }

    /// Checks a loaded set's lengths against the circuit.
    pub fn check_loaded(
        &self,
        p: &CircuitParams,
        params: &Parameters,
        shape: &Shape,
    ) -> Result<()> {
        check_lengths(&self.path(p), p, params.lengths(), shape)
    }

    /// Reads the parameter set (memory-mapped while it is decoded).
    pub fn read(&self, p: &CircuitParams) -> Result<Parameters> {
        let path = self.path(p);
        if let Some(d) = &self.digests {
            d.check(&path)?;
        }
        let t = Instant::now();
        let params = Parameters::read_file(&path, false).map_err(|e| missing_or(&path, p, e))?;
        log::info!(
            "read the {} parameters {} in {:.1} s",
            p.label(),
            path.display(),
            t.elapsed().as_secs_f64()
        );
        Ok(params)
    }

    /// Whether the set's file was written by [`write_insecure`].
    pub fn is_insecure(&self, p: &CircuitParams) -> bool {
        insecure_files(&self.dir).contains(&p.params_file())
    }
}

fn check_lengths(
    path: &Path,
    p: &CircuitParams,
    lengths: ParamsLengths,
    shape: &Shape,
) -> Result<()> {
    lengths
        .check_shape(shape)
        .map_err(|e| FilecoinError::Params {
            path: path.to_path_buf(),
            reason: format!(
                "does not fit the {} circuit ({e}): it belongs to another circuit",
                p.label()
            ),
        })
}

fn missing(path: &Path, p: &CircuitParams) -> FilecoinError {
    FilecoinError::Params {
        path: path.to_path_buf(),
        reason: format!(
            "missing: the {} parameters are not in the parameter cache (fetch them, or write test ones with `crossgroth filecoin test-sector`)",
            p.label()
        ),
    }
}

fn missing_or(path: &Path, p: &CircuitParams, e: crossgroth::Error) -> FilecoinError {
    if !path.exists() {
        return missing(path, p);
    }
    FilecoinError::Params {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// The files the directory's insecure label lists.
fn insecure_files(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(INSECURE_LABEL))
        .map(|t| {
            t.lines()
                .filter(|l| l.starts_with("v28-"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Refuses to write random parameters where real ones live: filecoin-proofs would
/// load them silently and every proof would fail on chain.
fn refuse_real_cache(dir: &Path) -> Result<()> {
    let refuse = |why: String| {
        Err(FilecoinError::input(format!(
            "refusing to write insecure test parameters into {}: {why}",
            dir.display()
        )))
    };
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if canonical(dir) == canonical(Path::new(DEFAULT_PARAMETER_CACHE)) {
        return refuse("it is filecoin-proofs' default parameter cache".into());
    }
    let ours = insecure_files(dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_param =
            name.starts_with("v28-") && (name.ends_with(".params") || name.ends_with(".vk"));
        let stem_ours = |n: &str| {
            let stem = n.trim_end_matches(".vk").trim_end_matches(".params");
            ours.iter().any(|o| o.trim_end_matches(".params") == stem)
        };
        if is_param && !stem_ours(&name) {
            return refuse(format!("it holds {name}, which crossgroth did not write"));
        }
    }
    Ok(())
}

/// Writes random, insecure parameters for `blank` under filecoin-proofs' names
/// (`.params`, `.vk`, `.meta`) and lists them in the directory's label. A set the
/// label already lists is kept. Returns the `.params` path.
pub fn write_insecure<C: Circuit<Scalar>>(
    dir: &Path,
    p: &CircuitParams,
    blank: C,
    seed: u64,
    progress: Option<crossgroth::groth16::SetupProgress<'_>>,
) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| FilecoinError::io(dir, e))?;
    refuse_real_cache(dir)?;
    let params_path = dir.join(p.params_file());
    let listed = insecure_files(dir).contains(&p.params_file());
    if listed && params_path.is_file() && dir.join(p.vk_file()).is_file() {
        return Ok(params_path);
    }
    let t = Instant::now();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let params =
        generate_random_parameters(blank, &mut rng, progress).map_err(FilecoinError::Proving)?;
    log::info!(
        "generated insecure {} parameters in {:.1} s",
        p.label(),
        t.elapsed().as_secs_f64()
    );
    // The label first: a file is never in the directory without it.
    let label = dir.join(INSECURE_LABEL);
    let fresh = !label.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&label)
        .map_err(|e| FilecoinError::io(&label, e))?;
    if fresh {
        writeln!(
            f,
            "# Random Groth16 parameters written by crossgroth for tests. INSECURE: anyone\n\
             # can forge proofs with them, and real Filecoin verifiers reject their proofs.\n\
             # Never copy them into a real parameter cache. The files:"
        )
        .map_err(|e| FilecoinError::io(&label, e))?;
    }
    if !listed {
        writeln!(f, "{}", p.params_file()).map_err(|e| FilecoinError::io(&label, e))?;
    }
    drop(f);
    params
        .write_file(&params_path)
        .map_err(|e| FilecoinError::Params {
            path: params_path.clone(),
            reason: e.to_string(),
        })?;
    let vk_path = dir.join(p.vk_file());
    let mut vk = Vec::new();
    params.vk.write(&mut vk).map_err(FilecoinError::Proving)?;
    write_atomic(&vk_path, &vk)?;
    let meta = serde_json::json!({ "sector_size": p.sector_size }).to_string();
    write_atomic(&dir.join(p.meta_file()), meta.as_bytes())?;
    Ok(params_path)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| FilecoinError::io(dir, e))?;
    tmp.write_all(bytes)
        .map_err(|e| FilecoinError::io(path, e))?;
    tmp.persist(path)
        .map_err(|e| FilecoinError::io(path, e.error))?;
    Ok(())
}

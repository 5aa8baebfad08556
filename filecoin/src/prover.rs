//! Filecoin proofs as engine jobs: decode, plan, check the parameters, prove the
//! partitions together, verify with filecoin-proofs, return its bytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossgroth::engine::{Engine, Job, JobCanceller, JobHandle, Priority, SetLease};
use crossgroth::groth16::PROOF_BYTES;
use crossgroth::synthesis::RecordedShape;
use crossgroth::{Error, Scalar};
use filecoin_proofs::types::PoStType;

use crate::error::{FilecoinError, Result};
use crate::params::{CircuitParams, ParamsCache};
use crate::plan::Plan;
use crate::porep::PoRepRequest;
use crate::post::PoStRequest;
use crate::snap::SnapRequest;
use crate::{porep, post, snap};

/// One Filecoin proof to make.
#[derive(Clone, Debug)]
pub enum Request {
    PoRep(PoRepRequest),
    WinningPoSt(PoStRequest),
    WindowPoSt(PoStRequest),
    SnapDeals(SnapRequest),
}

impl Request {
    pub fn kind(&self) -> &'static str {
        match self {
            Request::PoRep(_) => "PoRep C2",
            Request::WinningPoSt(_) => "WinningPoSt",
            Request::WindowPoSt(_) => "WindowPoSt",
            Request::SnapDeals(_) => "SnapDeals",
        }
    }

    /// The engine priority Curio gives the kind: WinningPoSt is due within its
    /// epoch, WindowPoSt within its deadline.
    pub fn default_priority(&self) -> Priority {
        match self {
            Request::WinningPoSt(_) => Priority::Critical,
            Request::WindowPoSt(_) => Priority::High,
            Request::PoRep(_) | Request::SnapDeals(_) => Priority::Normal,
        }
    }

    fn plan(&self) -> Result<Plan> {
        match self {
            Request::PoRep(r) => porep::plan(r),
            Request::WinningPoSt(r) => post::plan(r, PoStType::Winning),
            Request::WindowPoSt(r) => post::plan(r, PoStType::Window),
            Request::SnapDeals(r) => snap::plan(r),
        }
    }
}

/// How the Filecoin prover runs.
#[derive(Clone, Debug)]
pub struct FilecoinOptions {
    /// Record a circuit's shape on its first proof and synthesize later proofs'
    /// witnesses only, for the kinds where that is faster: PoRep C2 and SnapDeals
    /// (a PoSt circuit's witness pass costs as much as its direct synthesis).
    /// Default on.
    pub recorded_shapes: bool,
    /// Record the PoSt circuits' shapes too (tests of the recorded path).
    pub record_every_kind: bool,
    /// Where recorded shapes are kept between runs (one file a parameter set),
    /// so that a restart reads them instead of recording them again. None:
    /// in memory only.
    pub shapes_dir: Option<std::path::PathBuf>,
}

impl Default for FilecoinOptions {
    fn default() -> Self {
        FilecoinOptions {
            recorded_shapes: true,
            record_every_kind: false,
            shapes_dir: None,
        }
    }
}

/// A finished proof: filecoin-proofs' bytes, verified.
#[derive(Clone, Debug)]
pub struct Output {
    pub proof: Vec<u8>,
    pub partitions: usize,
    /// The circuit, as operators name it ("porep-2KiB").
    pub circuit: String,
    pub timings: Timings,
    /// Whether this proof recorded its circuit's shape (the first of its kind).
    pub recorded_shape: bool,
    /// Whether the parameters were crossgroth's insecure test parameters.
    pub insecure_params: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// Decoding the inputs and building the circuits (and recording the shape).
    pub prepare: Duration,
    pub params_load: Duration,
    /// Synthesis and proving of all partitions in the engine.
    pub prove: Duration,
    pub verify: Duration,
    pub total: Duration,
}

/// Proves Filecoin requests through a crossgroth engine. The engine keeps the
/// parameter sets and recorded shapes between proofs; this prover says which set
/// a request needs and how to read it.
pub struct FilecoinProver {
    engine: Arc<Engine>,
    params: ParamsCache,
    options: FilecoinOptions,
}

impl FilecoinProver {
    pub fn new(engine: Arc<Engine>, params: ParamsCache, options: FilecoinOptions) -> Self {
        FilecoinProver {
            engine,
            params,
            options,
        }
    }

    pub fn params(&self) -> &ParamsCache {
        &self.params
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The parameter set of `p`, resident in the engine (read now unless it is
    /// already): a lease that keeps it there, and the time this call took.
    /// Where the set's recorded shape is kept in
    /// [`FilecoinOptions::shapes_dir`], it is read beside the parameters (both
    /// reserved in the budget first) and held with the set.
    pub fn acquire(&self, p: &CircuitParams) -> Result<(SetLease, Duration)> {
        let bytes = self.params.require(p)?;
        let kept = self
            .options
            .shapes_dir
            .as_deref()
            .map(|dir| crate::plan::ShapeFile::of(p, dir))
            .and_then(|f| Some((f.path.metadata().ok()?.len(), f)));
        let shape_bytes = kept.as_ref().map_or(0, |(len, _)| *len);
        // The reader's own error, which names the file, is the one returned.
        let mut read_error = None;
        let load = || {
            std::thread::scope(|scope| {
                let shape = kept
                    .as_ref()
                    .map(|(len, f)| scope.spawn(move || crate::plan::read_kept(f, *len)));
                let params = self.params.read(p).map_err(|e| {
                    let message = e.to_string();
                    read_error = Some(e);
                    Error::Invalid(message)
                })?;
                let shape = shape
                    .and_then(|h| h.join().ok().flatten())
                    .zip(kept.as_ref())
                    .and_then(|(s, (_, f))| crate::plan::fits(s, f, &params))
                    .map(Arc::new);
                Ok((params, shape))
            })
        };
        let acquired =
            self.engine
                .acquire_set_with_shape(&p.cache_id, (bytes + shape_bytes) as usize, load);
        acquired.map_err(|e| {
            read_error.take().unwrap_or_else(|| FilecoinError::Params {
                path: self.params.path(p),
                reason: e.to_string(),
            })
        })
    }

    /// Loads `p`'s parameter set and, where its recorded shape is kept in
    /// [`FilecoinOptions::shapes_dir`], the shape: what a daemon does at start
    /// for the sets it is told to preload. Returns the set's load time (zero if
    /// it was resident) and whether a recorded shape is now held with it.
    pub fn preload(&self, p: &CircuitParams) -> Result<(Duration, bool)> {
        let (lease, took) = self.acquire(p)?;
        Ok((took, lease.shape().is_some()))
    }

    /// Proves `request` as job `id` (r and s from the operating system).
    pub fn prove(&self, id: &str, request: &Request, priority: Priority) -> Result<Output> {
        self.run(id, request, priority, None)
    }

    /// Proves with explicit r and s per partition, so that the bytes can be compared
    /// with another prover's on the same circuits.
    pub fn prove_with_randomness(
        &self,
        id: &str,
        request: &Request,
        r: Vec<Scalar>,
        s: Vec<Scalar>,
    ) -> Result<Output> {
        self.run(id, request, request.default_priority(), Some((r, s)))
    }

    fn run(
        &self,
        id: &str,
        request: &Request,
        priority: Priority,
        randomness: Option<(Vec<Scalar>, Vec<Scalar>)>,
    ) -> Result<Output> {
        let submitted = self.submit_with(id, request, priority, randomness)?;
        futures::executor::block_on(submitted.finish())
    }

    /// Builds `request`'s circuits and hands them to the engine as job `id`,
    /// blocking while its parameters are read (or its shape recorded); the
    /// proof is then awaited with [`Submitted::finish`].
    pub fn submit(&self, id: &str, request: &Request, priority: Priority) -> Result<Submitted> {
        self.submit_with(id, request, priority, None)
    }

    fn submit_with(
        &self,
        id: &str,
        request: &Request,
        priority: Priority,
        randomness: Option<(Vec<Scalar>, Vec<Scalar>)>,
    ) -> Result<Submitted> {
        let start = Instant::now();
        let mut plan = request.plan()?;
        let planned = start.elapsed();
        // A missing file is said before gigabytes are read or any synthesis.
        self.params.require(&plan.params)?;
        let (lease, params_load) = self.acquire(&plan.params)?;
        let t = Instant::now();
        let record =
            self.options.recorded_shapes && (plan.recording_pays || self.options.record_every_kind);
        let units = plan.units(record.then_some(&lease), self.options.shapes_dir.as_deref())?;
        if let Some(shape) = &units.shape {
            self.params
                .check_loaded(&plan.params, lease.params(), &shape.shape())?;
        }
        let prepare = planned + t.elapsed();
        let mut job = Job::from_synthesizers(id, lease.params().clone(), units.synthesizers)
            .with_priority(priority);
        if let Some(shape) = &units.shape {
            job = job.with_recorded_shape(shape.clone());
        }
        if let Some((r, s)) = randomness {
            job = job.with_randomness(r, s);
        }
        let params_path = self.params.path(&plan.params);
        let handle = self
            .engine
            .submit(job)
            .map_err(|e| explain(e, &plan, units.shape.as_deref(), &params_path))?;
        Ok(Submitted {
            id: id.to_string(),
            kind: request.kind(),
            insecure: self.params.is_insecure(&plan.params),
            plan,
            lease,
            shape: units.shape,
            recorded_now: units.recorded_now,
            params_path,
            handle,
            start,
            submitted: Instant::now(),
            prepare,
            params_load,
        })
    }
}

/// A Filecoin proof in the engine: its handle, and what turns the engine's
/// proofs into filecoin-proofs' bytes once they are out. It keeps the
/// parameter set resident until then.
pub struct Submitted {
    id: String,
    kind: &'static str,
    plan: Plan,
    lease: SetLease,
    shape: Option<Arc<RecordedShape>>,
    recorded_now: bool,
    insecure: bool,
    params_path: PathBuf,
    handle: JobHandle,
    start: Instant,
    submitted: Instant,
    prepare: Duration,
    params_load: Duration,
}

impl Submitted {
    /// What cancels the job while it is awaited.
    pub fn canceller(&self) -> JobCanceller {
        self.handle.canceller()
    }

    /// Awaits the engine's proofs, then has filecoin-proofs' verifier check
    /// their bytes (milliseconds, on the caller's thread).
    pub async fn finish(self) -> Result<Output> {
        let Submitted {
            id,
            kind,
            mut plan,
            lease,
            shape,
            recorded_now,
            insecure,
            params_path,
            handle,
            start,
            submitted,
            prepare,
            params_load,
        } = self;
        let proofs = handle
            .await
            .map_err(|e| explain(e, &plan, shape.as_deref(), &params_path))?;
        // The set may be evicted once the proofs are out.
        drop(lease);
        let prove = submitted.elapsed();
        let mut bytes = Vec::with_capacity(proofs.len() * PROOF_BYTES);
        for p in &proofs {
            bytes.extend_from_slice(&p.to_bytes());
        }
        let t = Instant::now();
        plan.verify(&bytes)?;
        let verify = t.elapsed();
        let timings = Timings {
            prepare,
            params_load,
            prove,
            verify,
            total: start.elapsed(),
        };
        log::info!(
            "crossgroth-filecoin job={id} kind={kind} circuit={} partitions={} prepare_ms={} params_ms={} prove_ms={} verify_ms={} total_ms={}",
            plan.params.label(),
            plan.partitions,
            timings.prepare.as_millis(),
            timings.params_load.as_millis(),
            timings.prove.as_millis(),
            timings.verify.as_millis(),
            timings.total.as_millis()
        );
        Ok(Output {
            proof: bytes,
            partitions: plan.partitions,
            circuit: plan.params.label(),
            timings,
            recorded_shape: recorded_now,
            insecure_params: insecure,
        })
    }
}

/// Names what an engine error is about in Filecoin's terms.
fn explain(
    e: Error,
    plan: &Plan,
    shape: Option<&RecordedShape>,
    params_path: &Path,
) -> FilecoinError {
    match e {
        Error::Unsatisfied { row, path, circuit } => FilecoinError::Unsatisfied {
            partition: circuit.unwrap_or(0),
            partitions: plan.partitions,
            row,
            name: path
                .or_else(|| shape.and_then(|s| s.row_name(row)))
                .filter(|n| !n.is_empty()),
        },
        e @ Error::ParamsMismatch { .. } => FilecoinError::Params {
            path: params_path.to_path_buf(),
            reason: format!(
                "does not fit the {} circuit ({e}): it belongs to another circuit",
                plan.params.label()
            ),
        },
        e => FilecoinError::Proving(e),
    }
}

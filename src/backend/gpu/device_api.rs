//! The contract a GPU crate fulfils for [`GpuBackend`](super::GpuBackend): its
//! operations in blst's types and its own errors.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use blst::blst_fr;

use crate::backend::{Curve, MsmGroup, Placement, WitnessPart};
use crate::error::Result;
use crate::synthesis::RecordedShape;

/// What a GPU crate offers, in its own types and errors.
pub trait DeviceApi: Send + Sync + 'static {
    const NAME: &'static str;
    /// Bases of one group as the crate keeps them.
    type Bases<C: Curve>: Send + Sync + 'static;
    type Error: std::fmt::Display;

    /// Whether an error means "no such device here" rather than a failure.
    fn is_unavailable(e: &Self::Error) -> bool;
    /// Whether an error leaves the device context unusable (a CUDA launch error
    /// poisons the whole context; a lost wgpu device is gone): the adapter then
    /// rebuilds the context.
    fn is_fatal(e: &Self::Error) -> bool;
    fn describe(&self) -> String;
    /// Spoils the device context as a kernel fault would (a drill); None: the
    /// crate cannot.
    fn inject_fault_for_tests(&self) -> Option<Result<(), Self::Error>> {
        None
    }
    /// Whether the crate has kernels for a setup's fixed-base products.
    const SETUP: bool = false;
    /// A setup's fixed-base products on this device (the crates'
    /// `fixed_base_mul`); None: the crate has no kernels for them.
    fn fixed_base_mul<C: Curve>(
        &self,
        _table: &[C::Affine],
        _scalars: &[blst_fr],
        _out: &mut [C::Affine],
    ) -> Option<Result<(), Self::Error>> {
        None
    }
    /// Whether the crate can stream bases from host memory.
    const STREAMS: bool = false;
    /// The most precomputed copies per base the crate makes (1: none).
    fn max_table_copies(&self) -> u32 {
        1
    }
    /// Device bytes `len` resident bases with at most `max_copies` copies take.
    fn resident_bytes<C: Curve>(&self, len: usize, max_copies: u32) -> usize {
        let _ = max_copies;
        len * C::AFFINE_BYTES
    }
    /// Device bytes an MSM of `len` terms needs beside its bases.
    fn msm_scratch_bytes(&self, len: usize) -> usize {
        let _ = len;
        0
    }
    /// Bases kept where `placement` says (streamed only where [`Self::STREAMS`]).
    fn upload<C: MsmGroup>(
        &self,
        bases: &Arc<Vec<C::Base>>,
        placement: Placement,
    ) -> Result<Self::Bases<C>, Self::Error>;
    fn bases_len<C: Curve>(bases: &Self::Bases<C>) -> usize;
    /// `Σ scalars[i] · bases[first + rank(i)]` (rank: the crates' `msm`): an input
    /// whose bases begin at `first` (the auxiliary part of A and B, after the
    /// inputs' bases).
    fn msm<C: Curve>(
        &self,
        bases: &Self::Bases<C>,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Result<C::Point, Self::Error>;
    /// The host's share of [`Self::msm`] made ahead (the crate's type, for
    /// [`Self::msm_split`]). None: the crate's MSM has no such share.
    fn split_ahead(
        &self,
        nbases: usize,
        first: usize,
        scalars: &[blst_fr],
        density: Option<&[u64]>,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, Self::Error>> {
        let _ = (nbases, first, scalars, density);
        None
    }
    /// [`Self::msm`] of `scalars` from what [`Self::split_ahead`] made of them
    /// (None: not the crate's type).
    fn msm_split<C: Curve>(
        &self,
        bases: &Self::Bases<C>,
        first: usize,
        scalars: &[blst_fr],
        split: &(dyn Any + Send + Sync),
    ) -> Option<Result<C::Point, Self::Error>> {
        let _ = (bases, first, scalars, split);
        None
    }
    fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), Self::Error>;
    fn compute_h(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<Vec<blst_fr>, Self::Error>;
    /// compute_h with H's 2^log_m − 1 coefficients written over a (at least
    /// that long); a crate that can download into a's memory saves a fresh
    /// vector's page faults and a copy.
    fn compute_h_in_place(
        &self,
        a: &mut [blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Result<(), Self::Error> {
        let h = self.compute_h(a, b, c, log_m)?;
        a[..h.len()].copy_from_slice(&h);
        Ok(())
    }
    /// compute_h with H kept on the device (the crate's type, for
    /// [`Self::msm_witness`] of [`WitnessPart::H`]). None: the crate brings H
    /// back.
    fn compute_h_on_device(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, Self::Error>> {
        let _ = (a, b, c, log_m);
        None
    }
    /// Whether [`Self::stage_abc`] sends a, b and c ahead.
    const STAGES_ABC: bool = false;
    /// a, b and c written to the device beside the work other threads run
    /// there (the crate's staged type, for [`Self::compute_h_staged`]). None:
    /// the crate does not stage them.
    fn stage_abc(
        &self,
        a: &[blst_fr],
        b: &[blst_fr],
        c: &[blst_fr],
        log_m: u32,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, Self::Error>> {
        let _ = (a, b, c, log_m);
        None
    }
    /// [`Self::compute_h_on_device`] from a, b and c [`Self::stage_abc`] sent
    /// ahead (None: not the crate's staged type).
    fn compute_h_staged(
        &self,
        staged: Box<dyn Any + Send + Sync>,
    ) -> Option<Result<Box<dyn Any + Send + Sync>, Self::Error>> {
        let _ = staged;
        None
    }
    /// Device bytes `shape`'s constraint matrices take resident, where the
    /// crate computes a, b and c from a witness (None: it does not).
    fn matrices_bytes(&self, shape: &RecordedShape) -> Option<usize> {
        let _ = shape;
        None
    }
    /// `shape`'s matrices on the device (None: the crate does not hold them).
    fn upload_matrices(
        &self,
        shape: &RecordedShape,
    ) -> Option<Result<Arc<dyn Any + Send + Sync>, Self::Error>> {
        let _ = shape;
        None
    }
    /// Whether [`Self::stage_witness`] sends witnesses ahead.
    const STAGES_WITNESSES: bool = false;
    /// A witness of the shape of matrices [`Self::upload_matrices`] made, sent
    /// to the device beside the work other threads run there (the crate's
    /// staged type, for [`Self::witness_h`]). None: the crate does not stage.
    fn stage_witness(
        &self,
        matrices: &(dyn Any + Send + Sync),
        input: &[blst_fr],
        aux: &[blst_fr],
    ) -> Option<Result<Box<dyn Any + Send + Sync>, Self::Error>> {
        let _ = (matrices, input, aux);
        None
    }
    /// H from a witness and matrices [`Self::upload_matrices`] made, kept on
    /// the device with the witness (the crate's witness type, for
    /// [`Self::msm_witness`]); with `check`, the first unsatisfied row instead
    /// where there is one. `staged`: the same witness [`Self::stage_witness`]
    /// sent ahead, used instead of `input` and `aux`. None: the crate does not
    /// hold matrices.
    #[allow(clippy::type_complexity)]
    fn witness_h(
        &self,
        matrices: &(dyn Any + Send + Sync),
        input: &[blst_fr],
        aux: &[blst_fr],
        staged: Option<Box<dyn Any + Send + Sync>>,
        log_m: u32,
        check: bool,
    ) -> Option<Result<Result<Box<dyn Any + Send + Sync>, usize>, Self::Error>> {
        let _ = (matrices, input, aux, staged, log_m, check);
        None
    }
    /// Whether a witness [`Self::witness_h`] made keeps its input and aux on
    /// the device for [`Self::msm_witness`] (else it holds H alone, and the
    /// other MSMs read the host's copy).
    const WITNESS_KEEPS_INPUTS: bool = false;
    /// [`Self::msm`] of one of the vectors of a witness [`Self::witness_h`]
    /// made, read on the device (None: not such a witness).
    fn msm_witness<C: Curve>(
        &self,
        bases: &Self::Bases<C>,
        first: usize,
        witness: &(dyn Any + Send + Sync),
        part: WitnessPart,
        density: Option<&[u64]>,
    ) -> Option<Result<C::Point, Self::Error>> {
        let _ = (bases, first, witness, part, density);
        None
    }
    /// Whether [`Self::time`] counts only the calling thread's device work
    /// (wgpu's timestamps a thread), not everything the device ran between
    /// its start and end (cuda's events on the backend's one stream).
    const CLOCK_PER_THREAD: bool = false;
    /// Runs `work`, returning its result and the device time it took.
    fn time(
        &self,
        work: &mut dyn FnMut() -> Result<()>,
    ) -> Result<(Result<()>, Duration), Self::Error>;
    fn memory(&self) -> Option<(usize, usize)>;
    /// [`crate::backend::Backend::memory_report`].
    fn memory_report(&self) -> Option<(usize, usize)> {
        self.memory()
    }
    /// Builds what the crate would build on first use.
    fn warm_up(&self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The part of a [`DeviceApi`] impl that only forwards to the crate's methods of the
/// same shape (both GPU crates name them alike).
macro_rules! forward_device_api {
    ($dev:ty, $e:ty) => {
        fn bases_len<C: Curve>(bases: &Self::Bases<C>) -> usize {
            bases.len()
        }
        fn msm<C: Curve>(&self, b: &Self::Bases<C>, first: usize, s: &[blst_fr], d: Option<&[u64]>) -> Result<C::Point, $e> {
            <$dev>::msm::<C>(self, b, first, s, d)
        }
        fn ntt(&self, data: &mut [blst_fr], log_n: u32, inverse: bool) -> Result<(), $e> {
            <$dev>::ntt(self, data, log_n, inverse)
        }
        fn fixed_base_mul<C: Curve>(&self, table: &[C::Affine], scalars: &[blst_fr], out: &mut [C::Affine]) -> Option<Result<(), $e>> {
            Some(<$dev>::fixed_base_mul::<C>(self, table, scalars, out))
        }
        fn compute_h(&self, a: &[blst_fr], b: &[blst_fr], c: &[blst_fr], log_m: u32) -> Result<Vec<blst_fr>, $e> {
            <$dev>::compute_h(self, a, b, c, log_m)
        }
        fn compute_h_in_place(&self, a: &mut [blst_fr], b: &[blst_fr], c: &[blst_fr], log_m: u32) -> Result<(), $e> {
            <$dev>::compute_h_in_place(self, a, b, c, log_m)
        }
        fn time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<(Result<()>, Duration), $e> {
            <$dev>::time(self, |_| Ok(work()))
        }
    };
}

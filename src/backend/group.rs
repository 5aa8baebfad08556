//! The two groups an MSM runs over, in blstrs' types, tied to their blst twins
//! (`crossgroth_gpu_host::{G1, G2}`), so that bases, MSMs and their results
//! are written once for both groups.

use std::any::Any;
use std::sync::Arc;

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
pub use crossgroth_gpu_host::{Curve, Group, G1, G2};

use crate::error::{Error, Result};
use crate::{G1Affine, G1Projective, G2Affine, G2Projective};

/// What a backend keeps for a set of bases on its device (None: nothing, the
/// host copy is what it reads).
pub type DeviceBases = Option<Arc<dyn Any + Send + Sync>>;

/// A set of bases prepared by a backend: the host copy (None where the
/// backend keeps them resident and was told the host copy may go), and what
/// the backend keeps on its device.
pub struct Bases<C: MsmGroup> {
    pub host: Option<Arc<Vec<C::Base>>>,
    pub device: DeviceBases,
}

impl<C: MsmGroup> Bases<C> {
    /// The host copy, or an error saying the device holds the only one.
    pub fn host(&self) -> Result<&Arc<Vec<C::Base>>> {
        self.host.as_ref().ok_or_else(|| {
            Error::Invalid(format!(
                "these {} bases were released from host memory once a device held them",
                C::NAME
            ))
        })
    }
}

impl<C: MsmGroup> Clone for Bases<C> {
    fn clone(&self) -> Self {
        Bases {
            host: self.host.clone(),
            device: self.device.clone(),
        }
    }
}

pub type G1Bases = Bases<G1>;
pub type G2Bases = Bases<G2>;

/// Host bases of either group, for the object-safe [`super::Backend`] calls.
#[derive(Clone)]
pub enum HostBases {
    G1(Arc<Vec<G1Affine>>),
    G2(Arc<Vec<G2Affine>>),
}

impl HostBases {
    pub fn len(&self) -> usize {
        match self {
            HostBases::G1(b) => b.len(),
            HostBases::G2(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn group(&self) -> Group {
        match self {
            HostBases::G1(_) => Group::G1,
            HostBases::G2(_) => Group::G2,
        }
    }
}

/// Prepared bases of either group.
#[derive(Clone, Copy)]
pub enum BasesRef<'a> {
    G1(&'a G1Bases),
    G2(&'a G2Bases),
}

/// MSM results of either group.
#[derive(Clone)]
pub enum Sums {
    G1(Vec<G1Projective>),
    G2(Vec<G2Projective>),
}

/// Where a backend is told to keep a set of bases (decided by the engine's
/// placement, never by the backend).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// On the device, with at most `max_copies` points per base (1: the plain
    /// bases; more: a table of precomputed copies, on a backend that makes them).
    Resident { max_copies: u32 },
    /// In host memory, moved to the device by every MSM (a backend that cannot
    /// stream keeps them resident).
    Streamed,
}

impl Placement {
    pub const PLAIN: Placement = Placement::Resident { max_copies: 1 };
}

/// A group as the prover sees it: blstrs' affine bases and projective sums,
/// and their blst twins for the GPU crates.
pub trait MsmGroup: Curve + Sized {
    /// blstrs' affine point (`repr(transparent)` over `Curve::Affine`).
    type Base: Copy + Send + Sync + 'static;
    /// blstrs' projective point (`repr(transparent)` over `Curve::Point`).
    type Output: Copy
        + Send
        + Sync
        + PartialEq
        + std::fmt::Debug
        + std::ops::Add<Output = Self::Output>;

    /// The bases as blst's type, borrowed (no copy).
    fn raw(bases: &[Self::Base]) -> &[<Self as Curve>::Affine];
    fn raw_mut(bases: &mut [Self::Base]) -> &mut [<Self as Curve>::Affine];
    fn from_raw(p: <Self as Curve>::Point) -> Self::Output;
    fn host(bases: Arc<Vec<Self::Base>>) -> HostBases;
    fn wrap(bases: &Bases<Self>) -> BasesRef<'_>;
    fn unwrap(sums: Sums) -> Result<Vec<Self::Output>>;
}

fn wrong_group(want: &str) -> Error {
    Error::Invalid(format!(
        "a backend returned the other group's sums for a {want} MSM"
    ))
}

impl MsmGroup for G1 {
    type Base = G1Affine;
    type Output = G1Projective;
    fn raw(bases: &[G1Affine]) -> &[blst_p1_affine] {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
        unsafe { std::slice::from_raw_parts(bases.as_ptr() as *const blst_p1_affine, bases.len()) }
    }
    fn raw_mut(bases: &mut [G1Affine]) -> &mut [blst_p1_affine] {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine.
        unsafe {
            std::slice::from_raw_parts_mut(bases.as_mut_ptr() as *mut blst_p1_affine, bases.len())
        }
    }
    fn from_raw(p: blst_p1) -> G1Projective {
        // SAFETY: G1Projective is repr(transparent) over blst_p1.
        unsafe { std::mem::transmute::<blst_p1, G1Projective>(p) }
    }
    fn host(bases: Arc<Vec<G1Affine>>) -> HostBases {
        HostBases::G1(bases)
    }
    fn wrap(bases: &G1Bases) -> BasesRef<'_> {
        BasesRef::G1(bases)
    }
    fn unwrap(sums: Sums) -> Result<Vec<G1Projective>> {
        match sums {
            Sums::G1(v) => Ok(v),
            Sums::G2(_) => Err(wrong_group("G1")),
        }
    }
}

impl MsmGroup for G2 {
    type Base = G2Affine;
    type Output = G2Projective;
    fn raw(bases: &[G2Affine]) -> &[blst_p2_affine] {
        // SAFETY: G2Affine is repr(transparent) over blst_p2_affine.
        unsafe { std::slice::from_raw_parts(bases.as_ptr() as *const blst_p2_affine, bases.len()) }
    }
    fn raw_mut(bases: &mut [G2Affine]) -> &mut [blst_p2_affine] {
        // SAFETY: G2Affine is repr(transparent) over blst_p2_affine.
        unsafe {
            std::slice::from_raw_parts_mut(bases.as_mut_ptr() as *mut blst_p2_affine, bases.len())
        }
    }
    fn from_raw(p: blst_p2) -> G2Projective {
        // SAFETY: G2Projective is repr(transparent) over blst_p2.
        unsafe { std::mem::transmute::<blst_p2, G2Projective>(p) }
    }
    fn host(bases: Arc<Vec<G2Affine>>) -> HostBases {
        HostBases::G2(bases)
    }
    fn wrap(bases: &G2Bases) -> BasesRef<'_> {
        BasesRef::G2(bases)
    }
    fn unwrap(sums: Sums) -> Result<Vec<G2Projective>> {
        match sums {
            Sums::G2(v) => Ok(v),
            Sums::G1(_) => Err(wrong_group("G2")),
        }
    }
}

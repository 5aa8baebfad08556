//! One query of a parameter set (H, L, A, B_G1 or B_G2): its length, always,
//! and its points in host memory until they are released.
//!
//! A device that keeps a query resident needs no host copy to prove with it,
//! and at Filecoin scale the host copies are most of a proving host's memory
//! (47.4 GB for a 32 GiB PoRep partition). The engine can therefore release
//! them once every device holds them ([`crate::groth16::placement::PlacementConfig`]);
//! whatever needs the points afterwards (writing the file, the CPU, a device
//! rebuilt after a fault) gets an error naming the query instead of them.

use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};

pub struct Query<T> {
    name: &'static str,
    len: usize,
    points: RwLock<Option<Arc<Vec<T>>>>,
}

impl<T> Query<T> {
    pub fn new(name: &'static str, points: Vec<T>) -> Self {
        Query {
            name,
            len: points.len(),
            points: RwLock::new(Some(Arc::new(points))),
        }
    }

    /// The query's name in bellperson's layout (`h`, `l`, `a`, `b_g1`, `b_g2`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The points in host memory, or an error saying they were released.
    pub fn host(&self) -> Result<Arc<Vec<T>>> {
        self.points
            .read()
            .unwrap()
            .clone()
            .ok_or(Error::HostCopyReleased(self.name))
    }

    pub fn is_on_host(&self) -> bool {
        self.points.read().unwrap().is_some()
    }

    /// Drops this query's host copy; the bytes it frees now (0 where it was
    /// released already, or where someone else still holds the points: they
    /// are freed when that holder lets go).
    pub fn release_host(&self) -> usize {
        match self.points.write().unwrap().take() {
            Some(points) => match Arc::try_unwrap(points) {
                Ok(v) => v.capacity() * std::mem::size_of::<T>(),
                Err(_) => 0,
            },
            None => 0,
        }
    }

    /// Bytes of host memory the points take while they are held.
    pub fn host_bytes(&self) -> usize {
        if self.is_on_host() {
            self.len * std::mem::size_of::<T>()
        } else {
            0
        }
    }
}

impl<T> Clone for Query<T> {
    fn clone(&self) -> Self {
        Query {
            name: self.name,
            len: self.len,
            points: RwLock::new(self.points.read().unwrap().clone()),
        }
    }
}

/// Equal lengths, and equal points where both hold them (a released copy
/// compares equal to nothing but another released copy of the same length).
impl<T: PartialEq> PartialEq for Query<T> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.points.read().unwrap(), other.points.read().unwrap());
        self.name == other.name
            && self.len == other.len
            && match (&*a, &*b) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                (None, None) => true,
                _ => false,
            }
    }
}

impl<T: Eq> Eq for Query<T> {}

impl<T> std::fmt::Debug for Query<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("name", &self.name)
            .field("len", &self.len)
            .field("on_host", &self.is_on_host())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_query_keeps_its_length_and_names_itself() {
        let q = Query::new("l", vec![1u64, 2, 3]);
        assert_eq!(q.host().unwrap().as_slice(), &[1, 2, 3]);
        let copy = q.clone();
        assert_eq!(q, copy);
        // The clone shares the points: releasing one frees nothing yet.
        assert_eq!(q.release_host(), 0);
        assert_eq!(q.len(), 3);
        assert!(!q.is_on_host() && copy.is_on_host());
        assert_ne!(q, copy);
        assert_eq!(copy.release_host(), 24);
        assert_eq!(q, copy);
        let e = q.host().unwrap_err().to_string();
        assert!(e.contains("parameters' l query was released"), "{e}");
        assert_eq!(q.host_bytes(), 0);
    }
}

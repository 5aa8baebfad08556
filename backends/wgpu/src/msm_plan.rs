//! The MSM's host side before the device pass: the scalars split into zeros
//! (dropped), ones (summed apart) and the rest, the window size (a cost model
//! fitted to measurements) and the chunk length of the bucket accumulation.

use blst::blst_fr;

use crate::error::WgpuError;

/// The scalars as the device pass takes them: `sc` (neither 0 nor 1) with the
/// rank of each one's base in `idx`, and the base ranks of the scalars 1 in
/// `ones`; a scalar's base rank counts the included variables before it (all
/// of them without a density). `sc` borrows the scalars where every one of
/// them is in it (a dense vector such as H's: gigabytes not copied), and
/// their ranks are then consecutive, not listed.
#[derive(Debug, PartialEq)]
pub(crate) struct Split<'a> {
    pub idx: Ranks,
    pub sc: std::borrow::Cow<'a, [blst_fr]>,
    pub ones: Vec<u32>,
}

/// A [`Split`] seen by the device passes: its parts borrowed, wherever they
/// live (a split just made, or one made ahead with the scalars it came from).
#[derive(Clone, Copy)]
pub(crate) struct SplitRef<'a> {
    pub idx: &'a Ranks,
    pub sc: &'a [blst_fr],
    pub ones: &'a [u32],
}

impl<'a> Split<'a> {
    pub fn as_ref(&'a self) -> SplitRef<'a> {
        SplitRef {
            idx: &self.idx,
            sc: &self.sc,
            ones: &self.ones,
        }
    }
}

/// Scalars split ahead of their MSM ([`crate::WgpuDevice::split_ahead`]),
/// kept apart from them: the host's share of the MSM, made while the device
/// runs other work. It remembers what it was made for, and the MSM that uses
/// it ([`crate::WgpuDevice::msm_split`]) refuses any other.
#[derive(Debug)]
pub struct SplitAhead {
    idx: Ranks,
    /// None where the split keeps every scalar in order (a dense vector
    /// without 0 or 1): the MSM then reads the scalars it is given.
    sc: Option<Vec<blst_fr>>,
    ones: Vec<u32>,
    terms: usize,
    nbases: usize,
    first: usize,
}

impl SplitAhead {
    pub(crate) fn new(
        scalars: &[blst_fr],
        density: Option<&[u64]>,
        nbases: usize,
        first: usize,
    ) -> Result<Self, WgpuError> {
        let Split { idx, sc, ones } = split_scalars(scalars, density, nbases, first)?;
        let sc = match sc {
            std::borrow::Cow::Owned(v) => Some(v),
            std::borrow::Cow::Borrowed(_) => None,
        };
        Ok(SplitAhead {
            idx,
            sc,
            ones,
            terms: scalars.len(),
            nbases,
            first,
        })
    }

    /// The split, for an MSM of `scalars` over `nbases` bases from `first`:
    /// refused unless it was made for that many scalars and those bases.
    pub(crate) fn for_msm<'a>(
        &'a self,
        scalars: &'a [blst_fr],
        nbases: usize,
        first: usize,
    ) -> Result<SplitRef<'a>, WgpuError> {
        if (self.terms, self.nbases, self.first) != (scalars.len(), nbases, first) {
            return Err(WgpuError::InvalidInput(format!(
                "msm: scalars split ahead for {} scalars over {} bases from {} were given to an MSM of {} scalars over {nbases} bases from {first}",
                self.terms,
                self.nbases,
                self.first,
                scalars.len()
            )));
        }
        Ok(SplitRef {
            idx: &self.idx,
            sc: self.sc.as_deref().unwrap_or(scalars),
            ones: &self.ones,
        })
    }
}

/// The base ranks of a split's scalars, ascending.
#[derive(Debug, PartialEq)]
pub(crate) enum Ranks {
    /// `len` ranks from `first` on (a dense vector's: the kernels count them).
    Consecutive {
        first: u32,
        len: usize,
    },
    Listed(Vec<u32>),
}

/// Ranks `part` of a [`Ranks`], as the device pass takes them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RanksRef<'a> {
    /// Consecutive from this rank.
    From(u32),
    Listed(&'a [u32]),
    /// Runs of ranks that step by `stride`: (position of a run's first
    /// term, its rank), ascending by position.
    Runs {
        stride: u32,
        ranks: &'a [(u32, u32)],
    },
}

impl Ranks {
    /// The positions of the ranks in lo..hi.
    pub fn positions(&self, lo: u64, hi: u64) -> std::ops::Range<usize> {
        match self {
            Ranks::Consecutive { first, len } => {
                let at = |r: u64| (r.saturating_sub(u64::from(*first)) as usize).min(*len);
                at(lo)..at(hi)
            }
            Ranks::Listed(v) => positions(v, lo, hi),
        }
    }

    /// The ranks at positions `part`.
    pub fn part(&self, part: std::ops::Range<usize>) -> RanksRef<'_> {
        match self {
            Ranks::Consecutive { first, .. } => RanksRef::From(first + part.start as u32),
            Ranks::Listed(v) => RanksRef::Listed(&v[part]),
        }
    }

    #[cfg(test)]
    fn to_vec(&self) -> Vec<u32> {
        match self {
            Ranks::Consecutive { first, len } => (*first..*first + *len as u32).collect(),
            Ranks::Listed(v) => v.clone(),
        }
    }
}

/// The positions of the ascending `ranks` in lo..hi.
pub(crate) fn positions(ranks: &[u32], lo: u64, hi: u64) -> std::ops::Range<usize> {
    ranks.partition_point(|&r| u64::from(r) < lo)..ranks.partition_point(|&r| u64::from(r) < hi)
}

/// Splits `scalars` (see [`Split`]) on several host threads, in chunks of whole
/// density words, with ranks counted from base `first` (an input whose bases
/// follow another's). Errors: `first` past the bases, more scalars than bases
/// from `first` on (without a density), a density shorter than the scalars, or
/// one that includes more than those bases.
pub(crate) fn split_scalars<'a>(
    scalars: &'a [blst_fr],
    density: Option<&[u64]>,
    nbases: usize,
    first: usize,
) -> Result<Split<'a>, WgpuError> {
    let Some(nbases) = nbases.checked_sub(first) else {
        return Err(WgpuError::InvalidInput(format!(
            "msm: starts at base {first} of {nbases}"
        )));
    };
    let n = scalars.len();
    match density {
        None if n > nbases => {
            return Err(WgpuError::InvalidInput(format!(
                "msm: {n} scalars for {nbases} bases"
            )))
        }
        Some(d) if d.len() * 64 < n => {
            return Err(WgpuError::InvalidInput(format!(
                "msm: the density bitmap has {} bits for {n} scalars",
                d.len() * 64
            )))
        }
        _ => {}
    }
    // Chunks of whole density words; each chunk's first rank from the bits
    // before it.
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let chunk = if n < 1 << 16 {
        n.max(1)
    } else {
        n.div_ceil(threads).next_multiple_of(64)
    };
    let bits_in = |lo: usize, hi: usize| match density {
        None => hi - lo,
        Some(d) => (lo..hi)
            .step_by(64)
            .map(|i| {
                let w = d[i / 64];
                let top = (hi - i).min(64);
                (if top == 64 {
                    w
                } else {
                    w & ((1u64 << top) - 1)
                })
                .count_ones() as usize
            })
            .sum(),
    };
    let ranges: Vec<(usize, usize)> = (0..n)
        .step_by(chunk)
        .map(|lo| (lo, (lo + chunk).min(n)))
        .collect();
    let mut first_rank = Vec::with_capacity(ranges.len());
    let mut total = 0usize;
    for &(lo, hi) in &ranges {
        first_rank.push(first + total);
        total += bits_in(lo, hi);
    }
    if density.is_some() && total > nbases {
        return Err(WgpuError::InvalidInput(format!(
            "msm: the density includes more than the {nbases} bases"
        )));
    }
    // Two passes over the chunks, each chunk on its own thread: classify the
    // chunk's scalars into two bitmaps (others, ones) and count the included
    // ones, then write them straight to their places in the output from the
    // bitmaps, reading again only the scalars copied (growing vectors per
    // chunk and joining them cost more than the classification itself; a
    // second read of every scalar cost nearly as much as the first).
    let one = crate::host::fr_from_u64(1).l;
    // Bit j of word k: variable lo + 64 k + j is included (below n).
    let included_word = |i: usize| -> u64 {
        let w = density.map_or(u64::MAX, |d| d[i / 64]);
        let left = n - i;
        if left >= 64 {
            w
        } else {
            w & ((1u64 << left) - 1)
        }
    };
    let classes: Vec<(Vec<u64>, Vec<u64>, usize, usize)> = on_threads(&ranges, |&(lo, hi)| {
        let words = (hi - lo).div_ceil(64);
        let (mut others, mut ones) = (Vec::with_capacity(words), Vec::with_capacity(words));
        let (mut n_others, mut n_ones) = (0usize, 0usize);
        for i in (lo..hi).step_by(64) {
            let (mut o, mut u) = (0u64, 0u64);
            for (j, s) in scalars[i..hi.min(i + 64)].iter().enumerate() {
                if s.l == one {
                    u |= 1 << j;
                } else if s.l != [0u64; 4] {
                    o |= 1 << j;
                }
            }
            let inc = included_word(i);
            n_others += (o & inc).count_ones() as usize;
            n_ones += (u & inc).count_ones() as usize;
            others.push(o);
            ones.push(u);
        }
        (others, ones, n_others, n_ones)
    });
    let total_others: usize = classes.iter().map(|c| c.2).sum();
    let total_ones: usize = classes.iter().map(|c| c.3).sum();
    // Where every scalar is in `sc` (no density, no 0 or 1: H's coefficients)
    // it borrows them, and their ranks are first, first + 1, ...; else the
    // copy is written only by the threads below (a filled vec! would first
    // write its gigabytes on this one thread; the ranks' zeroed vectors cost
    // nothing until touched).
    if density.is_none() && total_others == n {
        return Ok(Split {
            idx: Ranks::Consecutive {
                first: first as u32,
                len: n,
            },
            sc: std::borrow::Cow::Borrowed(scalars),
            ones: Vec::new(),
        });
    }
    let mut idx = vec![0; total_others];
    let mut sc = Vec::with_capacity(total_others);
    let mut ones = vec![0; total_ones];
    {
        let spare = &mut sc.spare_capacity_mut()[..total_others];
        let (mut idx, mut sc, mut ones) = (&mut idx[..], spare, &mut ones[..]);
        let mut jobs = Vec::with_capacity(ranges.len());
        for ((&(lo, _), class), &rank) in ranges.iter().zip(&classes).zip(&first_rank) {
            let (i0, i1) = std::mem::take(&mut idx).split_at_mut(class.2);
            let (s0, s1) = std::mem::take(&mut sc).split_at_mut(class.2);
            let (o0, o1) = std::mem::take(&mut ones).split_at_mut(class.3);
            (idx, sc, ones) = (i1, s1, o1);
            jobs.push((lo, rank, class, i0, s0, o0));
        }
        std::thread::scope(|sc| {
            for (lo, mut rank, (others_bits, ones_bits, ..), idx, scs, ones) in jobs {
                sc.spawn(move || {
                    let (mut k, mut k1) = (0usize, 0usize);
                    for (w, (&o, &u)) in others_bits.iter().zip(ones_bits).enumerate() {
                        let i = lo + 64 * w;
                        let inc = included_word(i);
                        // the rank of bit j: included bits below it
                        let rank_of =
                            |j: u32| rank + (inc & ((1u64 << j) - 1)).count_ones() as usize;
                        let mut bits = o & inc;
                        while bits != 0 {
                            let j = bits.trailing_zeros();
                            idx[k] = rank_of(j) as u32;
                            scs[k].write(scalars[i + j as usize]);
                            k += 1;
                            bits &= bits - 1;
                        }
                        let mut bits = u & inc;
                        while bits != 0 {
                            let j = bits.trailing_zeros();
                            ones[k1] = rank_of(j) as u32;
                            k1 += 1;
                            bits &= bits - 1;
                        }
                        rank += inc.count_ones() as usize;
                    }
                });
            }
        });
    }
    // SAFETY: the threads wrote every one of the first total_others slots:
    // each chunk's share holds exactly the count of its included others
    // that the first pass counted from the same bitmaps and density.
    unsafe { sc.set_len(total_others) };
    Ok(Split {
        idx: Ranks::Listed(idx),
        sc: sc.into(),
        ones,
    })
}

/// f over each item, one thread an item, results in order.
fn on_threads<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|sc| {
        let f = &f;
        let handles: Vec<_> = items.iter().map(|it| sc.spawn(move || f(it))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Entries a chunk of the bucket accumulation (msm_acc_balanced) adds: a
/// bucket holding all n entries of a window costs n / BALANCED_CHUNK chained
/// additions instead of n.
pub(crate) const BALANCED_CHUNK: u64 = 64;

/// Window size for an MSM of `n` bucketed terms: the c of least modelled
/// cost, counting the additions (windows · n), the bucket reduction (windows ·
/// 2^(c-1) buckets) and the longest chain of additions on one thread (the
/// average bucket load, or the top window's, whose digits reach only about
/// r / 2^(c (windows - 1))); the constants (ns) are fitted to measurements
/// (backends/wgpu/README.md, "Signed digits and the window size").
pub(crate) fn window_bits(n: u64) -> u32 {
    const LOG2_R: f64 = 254.857; // log2 of the scalar field's order
    let n = n as f64;
    let cost = |c: u32| {
        let windows = f64::from(255 / c + 1);
        let buckets = f64::from(1u32 << (c - 1));
        let top_buckets = (LOG2_R - f64::from(c) * (windows - 1.0)).exp2().max(1.0);
        let chain = (n / buckets).max(n / top_buckets);
        windows * n * 1.9 + windows * buckets * 3.8 + chain * 17_000.0
    };
    (4..=16u32)
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
        .unwrap_or(16)
}

#[cfg(test)]
mod tests {
    use super::{window_bits, Ranks, Split};
    use blst::blst_fr;

    /// A split as lists: (ranks, scalars, ones' ranks).
    type Lists = (Vec<u32>, Vec<blst_fr>, Vec<u32>);

    fn lists(s: &Split<'_>) -> Lists {
        (s.idx.to_vec(), s.sc.to_vec(), s.ones.clone())
    }

    /// The split of one thread, scalar by scalar (what split_scalars must equal).
    fn split_reference(s: &[blst_fr], density: Option<&[u64]>, first: u32) -> Lists {
        let one = crate::host::fr_from_u64(1).l;
        let mut out = Lists::default();
        let mut rank = first;
        for (i, x) in s.iter().enumerate() {
            if density.is_some_and(|d| (d[i / 64] >> (i % 64)) & 1 == 0) {
                continue;
            }
            if x.l == one {
                out.2.push(rank);
            } else if x.l != [0u64; 4] {
                out.0.push(rank);
                out.1.push(*x);
            }
            rank += 1;
        }
        out
    }

    #[test]
    fn scalars_split_on_threads_as_on_one() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0usize, 1, 63, 64, 1000, (1 << 16) + 77, 300_001] {
            let s: Vec<blst_fr> = (0..n)
                .map(|_| match next() % 4 {
                    0 => crate::host::fr_from_u64(0),
                    1 => crate::host::fr_from_u64(1),
                    _ => crate::host::fr_from_u64(next() >> 1),
                })
                .collect();
            let d: Vec<u64> = (0..n.div_ceil(64) + 1).map(|_| next()).collect();
            let got = super::split_scalars(&s, None, n, 0).unwrap();
            assert_eq!(lists(&got), split_reference(&s, None, 0), "n = {n}");
            let got = super::split_scalars(&s, Some(&d), n, 0).unwrap();
            assert_eq!(
                lists(&got),
                split_reference(&s, Some(&d), 0),
                "n = {n}, density"
            );
            // ranks from a later base
            let got = super::split_scalars(&s, None, n + 5, 5).unwrap();
            assert_eq!(lists(&got), split_reference(&s, None, 5), "n = {n}, from 5");
            let got = super::split_scalars(&s, Some(&d), n + 70, 70).unwrap();
            assert_eq!(
                lists(&got),
                split_reference(&s, Some(&d), 70),
                "n = {n}, density, from 70"
            );
        }
        // every scalar neither 0 nor 1: borrowed, not copied
        let dense: Vec<blst_fr> = (0..5000)
            .map(|_| crate::host::fr_from_u64((next() >> 1) | 2))
            .collect();
        let got = super::split_scalars(&dense, None, 5007, 7).unwrap();
        assert_eq!(lists(&got), split_reference(&dense, None, 7), "dense");
        assert!(
            matches!(got.sc, std::borrow::Cow::Borrowed(_)),
            "dense: copied"
        );
        assert_eq!(
            got.idx,
            Ranks::Consecutive {
                first: 7,
                len: 5000
            }
        );
        assert_eq!(got.idx.positions(0, 7), 0..0);
        assert_eq!(got.idx.positions(7, 1007), 0..1000);
        assert_eq!(got.idx.positions(4007, 9000), 4000..5000);
        // starting past the bases, or with too few left from there
        assert!(super::split_scalars(&[], None, 3, 4).is_err());
        assert!(super::split_scalars(&[], None, 3, 3).is_ok());
        let s = vec![crate::host::fr_from_u64(3); 10];
        assert!(super::split_scalars(&s, None, 12, 3).is_err());
        let s = vec![crate::host::fr_from_u64(3); 100];
        assert!(super::split_scalars(&s, None, 99, 0).is_err());
        assert!(super::split_scalars(&s, Some(&[u64::MAX]), 100, 0).is_err());
        assert!(super::split_scalars(&s, Some(&[u64::MAX, u64::MAX]), 127, 0).is_ok());
        assert!(super::split_scalars(&s, Some(&[u64::MAX, u64::MAX]), 99, 0).is_err());
    }

    /// Wall time of the splits of a partition's aux MSMs (L without a
    /// density, A through a dense one, B through a quarter) over 2^24
    /// scalars of Filecoin's mix (45 % zeros, 45 % ones), best of three:
    /// `cargo test --release -p crossgroth-wgpu --lib split_timed -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn split_timed() {
        let n = 1usize << 24;
        let mut x = 0x9e3779b97f4a7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let s: Vec<blst_fr> = (0..n)
            .map(|_| match next() % 20 {
                0..=8 => blst_fr::default(),
                9..=17 => crate::host::fr_from_u64(1),
                _ => crate::host::fr_from_u64(next() | 2),
            })
            .collect();
        let dense: Vec<u64> = (0..n / 64).map(|_| next() | next() | next()).collect();
        let quarter: Vec<u64> = (0..n / 64).map(|_| next() & next()).collect();
        for (what, d) in [
            ("none", None),
            ("7/8", Some(&dense)),
            ("1/4", Some(&quarter)),
        ] {
            let best = (0..3)
                .map(|_| {
                    let t = std::time::Instant::now();
                    let split = super::split_scalars(&s, d.map(|d| &d[..]), n, 0).unwrap();
                    let took = t.elapsed();
                    drop(split);
                    took
                })
                .min()
                .unwrap();
            eprintln!(
                "split of 2^24, density {what}: {:.1} ms",
                best.as_secs_f64() * 1e3
            );
        }
    }

    #[test]
    fn windows_avoid_a_nearly_empty_top_window() {
        // the top window covers bits c * (255 / c) .. 255 and the last carry
        for lg in 4..=26 {
            let c = window_bits(1 << lg);
            let top_bits = 255 - c * (255 / c);
            assert!(
                top_bits + 2 >= c / 2,
                "2^{lg} terms: c = {c}, top window {top_bits} bits"
            );
        }
        assert_eq!(window_bits(1 << 22), 16);
        assert!(window_bits(16) <= 8);
    }
}

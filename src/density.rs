//! Density bitmaps: which variables of an assignment have a base in a query of the
//! parameters (bellperson's density trackers). Bit i is set iff variable i appears with a
//! nonzero merged coefficient in some linear combination of that query.

/// A growable bitmap with a running count of set bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    count: usize,
}

impl Density {
    /// Bytes of the bit vector.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// A bitmap of `len` bits, all set.
    pub fn full(len: usize) -> Self {
        let mut d = Density {
            words: vec![u64::MAX; len.div_ceil(64)],
            len,
            count: len,
        };
        d.clear_tail();
        d
    }

    /// A bitmap of `len` bits from its words (as [`Self::words`] gives them).
    pub fn from_words(words: Vec<u64>, len: usize) -> Result<Self, String> {
        if words.len() != len.div_ceil(64) {
            return Err(format!("a density of {len} bits in {} words", words.len()));
        }
        let mut d = Density {
            words,
            len,
            count: 0,
        };
        d.clear_tail();
        d.count = d.words.iter().map(|w| w.count_ones() as usize).sum();
        Ok(d)
    }

    /// A bitmap of `len` bits, none set.
    pub fn empty(len: usize) -> Self {
        Density {
            words: vec![0; len.div_ceil(64)],
            len,
            count: 0,
        }
    }

    fn clear_tail(&mut self) {
        let rem = self.len % 64;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << rem) - 1;
            }
        }
    }

    /// Appends one unset bit (a newly allocated variable).
    #[inline]
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        if bit {
            self.words[self.len / 64] |= 1 << (self.len % 64);
            self.count += 1;
        }
        self.len += 1;
    }

    /// Sets bit `i`; setting a set bit changes nothing.
    #[inline]
    pub fn set(&mut self, i: usize) {
        debug_assert!(i < self.len);
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if self.words[w] & b == 0 {
            self.words[w] |= b;
            self.count += 1;
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Number of bits (variables tracked).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits: how many bases the query has for these variables.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The raw words, bit i of the whole map at bit i%64 of word i/64.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Indices of the set bits, in order.
    pub fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let b = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(w * 64 + b)
            })
        })
    }

    /// Appends `other`, as bellperson does when an extensible constraint system is
    /// extended: for an input density, `other`'s bit 0 (its own ONE) is merged into
    /// ours instead of appended.
    pub fn extend(&mut self, other: &Density, is_input_density: bool) {
        if other.len == 0 {
            return;
        }
        if self.len == 0 {
            *self = other.clone();
            return;
        }
        let skip = if is_input_density {
            if other.get(0) {
                self.set(0);
            }
            1
        } else {
            0
        };
        for i in skip..other.len {
            self.push(other.get(i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_set_count_and_ones() {
        let mut d = Density::new();
        for _ in 0..130 {
            d.push(false);
        }
        d.set(0);
        d.set(64);
        d.set(129);
        d.set(64);
        assert_eq!(d.count(), 3);
        assert_eq!(d.ones().collect::<Vec<_>>(), vec![0, 64, 129]);
        assert!(d.get(129) && !d.get(128) && !d.get(500));
        assert_eq!(Density::full(70).count(), 70);
        assert_eq!(Density::full(70).ones().count(), 70);
    }

    #[test]
    fn extend_merges_the_one_bit_of_input_densities() {
        let mut a = Density::new();
        a.push(true);
        a.push(false);
        let mut b = Density::new();
        b.push(true);
        b.push(true);
        a.extend(&b, true);
        assert_eq!(a.len(), 3);
        assert_eq!(a.count(), 2);
        let mut c = Density::new();
        c.push(false);
        c.extend(&b, false);
        assert_eq!(c.len(), 3);
        assert_eq!(c.count(), 2);
    }
}

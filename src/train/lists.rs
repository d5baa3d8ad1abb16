//! The word lists of the pair index, all in one pool: a list is a block of one `u32` array, named
//! by its offset, length and capacity, so the pair index makes no allocation of its own.
//!
//! Freed blocks are kept by size class (the power of two at or below their capacity); a request
//! is cut from a block of the smallest class that surely holds it, the rest of the block going
//! back to its own class, and only when none is free from the end of the array. New lists get
//! their exact size; a list that grows moves to a block of the next power of two, as a `Vec`
//! would.
//!
//! Performance note: with a `Vec` per pair the merge phase of the benchmark mix made ~820k
//! allocations and as many frees, and freeing the ~600k lists left at the end took 0.26-0.37 s of
//! CPU (on a pool thread with two threads, where its frees fought the calling thread's for glibc's
//! arena lock). Numbers for this pool are in `docs/training.md` ("How it is fast").

/// One word list: `len` words at `at` in a block of `cap` entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct List {
    at: u32,
    len: u32,
    cap: u32,
}

impl List {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the list starts in the pool.
    pub fn start(&self) -> usize {
        self.at as usize
    }
}

/// The pool every list lives in.
#[derive(Debug, Default)]
pub struct Lists {
    data: Vec<u32>,
    /// Free blocks `(at, cap)` by size class: class `k` holds capacities in `2^k..2^(k+1)`.
    free: Vec<Vec<(u32, u32)>>,
}

/// The size class of a free block of capacity `cap` (> 0): every block in it holds `2^k` entries.
fn class_below(cap: u32) -> usize {
    (31 - cap.leading_zeros()) as usize
}

/// The size class whose every block can hold `n` (> 0) entries.
fn class_above(n: u32) -> usize {
    (32 - (n - 1).leading_zeros()) as usize
}

impl Lists {
    /// A pool holding lists of exactly the given sizes one after another (the initial index); the
    /// data, zeroed, is returned with it to be filled by the caller (see [`Lists::data_mut`]).
    pub fn with_sizes(sizes: impl Iterator<Item = usize>) -> (Self, Vec<List>) {
        let mut at = 0usize;
        let lists: Vec<List> = sizes
            .map(|n| {
                let l = List { at: at as u32, len: n as u32, cap: n as u32 };
                at += n;
                l
            })
            .collect();
        assert!(at < u32::MAX as usize, "the pair index exceeds 16 GB (2^32 entries)");
        (Lists { data: vec![0; at], free: Vec::new() }, lists)
    }

    /// The whole pool, for filling the lists made by [`Lists::with_sizes`].
    pub fn data_mut(&mut self) -> &mut [u32] {
        &mut self.data
    }

    /// Entries in use or free in the pool (its size).
    pub fn pool_len(&self) -> usize {
        self.data.len()
    }


    pub fn get(&self, l: List) -> &[u32] {
        &self.data[l.at as usize..(l.at + l.len) as usize]
    }

    pub fn get_mut(&mut self, l: List) -> &mut [u32] {
        &mut self.data[l.at as usize..(l.at + l.len) as usize]
    }

    /// A block of `n` (> 0) entries (or of the power of two above `n` unless `exact`): cut from
    /// the smallest free block that surely holds it (the rest of that block is freed again), else
    /// from the end of the pool. Returns `(at, cap)`.
    fn block(&mut self, n: u32, exact: bool) -> (u32, u32) {
        let k = class_above(n);
        let want = if exact || k > 31 { n } else { 1u32 << k };
        if let Some((at, cap)) = self.free.iter_mut().skip(k).find_map(|f| f.pop()) {
            if cap > want {
                self.free(List { at: at + want, len: 0, cap: cap - want });
            }
            return (at, want);
        }
        let at = self.data.len();
        assert!(at + (want as usize) < u32::MAX as usize, "the pair index exceeds 16 GB (2^32 entries)");
        self.data.resize(at + want as usize, 0);
        (at as u32, want)
    }

    /// Gives the block of `l` back to the pool.
    pub fn free(&mut self, l: List) {
        if l.cap == 0 {
            return;
        }
        let k = class_below(l.cap);
        if self.free.len() <= k {
            self.free.resize_with(k + 1, Vec::new);
        }
        self.free[k].push((l.at, l.cap));
    }

    /// A new list holding `words` (`n` of them), in a block of about that size.
    pub fn new_list(&mut self, n: usize, words: impl Iterator<Item = u32>) -> List {
        if n == 0 {
            return List::default();
        }
        let (at, cap) = self.block(n as u32, true);
        let mut l = List { at, len: 0, cap };
        self.extend(&mut l, n, words);
        l
    }

    /// Appends `words` (`n` of them) to `l`, moving it to a larger block if needed.
    pub fn extend(&mut self, l: &mut List, n: usize, words: impl Iterator<Item = u32>) {
        let need = l.len as usize + n;
        if need > l.cap as usize {
            assert!(need < u32::MAX as usize, "a word list exceeds 2^32 entries");
            let (at, cap) = self.block(need as u32, false);
            self.data.copy_within(l.at as usize..(l.at + l.len) as usize, at as usize);
            self.free(*l);
            (l.at, l.cap) = (at, cap);
        }
        let start = (l.at + l.len) as usize;
        let mut added = 0;
        for (slot, w) in self.data[start..start + n].iter_mut().zip(words) {
            *slot = w;
            added += 1;
        }
        l.len += added;
    }

    /// Drops the first `k` words of `l` (the rest move to the front of its block).
    pub fn drop_front(&mut self, l: &mut List, k: usize) {
        let (at, len) = (l.at as usize, l.len as usize);
        self.data.copy_within(at + k..at + len, at);
        l.len -= k as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_grow_move_and_reuse_blocks() {
        let (mut pool, mut lists) = Lists::with_sizes([2, 0, 3].into_iter());
        pool.data_mut().copy_from_slice(&[1, 2, 3, 4, 5]);
        assert_eq!((pool.get(lists[0]), pool.get(lists[1]), pool.get(lists[2])), (&[1, 2][..], &[][..], &[3, 4, 5][..]));
        let mut a = lists[0];
        pool.extend(&mut a, 3, [6, 7, 8].into_iter());
        assert_eq!(pool.get(a), &[1, 2, 6, 7, 8]);
        assert_eq!(pool.get(lists[2]), &[3, 4, 5]); // untouched by the move
        assert_eq!((a.at, a.cap), (5, 8));
        // the freed block of 2 cannot hold 3: cut from the end
        let b = pool.new_list(3, [9, 9, 9].into_iter());
        assert_eq!(b.at, 13);
        // but it serves 2, then a larger free block is split
        let c = pool.new_list(2, [10, 11].into_iter());
        assert_eq!((c.at, pool.get(c)), (0, &[10, 11][..]));
        pool.free(b);
        let d = pool.new_list(1, [12].into_iter());
        let e = pool.new_list(2, [13, 14].into_iter());
        assert_eq!((d.at, e.at, pool.get(e)), (13, 14, &[13, 14][..]));
        assert_eq!(pool.pool_len(), 16);
        pool.drop_front(&mut lists[2], 1);
        assert_eq!(pool.get(lists[2]), &[4, 5]);
        let empty = pool.new_list(0, std::iter::empty());
        pool.free(empty);
        assert!(pool.get(empty).is_empty());
        assert_eq!((class_below(1), class_below(7), class_below(8)), (0, 2, 3));
        assert_eq!((class_above(1), class_above(2), class_above(5), class_above(8)), (0, 1, 3, 3));
    }
}


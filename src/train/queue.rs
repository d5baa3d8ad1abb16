//! The merge queue: a binary max-heap of `(count, pair)` entries ordered by the tie rule.
//!
//! Two tie rules: bpekit's (smallest `(left bytes, right bytes)`) and minbpe's first-seen rule
//! (smallest first position, carried in the entry; see `first_seen.rs`). The byte order needs
//! the token bytes (ties go to the smallest `(left bytes, right bytes)`), which
//! grow during training, so the heap is hand-written and takes the comparison as an argument
//! instead of storing bytes in every entry (16-byte entries; bytes are compared only on equal
//! counts).
//!
//! Entries are never updated in place ("lazy invalidation"): the learner pushes a new entry
//! whenever a pair's count rises, and when it pops an entry whose count is out of date it pushes
//! the current count back. See `merge.rs` for why that keeps the top exact.

/// A pair of token ids packed as `left << 32 | right`.
pub type Pair = u64;

#[inline]
pub fn pair(left: u32, right: u32) -> Pair {
    (u64::from(left) << 32) | u64::from(right)
}

#[inline]
pub fn unpair(p: Pair) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub count: u64,
    pub pair: Pair,
    /// First-seen rule only: where the pair first occurs (`word << 32 | byte offset`); else 0.
    pub pos: u64,
}

/// Whether `a` should be merged before `b`: higher count, then (first-seen rule) the earlier first
/// position, or (byte rule) smaller left bytes, then smaller right bytes.
#[inline]
pub fn better(a: &Entry, b: &Entry, tokens: &[Vec<u8>], first_seen: bool) -> bool {
    if a.count != b.count {
        return a.count > b.count;
    }
    if first_seen {
        return (a.pos, a.pair) < (b.pos, b.pair);
    }
    if a.pair == b.pair {
        return false;
    }
    let (al, ar) = unpair(a.pair);
    let (bl, br) = unpair(b.pair);
    let left = tokens[al as usize].cmp(&tokens[bl as usize]);
    left.then_with(|| tokens[ar as usize].cmp(&tokens[br as usize])).is_lt()
}

#[derive(Debug, Default)]
pub struct Queue {
    heap: Vec<Entry>,
    first_seen: bool,
}

impl Queue {
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn push(&mut self, e: Entry, tokens: &[Vec<u8>]) {
        self.heap.push(e);
        let mut i = self.heap.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !better(&self.heap[i], &self.heap[parent], tokens, self.first_seen) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    pub fn pop(&mut self, tokens: &[Vec<u8>]) -> Option<Entry> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.heap[0], last);
        self.sift_down(0, tokens);
        Some(top)
    }

    fn sift_down(&mut self, mut i: usize, tokens: &[Vec<u8>]) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < n && better(&self.heap[l], &self.heap[best], tokens, self.first_seen) {
                best = l;
            }
            if r < n && better(&self.heap[r], &self.heap[best], tokens, self.first_seen) {
                best = r;
            }
            if best == i {
                return;
            }
            self.heap.swap(i, best);
            i = best;
        }
    }

    /// Builds the heap from unordered entries in O(n).
    pub fn from_vec(entries: Vec<Entry>, tokens: &[Vec<u8>], first_seen: bool) -> Self {
        let mut q = Queue { heap: entries, first_seen };
        for i in (0..q.heap.len() / 2).rev() {
            q.sift_down(i, tokens);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_tie_rule_order() {
        let tokens: Vec<Vec<u8>> = vec![b"b".to_vec(), b"a".to_vec(), b"ab".to_vec(), b"c".to_vec()];
        let entries = vec![
            Entry { count: 5, pair: pair(0, 1), pos: 0 }, // (b, a)
            Entry { count: 5, pair: pair(1, 3), pos: 0 }, // (a, c)
            Entry { count: 5, pair: pair(1, 0), pos: 0 }, // (a, b)
            Entry { count: 7, pair: pair(3, 3), pos: 0 },
            Entry { count: 5, pair: pair(2, 3), pos: 0 }, // (ab, c)
            Entry { count: 1, pair: pair(0, 0), pos: 0 },
        ];
        let mut q = Queue::from_vec(entries, &tokens, false);
        let order: Vec<Pair> = std::iter::from_fn(|| q.pop(&tokens)).map(|e| e.pair).collect();
        assert_eq!(order, vec![pair(3, 3), pair(1, 0), pair(1, 3), pair(2, 3), pair(0, 1), pair(0, 0)]);
    }
}

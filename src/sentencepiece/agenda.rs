//! The merge candidates of [`super::bpe`]: a 4-ary max-heap ordered by one `u64` key (score
//! rank, then leftmost), so a comparison is one integer compare and a sift step reads four
//! children from one or two cache lines.
//!
//! Performance note: on a megabyte with no split point (`"a" * 1_000_000` or random letters with
//! Llama's vocabulary) the heap holds about a million candidates and its sift-downs were three
//! quarters of the time with `std`'s binary heap of tuples (lexicographic compares, a cache miss
//! per level); `src/PERFORMANCE.md`, "Eleventh round", has the numbers.

/// One candidate pair: the `left` symbol (the right one is its successor), where the pair ended
/// when pushed (the pair now after `left` ending elsewhere means one side changed: the candidate
/// is stale), and the merged piece's id. 16 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    key: u64,
    pub end: u32,
    pub id: u32,
}

impl Candidate {
    #[inline(always)]
    pub fn new(rank: i32, left: u32, end: u32, id: u32) -> Candidate {
        // higher rank first, then the smaller left: both as larger key bits
        let key = (((rank as u32) ^ 0x8000_0000) as u64) << 32 | (u32::MAX - left) as u64;
        Candidate { key, end, id }
    }

    #[inline(always)]
    pub fn left(&self) -> u32 {
        u32::MAX - self.key as u32
    }
}

/// Candidates with the same key never both apply (the same left symbol pairs with one right
/// symbol at a time), so their order among themselves does not matter.
#[derive(Default)]
pub struct Agenda {
    items: Vec<Candidate>,
}

impl Agenda {
    pub fn clear(&mut self) {
        self.items.clear();
    }

    #[inline]
    pub fn push(&mut self, c: Candidate) {
        let mut i = self.items.len();
        self.items.push(c);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.items[parent].key >= c.key {
                break;
            }
            self.items[i] = self.items[parent];
            i = parent;
        }
        self.items[i] = c;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Candidate> {
        let last = self.items.pop()?;
        let n = self.items.len();
        if n == 0 {
            return Some(last);
        }
        let top = self.items[0];
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            for child in first + 1..(first + 4).min(n) {
                if self.items[child].key > self.items[best].key {
                    best = child;
                }
            }
            if self.items[best].key <= last.key {
                break;
            }
            self.items[i] = self.items[best];
            i = best;
        }
        self.items[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_rank_then_leftmost() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..50 {
            let mut agenda = Agenda::default();
            let mut all = Vec::new();
            for _ in 0..(round * 37) % 500 {
                let rank = (next() % 7) as i32 - 3 + if next() % 5 == 0 { i32::MIN / 2 } else { 0 };
                let left = (next() % 1000) as u32;
                all.push((rank, left));
                agenda.push(Candidate::new(rank, left, 0, 0));
                if next() % 3 == 0 {
                    let c = agenda.pop().unwrap();
                    let best = *all.iter().max_by_key(|&&(r, l)| (r, std::cmp::Reverse(l))).unwrap();
                    assert_eq!((c.key >> 32) as u32 ^ 0x8000_0000, best.0 as u32);
                    assert_eq!(c.left(), best.1);
                    let at = all.iter().position(|&x| x == best).unwrap();
                    all.swap_remove(at);
                }
            }
            all.sort_by_key(|&(r, l)| (std::cmp::Reverse(r), l));
            let popped: Vec<(i32, u32)> =
                std::iter::from_fn(|| agenda.pop()).map(|c| (((c.key >> 32) as u32 ^ 0x8000_0000) as i32, c.left())).collect();
            assert_eq!(popped, all);
        }
    }
}

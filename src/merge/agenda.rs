//! Merge candidates ordered by one `u64` key (score rank, then leftmost), for the merges that
//! keep a priority queue: SentencePiece's (`sentencepiece/bpe.rs`) and Hugging Face's pair rule
//! (`pairbpe.rs`, with the score `u32::MAX - merge rank`). [`Agenda`] is a 4-ary max-heap, so a
//! comparison is one integer compare and a sift step reads four children from one or two cache
//! lines.
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

    /// The score part of the key (its high half).
    #[inline(always)]
    pub fn score_bits(&self) -> u32 {
        (self.key >> 32) as u32
    }

    #[inline(always)]
    pub fn left(&self) -> u32 {
        u32::MAX - self.key as u32
    }
}

/// What the merge loop needs of its candidates: the best first (highest rank, then leftmost).
pub trait Queue {
    fn clear(&mut self);
    fn push(&mut self, c: Candidate);
    fn pop(&mut self) -> Option<Candidate>;
    /// The `left` of the candidate `pop` would return now.
    fn peek_left(&self) -> Option<u32>;
    /// The `left` of a candidate likely to be popped a few pops from now (a hint for prefetching).
    fn upcoming(&self) -> Option<u32> {
        None
    }
}

/// Candidates with the same key never both apply (the same left symbol pairs with one right
/// symbol at a time), so their order among themselves does not matter.
#[derive(Default)]
pub struct Agenda {
    items: Vec<Candidate>,
}

/// The agenda with a *lane* beside it, for long texts: a queue of candidates pushed in
/// non-increasing key order, read from its front. A push goes to the lane when its key is at most
/// the lane's last one, else to the heap; a pop takes the larger of the two fronts, so the order
/// is the heap's alone.
///
/// Performance note (`src/PERFORMANCE.md`, "Twelfth round"): a run of one character (`"a" *
/// 1_000_000`, a megabyte of spaces) pushes its million first pairs left to right with one rank,
/// which is non-increasing order: they stream through the lane (sequential memory) instead of
/// sifting through a million-entry heap (a cache miss per level). Llama's vocabulary, 1 MB: one
/// letter 103 -> 45 ms, spaces 106 -> 38 ms. Words keep the plain [`Agenda`] (a word's few
/// candidates gain nothing, and the two-front pop cost English ~3%).
#[derive(Default)]
pub struct Laned {
    heap: Agenda,
    lane: Vec<Candidate>,
    /// The lane's front (`lane[head..]` is queued).
    head: usize,
}

impl Queue for Laned {
    fn clear(&mut self) {
        self.heap.clear();
        self.lane.clear();
        self.head = 0;
    }

    #[inline(always)]
    fn push(&mut self, c: Candidate) {
        match self.lane.last() {
            Some(l) if c.key > l.key => self.heap.push(c),
            _ => self.lane.push(c),
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Candidate> {
        let Some(&l) = self.lane.get(self.head) else { return self.heap.pop() };
        if self.heap.items.first().is_some_and(|h| h.key > l.key) {
            return self.heap.pop();
        }
        self.head += 1;
        if self.head == self.lane.len() {
            self.lane.clear();
            self.head = 0;
        }
        Some(l)
    }

    #[inline(always)]
    fn peek_left(&self) -> Option<u32> {
        let h = self.heap.items.first();
        match self.lane.get(self.head) {
            Some(l) if !h.is_some_and(|h| h.key > l.key) => Some(l.left()),
            _ => h.map(Candidate::left),
        }
    }
}

/// `std`'s binary heap, ordered by the key alone (pair merges of short pieces: on words of a few
/// symbols it was ~5% faster than the 4-ary heap).
impl Queue for std::collections::BinaryHeap<Candidate> {
    fn clear(&mut self) {
        std::collections::BinaryHeap::clear(self);
    }

    #[inline(always)]
    fn push(&mut self, c: Candidate) {
        std::collections::BinaryHeap::push(self, c)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Candidate> {
        std::collections::BinaryHeap::pop(self)
    }

    #[inline(always)]
    fn peek_left(&self) -> Option<u32> {
        self.peek().map(Candidate::left)
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl Queue for Agenda {
    fn clear(&mut self) {
        self.items.clear();
    }

    #[inline(always)]
    fn push(&mut self, c: Candidate) {
        Agenda::push(self, c)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Candidate> {
        Agenda::pop(self)
    }

    #[inline(always)]
    fn peek_left(&self) -> Option<u32> {
        self.items.first().map(Candidate::left)
    }
}

impl Agenda {
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
        if self.items.is_empty() {
            return Some(last);
        }
        let top = self.items[0];
        self.sift_down(last);
        Some(top)
    }

    /// The best candidate, if any.
    #[inline]
    pub fn peek(&self) -> Option<&Candidate> {
        self.items.first()
    }

    /// Pops the best candidate and pushes `c` in one sift (the agenda must not be empty): a
    /// laned queue replaces its front this way, and the next front often stays on top.
    #[inline]
    pub fn replace_top(&mut self, c: Candidate) -> Candidate {
        let top = self.items[0];
        self.sift_down(c);
        top
    }

    /// Puts `last` where the root was, moving it down past larger children.
    #[inline]
    fn sift_down(&mut self, last: Candidate) {
        let n = self.items.len();
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_top_is_pop_then_push() {
        let mut rng = crate::merge::equivalence_tests::Rng::new(77);
        let mut next = move || rng.next();
        for round in 0..100 {
            let (mut one, mut two) = (Agenda::default(), Agenda::default());
            for _ in 0..1 + round % 40 {
                let c = Candidate::new((next() % 5) as i32, (next() % 100) as u32, 0, 0);
                one.push(c);
                two.push(c);
            }
            for _ in 0..60 {
                let c = Candidate::new((next() % 5) as i32, (next() % 100) as u32, 0, 0);
                let a = one.replace_top(c);
                let b = two.pop().unwrap();
                two.push(c);
                assert_eq!(a.key, b.key, "round {round}");
                assert_eq!(one.peek().map(|c| c.key), two.peek().map(|c| c.key));
            }
            let drain = |q: &mut Agenda| std::iter::from_fn(|| q.pop()).map(|c| c.key).collect::<Vec<_>>();
            assert_eq!(drain(&mut one), drain(&mut two));
        }
    }

    #[test]
    fn pops_by_rank_then_leftmost() {
        let mut rng = crate::merge::equivalence_tests::Rng::new(0x2545_f491);
        let mut next = move || rng.next();
        for round in 0..150 {
            let (mut plain, mut laned, mut binary) = (Agenda::default(), Laned::default(), std::collections::BinaryHeap::new());
            let agenda: &mut dyn Queue = match round % 3 {
                0 => &mut plain,
                1 => &mut laned,
                _ => &mut binary,
            };
            let mut all = Vec::new();
            for _ in 0..(round * 37) % 500 {
                let rank = (next() % 7) as i32 - 3 + if next() % 5 == 0 { i32::MIN / 2 } else { 0 };
                let left = (next() % 1000) as u32;
                all.push((rank, left));
                agenda.push(Candidate::new(rank, left, 0, 0));
                if next() % 3 == 0 {
                    let peeked = agenda.peek_left();
                    let c = agenda.pop().unwrap();
                    assert_eq!(peeked, Some(c.left()));
                    let best = *all.iter().max_by_key(|&&(r, l)| (r, std::cmp::Reverse(l))).unwrap();
                    assert_eq!((c.key >> 32) as u32 ^ 0x8000_0000, best.0 as u32);
                    assert_eq!(c.left(), best.1);
                    let at = all.iter().position(|&x| x == best).unwrap();
                    all.swap_remove(at);
                }
            }
            all.sort_by_key(|&(r, l)| (std::cmp::Reverse(r), l));
            let popped: Vec<(i32, u32)> = std::iter::from_fn(|| {
                let peeked = agenda.peek_left();
                let c = agenda.pop();
                assert_eq!(peeked, c.map(|c| c.left()));
                c
            })
            .map(|c| (((c.key >> 32) as u32 ^ 0x8000_0000) as i32, c.left()))
            .collect();
            assert_eq!(popped, all);
        }
    }
}

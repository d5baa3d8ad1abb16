//! A compact byte trie over the vocabulary for anchored longest-prefix matching (the token matcher
//! of the [`backtrack`](super::backtrack) merge).
//!
//! Built breadth-first from the tokens sorted by bytes, so the children of a node are consecutive
//! node ids and their edge bytes form one sorted slice: no per-node allocation, O(total bytes) to
//! build. The first two levels are direct tables (256 entries, and one per pair of the bytes in use),
//! and so is the third when the bytes in use are few (a sub-vocabulary such as lowercase letters).
//!
//! Performance note: a walk costs one short scan per input byte over a contiguous label slice.
//! Building it for o200k (200k tokens, 1.3 MB of bytes) is a sort plus one linear pass; an
//! Aho-Corasick automaton would also compute failure links, which an anchored matcher never uses.

pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    first_child: u32,
    n_children: u32,
    /// The token ending at this node, or `NONE`.
    token: u32,
}

/// A direct-table entry: the node reached and the token ending there (each `NONE` if none), so
/// the walk through the first levels loads no node.
#[derive(Clone, Copy, Debug)]
struct Step {
    node: u32,
    token: u32,
}

const NO_STEP: Step = Step {
    node: NONE,
    token: NONE,
};

/// The third level gets a direct table when it has at most this many entries (`width^3`, 8
/// bytes each): 27^3 for lowercase letters (160 kB), 53^3 for both cases (1.2 MB; cl100k random
/// mixed-case letters 0.92x the time without it), not 257^3 for the full tables.
const MAX_THREE: usize = 1 << 18;

#[derive(Debug, Clone)]
pub struct Trie {
    root: [u32; 256],
    /// The token of each one-byte prefix, or `NONE`.
    root_token: [u32; 256],
    /// A dense code for each byte that occurs in the tokens (`width - 1` for the others).
    code: [u16; 256],
    width: usize,
    /// The node and token of each two-byte prefix, at `code[b0] * width + code[b1]`.
    two: Vec<Step>,
    /// The same for three-byte prefixes at `(code[b0] * width + code[b1]) * width + code[b2]`;
    /// empty when that would exceed `MAX_THREE` entries.
    three: Vec<Step>,
    nodes: Vec<Node>,
    /// `labels[v]` is the byte on the edge into node `v`.
    labels: Vec<u8>,
    /// `parents[v]` (breadth-first order, so `parents[v] < v`).
    parents: Vec<u32>,
    /// The node of each token id.
    node_of: Vec<u32>,
}

impl Trie {
    /// Builds the trie of the tokens `all[start[id]..start[id + 1]]`; an empty range is a hole
    /// (no token has that id). Tokens must be distinct.
    pub fn new(all: &[u8], start: &[u32]) -> Trie {
        let n = start.len().saturating_sub(1);
        let bytes = |id: u32| &all[start[id as usize] as usize..start[id as usize + 1] as usize];
        // Sort by an 8-byte big-endian prefix first: most comparisons stay in one flat array.
        let key = |id: u32| {
            let b = bytes(id);
            let mut k = [0u8; 8];
            k[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
            u64::from_be_bytes(k)
        };
        let mut order: Vec<(u64, u32)> = (0..n as u32)
            .filter(|&id| !bytes(id).is_empty())
            .map(|id| (key(id), id))
            .collect();
        order.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| bytes(a.1).cmp(bytes(b.1))));
        // Byte length of each sorted token and its common prefix with the one before: the
        // breadth-first pass below then reads two flat arrays instead of the token bytes.
        let lens: Vec<u32> = order
            .iter()
            .map(|&(_, id)| bytes(id).len() as u32)
            .collect();
        let lcp: Vec<u32> = (0..order.len())
            .map(|i| match i {
                0 => 0,
                _ => {
                    let (x, y) = (bytes(order[i - 1].1), bytes(order[i].1));
                    x.iter().zip(y).take_while(|(a, b)| a == b).count() as u32
                }
            })
            .collect();
        let empty = Node {
            first_child: 0,
            n_children: 0,
            token: NONE,
        };
        let mut trie = Trie {
            root: [NONE; 256],
            root_token: [NONE; 256],
            code: [0; 256],
            width: 0,
            two: Vec::new(),
            three: Vec::new(),
            nodes: vec![empty],
            labels: vec![0],
            parents: vec![NONE],
            node_of: vec![NONE; n],
        };
        // ranges[v] = (the slice of `order` below node v, depth); processed in id order = breadth first.
        let mut ranges: Vec<(u32, u32, u32)> = vec![(0, order.len() as u32, 0)];
        let mut v = 0;
        while v < trie.nodes.len() {
            let (mut lo, hi, depth) = ranges[v];
            if lo < hi && lens[lo as usize] == depth {
                let id = order[lo as usize].1;
                trie.nodes[v].token = id;
                trie.node_of[id as usize] = v as u32;
                lo += 1;
            }
            trie.nodes[v].first_child = trie.nodes.len() as u32;
            // All of lo..hi share `depth` bytes; a child starts wherever `depth + 1` are not shared.
            while lo < hi {
                // the 8-byte sort key holds the first bytes: no random access for shallow nodes
                let key = order[lo as usize].0;
                let byte = match depth {
                    0..=7 => (key >> (56 - 8 * depth)) as u8,
                    _ => bytes(order[lo as usize].1)[depth as usize],
                };
                let mut end = lo + 1;
                while end < hi && lcp[end as usize] > depth {
                    end += 1;
                }
                if v == 0 {
                    trie.root[byte as usize] = trie.nodes.len() as u32;
                }
                trie.nodes.push(empty);
                trie.labels.push(byte);
                trie.parents.push(v as u32);
                ranges.push((lo, end, depth + 1));
                trie.nodes[v].n_children += 1;
                lo = end;
            }
            v += 1;
        }
        // Codes for the bytes in use keep `two` small for a sub-vocabulary: 27 x 27 entries for
        // lowercase letters instead of 256 x 256, so it stays in L1.
        let mut seen = [false; 256];
        all.iter().for_each(|&b| seen[b as usize] = true);
        let mut m = 0;
        for (code, _) in trie.code.iter_mut().zip(seen).filter(|(_, s)| *s) {
            *code = m;
            m += 1;
        }
        trie.width = m as usize + 1;
        trie.code.iter_mut().zip(seen).filter(|(_, s)| !s).for_each(|(c, _)| *c = m);
        trie.fill_tables();
        trie
    }

    /// Fills `root_token`, `two` and `three` from the nodes (again after `remove`).
    fn fill_tables(&mut self) {
        let w = self.width;
        self.two = vec![NO_STEP; w * w];
        self.three = if w * w * w <= MAX_THREE { vec![NO_STEP; w * w * w] } else { Vec::new() };
        let step = |v: u32, nodes: &[Node]| Step {
            node: v,
            token: nodes[v as usize].token,
        };
        for b0 in 0..256 {
            let v1 = self.root[b0];
            if v1 == NONE {
                continue;
            }
            self.root_token[b0] = self.nodes[v1 as usize].token;
            for v2 in self.children(v1) {
                let i2 = self.two_index(b0 as u8, self.labels[v2 as usize]);
                self.two[i2] = step(v2, &self.nodes);
                if self.three.is_empty() {
                    continue;
                }
                for v3 in self.children(v2) {
                    let i3 = i2 * w + self.code[self.labels[v3 as usize] as usize] as usize;
                    self.three[i3] = step(v3, &self.nodes);
                }
            }
        }
    }

    fn children(&self, v: u32) -> std::ops::Range<u32> {
        let node = self.nodes[v as usize];
        node.first_child..node.first_child + node.n_children
    }

    #[inline(always)]
    fn two_index(&self, b0: u8, b1: u8) -> usize {
        self.code[b0 as usize] as usize * self.width + self.code[b1 as usize] as usize
    }

    #[inline(always)]
    fn child(&self, v: u32, byte: u8) -> u32 {
        let node = self.nodes[v as usize];
        let first = node.first_child as usize;
        let labels = &self.labels[first..first + node.n_children as usize];
        let found = if labels.len() <= 8 {
            labels.iter().position(|&b| b == byte)
        } else {
            labels.binary_search(&byte).ok()
        };
        found.map_or(NONE, |i| (first + i) as u32)
    }

    /// The longest token that is a prefix of `text`, or `NONE`.
    #[inline]
    pub fn longest_prefix(&self, text: &[u8]) -> u32 {
        self.longest_prefix_len(text).0
    }

    /// The longest token that is a prefix of `text` and its length in bytes, or `(NONE, 0)`.
    /// (The length comes from the walk: the merge needs no load of the token's record.)
    #[inline]
    pub fn longest_prefix_len(&self, text: &[u8]) -> (u32, usize) {
        let Some(&b0) = text.first() else { return (NONE, 0) };
        if self.root[b0 as usize] == NONE {
            return (NONE, 0);
        }
        let t = self.root_token[b0 as usize];
        let mut best = if t != NONE { (t, 1) } else { (NONE, 0) };
        let Some(&b1) = text.get(1) else { return best };
        let i2 = self.two_index(b0, b1);
        let s2 = self.two[i2];
        if s2.node == NONE {
            return best;
        }
        if s2.token != NONE {
            best = (s2.token, 2);
        }
        let (mut v, mut depth) = (s2.node, 2);
        if !self.three.is_empty() {
            let Some(&b2) = text.get(2) else { return best };
            let s3 = self.three[i2 * self.width + self.code[b2 as usize] as usize];
            if s3.node == NONE {
                return best;
            }
            if s3.token != NONE {
                best = (s3.token, 3);
            }
            (v, depth) = (s3.node, 3);
        }
        for (i, &b) in text[depth..].iter().enumerate() {
            v = self.child(v, b);
            if v == NONE {
                break;
            }
            let t = self.nodes[v as usize].token;
            if t != NONE {
                best = (t, i + depth + 1);
            }
        }
        best
    }

    /// The token whose bytes are exactly `text` if `text` has one or two bytes, from the direct
    /// tables alone; else `NONE` (also for longer text: ask [`Trie::longest_prefix_len`]).
    #[inline(always)]
    pub fn short_token(&self, text: &[u8]) -> u32 {
        match *text {
            [b0] => self.root_token[b0 as usize],
            [b0, b1] if self.root[b0 as usize] != NONE => self.two[self.two_index(b0, b1)].token,
            _ => NONE,
        }
    }

    /// The token whose bytes are exactly `bytes`, or `NONE`.
    pub fn exact(&self, bytes: &[u8]) -> u32 {
        let mut v = 0u32;
        for &b in bytes {
            v = if v == 0 {
                self.root[b as usize]
            } else {
                self.child(v, b)
            };
            if v == NONE {
                return NONE;
            }
        }
        self.nodes[v as usize].token
    }

    /// For each token id, the longest token that is a proper prefix of it (`NONE` for holes and
    /// for tokens with no such prefix). One pass in breadth-first order, where parents come first.
    pub fn prefix_links(&self) -> Vec<u32> {
        let mut above = vec![NONE; self.nodes.len()];
        let mut links = vec![NONE; self.node_of.len()];
        for v in 1..self.nodes.len() {
            let p = self.parents[v] as usize;
            let t = self.nodes[v].token;
            if t != NONE {
                links[t as usize] = above[p];
            }
            above[v] = if t != NONE { t } else { above[p] };
        }
        links
    }

    /// Stops matching token `id` (its node stays, so longer tokens below it still match).
    pub fn remove(&mut self, id: u32) {
        let v = self.node_of[id as usize];
        self.nodes[v as usize].token = NONE;
        // The direct tables copy the tokens of the first levels: clear this one there too.
        let mut path = [0u8; 3];
        let (mut u, mut depth) = (v, 0);
        while u != 0 {
            if depth == 3 {
                return;
            }
            path[depth] = self.labels[u as usize];
            u = self.parents[u as usize];
            depth += 1;
        }
        match depth {
            1 => self.root_token[path[0] as usize] = NONE,
            2 => {
                let i2 = self.two_index(path[1], path[0]);
                self.two[i2].token = NONE;
            }
            _ if !self.three.is_empty() => {
                let i2 = self.two_index(path[2], path[1]);
                self.three[i2 * self.width + self.code[path[0] as usize] as usize].token = NONE;
            }
            _ => {}
        }
    }

    /// Frees what only the build needs (`prefix_links` and `remove` no longer work afterwards).
    pub fn drop_build_tables(&mut self) {
        self.parents = Vec::new();
        self.node_of = Vec::new();
    }

    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * (std::mem::size_of::<Node>() + 1)
            + (self.parents.len() + self.node_of.len()) * 4
            + (self.two.len() + self.three.len()) * std::mem::size_of::<Step>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_exact_and_prefixes() {
        let words: [&[u8]; 8] = [b"a", b"ab", b"abcd", b"b", b"", b"bc", b"c", b"d"];
        let all = words.concat();
        let start: Vec<u32> = std::iter::once(0)
            .chain(words.iter().scan(0, |s, w| {
                *s += w.len() as u32;
                Some(*s)
            }))
            .collect();
        let mut t = Trie::new(&all, &start);
        assert_eq!(t.longest_prefix(b"abcde"), 2);
        assert_eq!(t.longest_prefix(b"abce"), 1);
        assert_eq!(t.longest_prefix(b"x"), NONE);
        assert_eq!(t.longest_prefix(b""), NONE);
        assert_eq!(t.exact(b"bc"), 5);
        assert_eq!(t.exact(b"abc"), NONE);
        assert_eq!(t.exact(b""), NONE);
        assert_eq!(
            t.prefix_links(),
            vec![NONE, 0, 1, NONE, NONE, 3, NONE, NONE]
        );
        t.remove(1);
        assert_eq!(t.longest_prefix(b"abce"), 0);
        assert_eq!(t.longest_prefix(b"abcd"), 2);
        assert_eq!(
            t.prefix_links(),
            vec![NONE, NONE, 0, NONE, NONE, 3, NONE, NONE]
        );
    }

    /// Longest-prefix matches against a scan of every token, with the direct third level (few
    /// byte values) and without it (many), before and after removing tokens.
    #[test]
    fn longest_prefix_agrees_with_a_scan() {
        let mut seed = 99u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for alphabet in [3u64, 26, 200] {
            let mut words: Vec<Vec<u8>> = (0..alphabet).map(|b| vec![b as u8 + 1]).collect();
            while words.len() < 600 {
                let w: Vec<u8> = (0..2 + next(5)).map(|_| next(alphabet) as u8 + 1).collect();
                if !words.contains(&w) {
                    words.push(w);
                }
            }
            let all = words.concat();
            let start: Vec<u32> = std::iter::once(0)
                .chain(words.iter().scan(0, |s, w| {
                    *s += w.len() as u32;
                    Some(*s)
                }))
                .collect();
            let mut trie = Trie::new(&all, &start);
            assert_eq!(trie.three.is_empty(), alphabet > 30, "alphabet {alphabet}");
            let mut gone = vec![false; words.len()];
            for round in 0..2 {
                for _ in 0..2000 {
                    let text: Vec<u8> = (0..next(8)).map(|_| next(alphabet + 1) as u8 + 1).collect();
                    let want = (0..words.len())
                        .filter(|&t| !gone[t] && text.starts_with(&words[t]))
                        .max_by_key(|&t| words[t].len())
                        .map_or((NONE, 0), |t| (t as u32, words[t].len()));
                    assert_eq!(trie.longest_prefix_len(&text), want, "alphabet {alphabet} round {round}: {text:?}");
                    let exact = words.iter().position(|w| *w == text).filter(|&t| !gone[t]);
                    assert_eq!(trie.exact(&text), exact.map_or(NONE, |t| t as u32), "exact {text:?}");
                    let short = if text.len() <= 2 { trie.exact(&text) } else { NONE };
                    assert_eq!(trie.short_token(&text), short, "short {text:?}");
                }
                for t in (0..words.len()).step_by(3) {
                    trie.remove(t as u32);
                    gone[t] = true;
                }
            }
        }
    }
}

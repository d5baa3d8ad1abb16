//! The flat-array rank merge for short pieces (tiktoken's algorithm).
//!
//! `parts[i] = (start, rank of the pair starting at part i)`. Each round finds the minimum rank,
//! merges that pair and recomputes only the two neighbouring pair ranks. O(n·m) for n bytes and m
//! merges, which beats anything cleverer for the 2–20 byte pieces of natural text.
//!
//! Performance note: the parts live on the stack for pieces shorter than [`STACK_PARTS`] bytes
//! (all pieces this merge gets from the encoder), so a merge allocates nothing; the heap
//! allocation per piece was ~10% of encode time on multilingual text (`src/PERFORMANCE.md`).

use super::{lookup, RankLookup};
use crate::error::Result;
use crate::vocab::Rank;

/// Pieces shorter than this keep their parts in a stack array.
pub const STACK_PARTS: usize = 64;

#[inline]
pub fn encode_into<R: RankLookup>(ranks: &R, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    debug_assert!(piece.len() >= 2);
    let n = piece.len();
    let mut stack = [(0u32, Rank::MAX); STACK_PARTS + 1];
    let mut heap;
    let parts: &mut [(u32, Rank)] = if n < STACK_PARTS {
        &mut stack[..n + 1]
    } else {
        heap = vec![(0u32, Rank::MAX); n + 1];
        &mut heap
    };
    let mut min_rank: (Rank, usize) = (Rank::MAX, usize::MAX);
    for i in 0..n - 1 {
        let rank = ranks.rank_of(&piece[i..i + 2]).unwrap_or(Rank::MAX);
        if rank < min_rank.0 {
            min_rank = (rank, i);
        }
        parts[i] = (i as u32, rank);
    }
    parts[n - 1] = ((n - 1) as u32, Rank::MAX);
    parts[n] = (n as u32, Rank::MAX);
    let mut len = n + 1;

    #[inline(always)]
    fn pair_rank<R: RankLookup>(
        ranks: &R,
        piece: &[u8],
        parts: &[(u32, Rank)],
        len: usize,
        i: usize,
    ) -> Rank {
        if i + 3 < len {
            ranks
                .rank_of(&piece[parts[i].0 as usize..parts[i + 3].0 as usize])
                .unwrap_or(Rank::MAX)
        } else {
            Rank::MAX
        }
    }

    while min_rank.0 != Rank::MAX {
        let i = min_rank.1;
        if i > 0 {
            parts[i - 1].1 = pair_rank(ranks, piece, parts, len, i - 1);
        }
        parts[i].1 = pair_rank(ranks, piece, parts, len, i);
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
        min_rank = (Rank::MAX, usize::MAX);
        for (j, &(_, rank)) in parts[..len - 1].iter().enumerate() {
            if rank < min_rank.0 {
                min_rank = (rank, j);
            }
        }
    }
    for w in parts[..len].windows(2) {
        out.push(lookup(ranks, &piece[w[0].0 as usize..w[1].0 as usize])?);
    }
    Ok(())
}

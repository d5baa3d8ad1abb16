//! The flat-array rank merge for short pieces (tiktoken's algorithm).
//!
//! `parts[i] = (start, token id of part i, rank of the pair starting at part i)`. Each round finds
//! the minimum rank, merges that pair and recomputes only the two neighbouring pair ranks. O(n·m)
//! for n bytes and m merges, which beats anything cleverer for the 2–20 byte pieces of natural
//! text.
//!
//! Performance notes (`src/PERFORMANCE.md`):
//! - The parts live on the stack for pieces shorter than [`STACK_PARTS`] bytes (all pieces this
//!   merge gets from the encoder), so a merge allocates nothing; the heap allocation per piece was
//!   ~10% of encode time on multilingual text. Pieces under [`SHORT_PARTS`] bytes (most of them)
//!   get a 17-part array: filling a 65-part one for each piece was ~3.5% of all instructions of
//!   multilingual encoding.
//! - Each part carries its token id (a merged pair's id is the rank that chose it), so the output
//!   needs no lookup per token: one rank-table probe less per output id, each a likely L2 miss.

use super::RankLookup;
use crate::error::{Error, Result};
use crate::vocab::Rank;

/// Pieces shorter than this keep their parts in a stack array.
pub const STACK_PARTS: usize = 64;
/// Pieces shorter than this use a smaller stack array still.
pub const SHORT_PARTS: usize = 16;

#[derive(Clone, Copy)]
struct Part {
    start: u32,
    /// The part's token id (`Rank::MAX` for a single byte that is not a token).
    id: Rank,
    /// The rank of this part joined with the next one (`Rank::MAX`: not a token).
    rank: Rank,
}

const EMPTY: Part = Part { start: 0, id: Rank::MAX, rank: Rank::MAX };

/// Merges `piece` (at least 2 bytes).
#[inline]
pub fn encode_into<R: RankLookup>(ranks: &R, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    debug_assert!(piece.len() >= 2);
    let n = piece.len();
    if n < SHORT_PARTS {
        merge_parts(ranks, piece, &mut [EMPTY; SHORT_PARTS + 1][..n + 1], out)
    } else if n < STACK_PARTS {
        merge_parts(ranks, piece, &mut [EMPTY; STACK_PARTS + 1][..n + 1], out)
    } else {
        merge_parts(ranks, piece, &mut vec![EMPTY; n + 1], out)
    }
}

#[inline(always)]
fn pair_rank<R: RankLookup>(ranks: &R, bytes: &[u8]) -> Rank {
    ranks.rank_of(bytes).unwrap_or(Rank::MAX)
}

/// The merge over `parts`, one per byte of `piece` and one more.
#[inline(always)]
fn merge_parts<R: RankLookup>(ranks: &R, piece: &[u8], parts: &mut [Part], out: &mut Vec<Rank>) -> Result<()> {
    let n = piece.len();
    let mut min_rank: (Rank, usize) = (Rank::MAX, usize::MAX);
    for i in 0..n - 1 {
        let rank = pair_rank(ranks, &piece[i..i + 2]);
        if rank < min_rank.0 {
            min_rank = (rank, i);
        }
        parts[i] = Part { start: i as u32, id: pair_rank(ranks, &piece[i..i + 1]), rank };
    }
    parts[n - 1] = Part { start: (n - 1) as u32, id: pair_rank(ranks, &piece[n - 1..]), rank: Rank::MAX };
    parts[n] = Part { start: n as u32, id: Rank::MAX, rank: Rank::MAX };
    let mut len = n + 1;

    while min_rank.0 != Rank::MAX {
        let (merged, i) = min_rank;
        // parts i and i + 1 become part i; its pairs are with i - 1 and with i + 2 (before the shift)
        parts[i].id = merged;
        if i > 0 {
            let (start, end) = (parts[i - 1].start as usize, parts[i + 2].start as usize);
            parts[i - 1].rank = pair_rank(ranks, &piece[start..end]);
        }
        parts[i].rank = if i + 3 < len {
            pair_rank(ranks, &piece[parts[i].start as usize..parts[i + 3].start as usize])
        } else {
            Rank::MAX
        };
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
        min_rank = (Rank::MAX, usize::MAX);
        for (j, p) in parts[..len - 1].iter().enumerate() {
            if p.rank < min_rank.0 {
                min_rank = (p.rank, j);
            }
        }
    }
    for w in parts[..len].windows(2) {
        if w[0].id == Rank::MAX {
            return Err(Error::NoToken(piece[w[0].start as usize..w[1].start as usize].to_vec()));
        }
        out.push(w[0].id);
    }
    Ok(())
}

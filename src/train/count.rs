//! The counting phase: pre-tokenize text in parallel and count distinct pre-tokens.
//!
//! Input comes either as independent documents ([`Counter::add_documents`]) or as a byte stream
//! fed in blocks of any size ([`Counter::feed`]); a stream is cut only at safe cuts
//! ([`super::stream`]), so its pieces are those of the whole text while at most one block plus
//! an unfinished tail is in memory. Special tokens are cut out before pre-tokenizing (leftmost,
//! then longest occurrence) and are never counted.
//!
//! Performance notes:
//! - Each worker counts a part (~1 MiB) into its own maps, keyed by the packed form of words of
//!   up to 15 bytes ([`super::packed`]: no `memcmp`, no pointer chase; counting's CPU time on 2
//!   threads 1.37 -> 0.93 s with the next change) and by borrowed slices for longer words, so
//!   the hot loop allocates nothing; the maps are then added into the global table.
//! - The global table is split into 64 shards by the word's hash, and every worker's map is split
//!   the same way, so shards are merged in parallel with no locks (merging one map into a single
//!   table was the serial bottleneck once pre-tokenization ran on several threads).
//! - Every worker thread has its own compiled pre-tokenizer. Clones of one fancy-regex `Regex`
//!   share its matcher caches behind one pool (for patterns with look-around, as all the OpenAI
//!   ones have), and contention on that pool made two threads slower than one (4.4 s vs 3.5 s
//!   for the 49 MB benchmark mix on 2 cores).
//! - On 2 threads a fifth of counting's CPU time was on the calling thread, outside the parallel
//!   jobs. Two things moved out of it: checking the UTF-8 of the parts (now on the workers) and
//!   copying every fed block behind the carried tail (a block is now counted where it lies from
//!   its first safe cut to its last). Calling thread, 50 MB in 8 MB blocks: 0.41 -> 0.33 -> 0.22 s
//!   of CPU (three runs of each).

use super::stream;
use super::packed;
use super::words::{add_to_shard, shard_of, Shard, WordCounts, SHARDS};
use crate::error::{Error, Result};
use crate::pretokenize::Pretokenizer;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Target size of one parallel counting job.
const PART_BYTES: usize = 1 << 20;
/// Smallest part worth a job of its own when splitting a stream block.
const MIN_PART_BYTES: usize = 64 << 10;
/// A stream tail with no safe cut is cut anyway past this size (bounded memory).
pub const MAX_CARRY: usize = 64 << 20;

/// What the counter has seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CountStats {
    /// Input bytes (UTF-8), special tokens included.
    pub bytes: u64,
    /// Documents, counting each finished stream as one.
    pub documents: u64,
    /// Pre-tokens counted.
    pub pieces: u64,
    /// Special-token occurrences cut out of the text.
    pub specials: u64,
    /// Stream cuts made where no safe cut was found within [`MAX_CARRY`] bytes.
    pub forced_cuts: u64,
}

pub struct Counter {
    /// One per worker thread (see the performance notes).
    pretokenizers: Vec<Pretokenizer>,
    specials: Vec<Vec<u8>>,
    automaton: Option<AhoCorasick>,
    counts: WordCounts,
    carry: Vec<u8>,
    in_stream: bool,
    threads: usize,
    /// Distinct short and long words of the last job, to size the next job's maps.
    last_job: [AtomicUsize; 2],
    pub stats: CountStats,
}

/// One worker's counts, split by shard: words of at most 15 bytes under their packed form
/// ([`packed`]), longer ones as slices of the text.
struct Local<'a> {
    short: Vec<FxHashMap<u128, u64>>,
    long: Vec<FxHashMap<&'a [u8], u64>>,
    pieces: u64,
    specials: u64,
}


impl Counter {
    /// A counter for `pattern` that cuts out `specials`; `threads` = 0 uses every core.
    pub fn new(pattern: &str, specials: Vec<String>, threads: usize) -> Result<Self> {
        if specials.iter().any(|s| s.is_empty()) {
            return Err(Error::Vocab("a special token is the empty string".into()));
        }
        let specials: Vec<Vec<u8>> = specials.into_iter().map(String::into_bytes).collect();
        let automaton = if specials.is_empty() {
            None
        } else {
            Some(
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&specials)
                    .map_err(|e| Error::Vocab(format!("special tokens: {e}")))?,
            )
        };
        let workers = crate::parallel::thread_count(threads);
        Ok(Counter {
            pretokenizers: (0..workers).map(|_| Pretokenizer::new(pattern)).collect::<Result<_>>()?,
            specials,
            automaton,
            counts: WordCounts::new(),
            carry: Vec::new(),
            in_stream: false,
            threads,
            last_job: [AtomicUsize::new(0), AtomicUsize::new(0)],
            stats: CountStats::default(),
        })
    }

    /// Number of distinct words so far.
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// Counts independent documents (each is pre-tokenized on its own).
    pub fn add_documents(&mut self, docs: &[&str]) -> Result<()> {
        self.stats.documents += docs.len() as u64;
        self.stats.bytes += docs.iter().map(|d| d.len() as u64).sum::<u64>();
        self.count_parts(docs)
    }

    /// Feeds the next block of a UTF-8 byte stream (a file); blocks may end anywhere, even inside
    /// a character. Invalid UTF-8 is read as U+FFFD, like Python's `errors="replace"`.
    pub fn feed(&mut self, data: &[u8]) -> Result<()> {
        self.in_stream = true;
        self.stats.bytes += data.len() as u64;
        if let Some((first, last)) = self.cuts_within(data) {
            // the carry and the block's head up to its first safe cut make one text; the rest up
            // to its last safe cut is counted where it lies, not copied
            let mut head = std::mem::take(&mut self.carry);
            head.extend_from_slice(&data[..first]);
            self.count_stream_texts(&[&head, &data[first..last]])?;
            self.carry = data[last..].to_vec();
            return Ok(());
        }
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(data);
        let cut = match stream::last_safe_cut(&buf, &self.specials) {
            Some(c) => c,
            None if buf.len() > MAX_CARRY => {
                self.stats.forced_cuts += 1;
                stream::forced_cut(&buf)
            }
            None => {
                self.carry = buf;
                return Ok(());
            }
        };
        self.carry = buf[cut..].to_vec();
        buf.truncate(cut);
        self.count_stream_texts(&[&buf])
    }

    /// The first and the last safe cut of `data` if both exist and are far enough from its start
    /// that what came before `data` cannot matter to them (the look-back of [`stream`]'s rule).
    fn cuts_within(&self, data: &[u8]) -> Option<(usize, usize)> {
        let margin = 8 + self.specials.iter().map(Vec::len).max().unwrap_or(0);
        if data.len() <= margin {
            return None;
        }
        let first = stream::next_safe_cut(data, margin, &self.specials)?;
        let last = stream::last_safe_cut(data, &self.specials)?;
        (last >= first).then_some((first, last))
    }

    /// Ends the current stream: counts what is left of it.
    pub fn end_stream(&mut self) -> Result<()> {
        if !self.in_stream {
            return Ok(());
        }
        let rest = std::mem::take(&mut self.carry);
        self.in_stream = false;
        self.stats.documents += 1;
        self.count_stream_texts(&[&rest])
    }

    /// Ends any stream and returns all counts, leaving the counter empty.
    pub fn take_counts(&mut self) -> Result<WordCounts> {
        self.end_stream()?;
        Ok(std::mem::take(&mut self.counts))
    }

    /// Counts consecutive texts of a stream, each ending at a safe cut (or at the stream's end).
    fn count_stream_texts(&mut self, bufs: &[&[u8]]) -> Result<()> {
        let size: usize = bufs.iter().map(|b| b.len()).sum();
        if size == 0 {
            return Ok(());
        }
        let workers = crate::parallel::thread_count(self.threads);
        let target = (size / (2 * workers)).clamp(MIN_PART_BYTES, PART_BYTES);
        let parts: Vec<&[u8]> = bufs
            .iter()
            .filter(|b| !b.is_empty())
            .flat_map(|b| stream::split_at_safe_cuts(b, target, &self.specials))
            .collect();
        let parts: Vec<Cow<str>> = if self.threads == 1 || parts.len() <= 1 {
            parts.into_iter().map(String::from_utf8_lossy).collect()
        } else {
            // checking UTF-8 on the calling thread was a fifth of counting's serial part on 2
            // threads (calling thread 0.41 -> 0.33 s of CPU for the 50 MB benchmark mix)
            crate::parallel::pool(self.threads).install(|| parts.into_par_iter().map(String::from_utf8_lossy).collect())
        };
        let parts: Vec<&str> = parts.iter().map(|p| p.as_ref()).collect();
        self.count_parts(&parts)
    }

    /// Counts parts in parallel jobs of about [`PART_BYTES`] and adds them to the shards.
    fn count_parts(&mut self, parts: &[&str]) -> Result<()> {
        let mut jobs: Vec<&[&str]> = Vec::new();
        let (mut start, mut size) = (0, 0);
        for (i, p) in parts.iter().enumerate() {
            size += p.len();
            if size >= PART_BYTES {
                jobs.push(&parts[start..=i]);
                (start, size) = (i + 1, 0);
            }
        }
        if start < parts.len() {
            jobs.push(&parts[start..]);
        }
        let this = &*self;
        let locals: Vec<Local> = if self.threads == 1 || jobs.len() <= 1 {
            jobs.iter().map(|j| this.count_job(j)).collect::<Result<_>>()?
        } else {
            crate::parallel::pool(self.threads)
                .install(|| jobs.par_iter().map(|j| this.count_job(j)).collect::<Result<_>>())?
        };
        for l in &locals {
            self.stats.pieces += l.pieces;
            self.stats.specials += l.specials;
        }
        // Words are added in parallel, shard by shard, new ones included. (New words used to be
        // gathered and stored by this thread, so that the table came from one malloc arena: words
        // stored from worker threads stayed in their arenas when freed, which cost 30 MB of peak
        // memory in the merge phase on 2 threads. Since the freed counts are handed back to the OS
        // (`malloc_trim` in `merge.rs`) that is gone, and storing them here was 0.14 s of serial
        // CPU time: counting then merging on 2 threads, calling thread 0.15 -> 0.007 s of CPU,
        // process 0.76 -> 0.69 s, peak 161-174 -> 151-154 MB, 5 alternated pairs at load ~6.)
        let add = |(s, shard): (usize, &mut Shard)| {
            let mut buf = [0u8; 16];
            for l in &locals {
                for (&k, &c) in &l.short[s] {
                    add_to_shard(shard, packed::unpack(k, &mut buf), c);
                }
                for (&w, &c) in &l.long[s] {
                    add_to_shard(shard, w, c);
                }
            }
        };
        let shards = self.counts.shards_mut();
        if self.threads == 1 || locals.len() <= 1 {
            shards.iter_mut().enumerate().for_each(add);
        } else {
            crate::parallel::pool(self.threads).install(|| shards.par_iter_mut().enumerate().for_each(add));
        }
        Ok(())
    }

    /// One worker: split at special tokens, pre-tokenize, count.
    fn count_job<'a>(&self, texts: &[&'a str]) -> Result<Local<'a>> {
        let worker = rayon::current_thread_index().unwrap_or(0) % self.pretokenizers.len();
        let pretokenizer = &self.pretokenizers[worker];
        // maps sized from the last job's distinct words: growing them by rehashing was 4% of
        // counting's CPU time
        let size = |i: usize| {
            let n = self.last_job[i].load(Ordering::Relaxed) / SHARDS;
            n + n / 4
        };
        let (short, long) = (size(0), size(1));
        let mut local = Local {
            short: (0..SHARDS).map(|_| FxHashMap::with_capacity_and_hasher(short, Default::default())).collect(),
            long: (0..SHARDS).map(|_| FxHashMap::with_capacity_and_hasher(long, Default::default())).collect(),
            pieces: 0,
            specials: 0,
        };
        for &text in texts {
            let mut start = 0;
            if let Some(ac) = &self.automaton {
                for m in ac.find_iter(text.as_bytes()) {
                    count_gap(pretokenizer, &text[start..m.start()], &mut local)?;
                    local.specials += 1;
                    start = m.end();
                }
            }
            count_gap(pretokenizer, &text[start..], &mut local)?;
        }
        self.last_job[0].store(local.short.iter().map(|m| m.len()).sum(), Ordering::Relaxed);
        self.last_job[1].store(local.long.iter().map(|m| m.len()).sum(), Ordering::Relaxed);
        Ok(local)
    }
}

#[inline]
fn count_gap<'a>(pretokenizer: &Pretokenizer, text: &'a str, local: &mut Local<'a>) -> Result<()> {
    let bytes = text.as_bytes();
    pretokenizer.for_each_piece(text, |s, e| {
        if let Some(k) = packed::pack_in(bytes, s, e) {
            *local.short[packed::shard_of_key(k)].entry(k).or_insert(0) += 1;
        } else {
            let w = &bytes[s..e];
            *local.long[shard_of(w)].entry(w).or_insert(0) += 1;
        }
        local.pieces += 1;
        Ok(())
    })
}

#[cfg(test)]
#[path = "count_tests.rs"]
mod tests;

//! The counting phase: pre-tokenize text in parallel and count distinct pre-tokens.
//!
//! Input comes either as independent documents ([`Counter::add_documents`]) or as a byte stream
//! fed in blocks of any size ([`Counter::feed`]); a stream is cut only at safe cuts
//! ([`super::stream`]), so its pieces are those of the whole text while at most one block plus
//! an unfinished tail is in memory. Special tokens are cut out before pre-tokenizing (leftmost,
//! then longest occurrence) and are never counted.
//!
//! Performance notes (49 MB benchmark mix, o200k's hand-written splitter, 2 cores):
//! - Every worker thread has its own pre-tokenizer (clones of one fancy-regex `Regex` share its
//!   matcher caches behind one pool, and contention on that pool made two threads slower than one)
//!   and its own word table, kept for the whole run and merged into one only when the counts are
//!   taken (shard by shard, in parallel). Counting each job into a fresh map and adding that map
//!   into a global table after every block spent about a third of the CPU time on adding up
//!   (most words of a 1 MB part recur in every other part) and put a barrier after each block.
//! - Jobs are small (~256 KiB) and turned into text inside the worker, so the threads stay busy
//!   to the end of each block; the caller's thread only finds the safe cuts.

use super::stream;
use super::words::WordCounts;
use crate::error::{Error, Result};
use crate::pretokenize::Pretokenizer;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use rayon::prelude::*;
use std::sync::Mutex;

/// Target size of one parallel counting job.
const PART_BYTES: usize = 256 << 10;
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
    /// One pre-tokenizer and one word table per worker thread (see the performance notes); a
    /// worker locks only its own table, so the locks are never contended.
    workers: Vec<Worker>,
    specials: Vec<Vec<u8>>,
    automaton: Option<AhoCorasick>,
    carry: Vec<u8>,
    in_stream: bool,
    threads: usize,
    pub stats: CountStats,
}

struct Worker {
    pretokenizer: Pretokenizer,
    table: Mutex<WordCounts>,
}

/// What one job saw besides its words.
#[derive(Default)]
struct JobStats {
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
        let workers = (0..rayon_threads(threads))
            .map(|_| Ok(Worker { pretokenizer: Pretokenizer::new(pattern)?, table: Mutex::default() }))
            .collect::<Result<_>>()?;
        Ok(Counter {
            workers,
            specials,
            automaton,
            carry: Vec::new(),
            in_stream: false,
            threads,
            stats: CountStats::default(),
        })
    }

    /// Number of distinct words so far (merges the workers' tables).
    pub fn distinct(&mut self) -> usize {
        self.gather();
        self.workers[0].table.get_mut().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Counts independent documents (each is pre-tokenized on its own).
    pub fn add_documents(&mut self, docs: &[&str]) -> Result<()> {
        self.stats.documents += docs.len() as u64;
        self.stats.bytes += docs.iter().map(|d| d.len() as u64).sum::<u64>();
        let parts: Vec<&[u8]> = docs.iter().map(|d| d.as_bytes()).collect();
        self.count_parts(&parts)
    }

    /// Feeds the next block of a UTF-8 byte stream (a file); blocks may end anywhere, even inside
    /// a character. Invalid UTF-8 is read as U+FFFD, like Python's `errors="replace"`.
    pub fn feed(&mut self, data: &[u8]) -> Result<()> {
        self.in_stream = true;
        self.stats.bytes += data.len() as u64;
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
        self.count_stream_text(&buf)
    }

    /// Ends the current stream: counts what is left of it.
    pub fn end_stream(&mut self) -> Result<()> {
        if !self.in_stream {
            return Ok(());
        }
        let rest = std::mem::take(&mut self.carry);
        self.in_stream = false;
        self.stats.documents += 1;
        self.count_stream_text(&rest)
    }

    /// Ends any stream and returns all counts, leaving the counter empty.
    pub fn take_counts(&mut self) -> Result<WordCounts> {
        self.end_stream()?;
        self.gather();
        Ok(std::mem::take(self.workers[0].table.get_mut().unwrap_or_else(|e| e.into_inner())))
    }

    /// Adds every worker's table into the first one, shard by shard in parallel.
    fn gather(&mut self) {
        if self.workers.len() < 2 {
            return;
        }
        let tables: Vec<WordCounts> = self
            .workers
            .iter_mut()
            .map(|w| std::mem::take(w.table.get_mut().unwrap_or_else(|e| e.into_inner())))
            .collect();
        let total = if self.threads == 1 {
            WordCounts::sum(tables)
        } else {
            crate::parallel::pool(self.threads).install(|| WordCounts::sum(tables))
        };
        *self.workers[0].table.get_mut().unwrap_or_else(|e| e.into_inner()) = total;
    }

    fn count_stream_text(&mut self, buf: &[u8]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let target = (buf.len() / (4 * self.workers.len())).clamp(MIN_PART_BYTES, PART_BYTES);
        let parts = stream::split_at_safe_cuts(buf, target, &self.specials);
        self.count_parts(&parts)
    }

    /// Counts parts (UTF-8, invalid bytes read as U+FFFD) in parallel jobs of about
    /// [`PART_BYTES`], each into its worker's table.
    fn count_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        let mut jobs: Vec<&[&[u8]]> = Vec::new();
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
        let done: Vec<JobStats> = if self.threads == 1 || jobs.len() <= 1 {
            jobs.iter().map(|j| this.count_job(j)).collect::<Result<_>>()?
        } else {
            crate::parallel::pool(self.threads)
                .install(|| jobs.par_iter().map(|j| this.count_job(j)).collect::<Result<_>>())?
        };
        for d in done {
            self.stats.pieces += d.pieces;
            self.stats.specials += d.specials;
        }
        Ok(())
    }

    /// One job: decode, split at special tokens, pre-tokenize, count into this thread's table.
    fn count_job(&self, texts: &[&[u8]]) -> Result<JobStats> {
        let worker = &self.workers[rayon::current_thread_index().unwrap_or(0) % self.workers.len()];
        let mut table = worker.table.lock().unwrap_or_else(|e| e.into_inner());
        let mut stats = JobStats::default();
        for &bytes in texts {
            let text = String::from_utf8_lossy(bytes);
            let mut start = 0;
            if let Some(ac) = &self.automaton {
                for m in ac.find_iter(text.as_bytes()) {
                    count_gap(&worker.pretokenizer, &text[start..m.start()], &mut table, &mut stats)?;
                    stats.specials += 1;
                    start = m.end();
                }
            }
            count_gap(&worker.pretokenizer, &text[start..], &mut table, &mut stats)?;
        }
        Ok(stats)
    }
}

#[inline]
fn count_gap(pretokenizer: &Pretokenizer, text: &str, table: &mut WordCounts, stats: &mut JobStats) -> Result<()> {
    let bytes = text.as_bytes();
    pretokenizer.for_each_piece(text, |s, e| {
        table.add_word(&bytes[s..e], 1);
        stats.pieces += 1;
        Ok(())
    })
}

fn rayon_threads(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, |p| p.get())
    } else {
        threads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GPT2: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

    fn whole(pattern: &str, text: &str) -> WordCounts {
        let p = Pretokenizer::new(pattern).unwrap();
        let mut wc = WordCounts::new();
        for piece in p.split(text).unwrap() {
            wc.add_word(piece.as_bytes(), 1);
        }
        wc
    }

    #[test]
    fn stream_in_small_blocks_equals_whole_text() {
        let text =
            "Hello world.\nThe cat's  hat\n\n  is 1234 big!\n/path\nend \nnext\r\nline\u{e9}t\u{e9}\nZ  "
                .repeat(50);
        for threads in [1, 2] {
            for block in [1, 3, 7, 64, 1000] {
                let mut c = Counter::new(GPT2, vec![], threads).unwrap();
                for chunk in text.as_bytes().chunks(block) {
                    c.feed(chunk).unwrap();
                }
                let wc = c.take_counts().unwrap();
                assert_eq!(wc, whole(GPT2, &text), "block {block}");
                assert_eq!(c.stats.bytes, text.len() as u64);
                assert_eq!(c.stats.documents, 1);
            }
        }
    }

    #[test]
    fn specials_are_cut_out() {
        let mut c = Counter::new(GPT2, vec!["<|end|>".into(), "<|end|>x".into()], 1).unwrap();
        c.add_documents(&["a<|end|>b", "<|end|>xy"]).unwrap();
        let wc = c.take_counts().unwrap();
        let mut want = WordCounts::new();
        for w in ["a", "b", "y"] {
            want.add_word(w.as_bytes(), 1);
        }
        assert_eq!(wc, want);
        assert_eq!(c.stats.specials, 2);
        assert_eq!(c.stats.documents, 2);
    }
}

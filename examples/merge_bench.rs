//! Times the flat merge (`merge::small`) alone, on the pieces of real text that reach it.
//!
//! `cargo run --release --no-default-features --example merge_bench [DATA_DIR]`
//! (default `$BPEKIT_TEST_DATA`, else `../shared/data` next to the crate). For cl100k_base and
//! o200k_base: splits the corpora with the encoding's pattern, keeps the pieces of 2–63 bytes that
//! are not one token (what `CoreBpe` hands the flat merge on a pre-token cache miss), and merges
//! them all over `FastRanks`, best of 7 runs by CPU time of this thread. Prints ns per piece,
//! MB/s of merged bytes and a checksum of the ids (equal between two builds that agree).
//!
//! A profiling target for the merge without Python, the splitter or the pre-token cache around it
//! (`perf record` on a `CARGO_PROFILE_RELEASE_DEBUG=line-tables-only` build). Its absolute
//! numbers move by 30% or more with the load of a shared machine; to A/B two versions of the
//! merge, compile both into one binary and alternate them every few thousand pieces, as the
//! sixth round did (`src/PERFORMANCE.md`, "Sixth round: the flat merge").

use bpekit::merge::{small, FastRanks, RankLookup};
use bpekit::pretokenize::known::{CL100K, O200K};
use bpekit::pretokenize::Pretokenizer;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Seconds this thread has spent on a CPU (Linux's schedstat, in ns), else wall-clock seconds.
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns / 1e9)
}

/// The first 400 lines of every file under `dir` (sorted; as `benches/corpora.py`'s
/// multilingual corpus), invalid UTF-8 replaced.
fn texts_under(dir: &Path) -> Vec<String> {
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
        Err(e) => panic!("{}: {e}; pass the data folder or set BPEKIT_TEST_DATA", dir.display()),
    };
    paths.sort();
    let head = |b: Vec<u8>| String::from_utf8_lossy(&b).split_inclusive('\n').take(400).collect();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).map(head).collect()
}

/// The pieces of `texts` that the flat merge gets: 2–63 bytes, not one token.
fn merged_pieces<'a>(pattern: &str, ranks: &FastRanks, texts: &'a [String]) -> Vec<&'a [u8]> {
    let split = Pretokenizer::new(pattern).unwrap();
    let mut pieces = Vec::new();
    for t in texts {
        split
            .for_each_piece(t, |s, e| {
                let piece = &t.as_bytes()[s..e];
                if (2..small::STACK_PARTS).contains(&piece.len()) && ranks.rank_of(piece).is_none() {
                    pieces.push(piece);
                }
                Ok(())
            })
            .unwrap();
    }
    pieces
}

fn main() {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        std::env::var_os("BPEKIT_TEST_DATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
    });
    let corpora = dir.join("corpora");
    let mut multilingual = texts_under(&corpora.join("bible"));
    multilingual.extend(texts_under(&corpora.join("tatoeba")));
    let english: Vec<String> = ["tinyshakespeare.txt", "taylorswift.txt"]
        .iter()
        .map(|f| std::fs::read_to_string(corpora.join(f)).unwrap())
        .collect();
    for (name, pattern) in [("cl100k_base", CL100K), ("o200k_base", O200K)] {
        let path = dir.join("ranks").join(format!("{name}.tiktoken"));
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ranks = FastRanks::new(&bpekit::rankfile::parse(&data, name).unwrap());
        for (corpus, texts) in [("multilingual", &multilingual), ("english", &english)] {
            let pieces = merged_pieces(pattern, &ranks, texts);
            let bytes: usize = pieces.iter().map(|p| p.len()).sum();
            let mut out = Vec::with_capacity(bytes);
            let epoch = Instant::now();
            let mut best = f64::INFINITY;
            for _ in 0..7 {
                out.clear();
                let start = cpu_seconds(epoch);
                for p in &pieces {
                    small::encode_into(&ranks, p, &mut out).unwrap();
                }
                best = best.min(cpu_seconds(epoch) - start);
            }
            let sum = out.iter().fold(0u64, |h, &id| h.wrapping_mul(31).wrapping_add(id as u64));
            println!(
                "{name} {corpus}: {} pieces, {:.2} MB, {:.1} ns per piece, {:.1} MB/s, ids {} (checksum {sum:x})",
                pieces.len(),
                bytes as f64 / 1e6,
                best / pieces.len() as f64 * 1e9,
                bytes as f64 / 1e6 / best,
                out.len()
            );
        }
    }
}

//! Times the backtracking tables' build over a byte set (what a fresh encoder's first long piece
//! of random letters pays before merging), and the first merge with them.
//!
//! `cargo run --release --no-default-features --example build_bench [DATA_DIR]`

use bpekit::merge::backtrack::{Backtrack, ByteSet};
use bpekit::rankfile::parse;
use std::time::Instant;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).or_else(|| std::env::var("BPEKIT_TEST_DATA").ok()).unwrap_or_else(|| "../shared/data".into()));
    for name in ["cl100k_base", "o200k_base"] {
        let data = std::fs::read(dir.join("ranks").join(format!("{name}.tiktoken"))).unwrap();
        let ranks = parse(&data, name).unwrap();
        let mut x = 12345u64;
        let text: Vec<u8> = (0..1_000_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b'a' + (x % 26) as u8
            })
            .collect();
        let set = ByteSet::of(&text);
        let mut sorted: Vec<(u32, &[u8])> = ranks.iter().map(|(b, &r)| (r, b.as_slice())).collect();
        sorted.sort_unstable_by_key(|t| t.0);
        let (mut best_sel, mut best_build, mut best_first, mut best_again) = (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
        for _ in 0..7 {
            let t = Instant::now();
            let tokens: Vec<(u32, &[u8])> = sorted.iter().copied().filter(|(_, b)| set.covers(b)).collect();
            best_sel = best_sel.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let bt = Backtrack::from_tokens(&tokens, &set).unwrap();
            best_build = best_build.min(t.elapsed().as_secs_f64());
            let mut out = Vec::new();
            let t = Instant::now();
            assert!(bt.encode_into(&text, &mut out));
            best_first = best_first.min(t.elapsed().as_secs_f64());
            out.clear();
            let t = Instant::now();
            assert!(bt.encode_into(&text, &mut out));
            best_again = best_again.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name}: select {:.2} ms, build {:.2} ms, first merge {:.2} ms, again {:.2} ms",
            best_sel * 1e3,
            best_build * 1e3,
            best_first * 1e3,
            best_again * 1e3
        );
    }
}

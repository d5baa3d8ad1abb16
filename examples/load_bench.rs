//! Where the time of building an encoder from a `.tiktoken` file goes (parse, vocabulary tables,
//! pre-tokenizer): `cargo run --release --example load_bench -- PATH [ROUNDS]`.

use bpekit::core::CoreBpe;
use bpekit::merge::FastRanks;
use bpekit::vocab::Vocab;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: load_bench PATH [ROUNDS]");
    let rounds: usize = args.get(2).map_or(5, |r| r.parse().expect("ROUNDS"));
    let data = std::fs::read(path).expect("read");
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    for _ in 0..rounds {
        let t = Instant::now();
        let ranks = bpekit::rankfile::parse(&data, path).expect("parse");
        let parse = ms(t);
        let t = Instant::now();
        let fast = FastRanks::new(&ranks);
        let fast_ms = ms(t);
        drop(fast);
        let t = Instant::now();
        let vocab = Vocab::new(ranks.clone(), &[]).expect("vocab");
        let vocab_ms = ms(t);
        drop(vocab);
        let t = Instant::now();
        let core = CoreBpe::new(ranks, vec![], bpekit::pretokenize::known::O200K).expect("core");
        let core_ms = ms(t);
        drop(core);
        let t = Instant::now();
        let flat = bpekit::rankfile::parse_flat(&data, path).expect("parse");
        let flat_parse = ms(t);
        let t = Instant::now();
        let core = CoreBpe::from_flat(flat, vec![], bpekit::pretokenize::known::O200K).expect("core");
        let flat_core = ms(t);
        let t = Instant::now();
        drop(core);
        println!("map: parse {parse:.1} ms, FastRanks {fast_ms:.1}, Vocab {vocab_ms:.1}, CoreBpe::new {core_ms:.1}; flat: parse {flat_parse:.1}, CoreBpe::from_flat {flat_core:.1}, drop {:.1}", ms(t));
    }
}

//! Tests of the counting phase (`count.rs`): streams in blocks of any size and texts with
//! special tokens count as the whole text does; packed and byte-slice keys count alike.

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
fn stream_with_specials_in_large_blocks_equals_whole_text() {
    // blocks large enough to be counted in place (`cuts_within`), with special tokens around
    // the cuts and line breaks right at the start of blocks
    let text = "<|end|>Ab\nCd<|end|>\nEf gh\n\u{e9}t\u{e9} 12\n<|end|>x\nYz ".repeat(300);
    let whole = {
        let mut c = Counter::new(GPT2, vec!["<|end|>".into()], 1).unwrap();
        c.add_documents(&[&text]).unwrap(); // one document: never cut
        c.take_counts().unwrap()
    };
    assert!(whole.len() > 5);
    for threads in [1, 2] {
        for block in [16, 17, 40, 333, 4096] {
            let mut c = Counter::new(GPT2, vec!["<|end|>".into()], threads).unwrap();
            for chunk in text.as_bytes().chunks(block) {
                c.feed(chunk).unwrap();
            }
            assert_eq!(c.take_counts().unwrap(), whole, "block {block}");
            assert_eq!(c.stats.specials, 900);
        }
    }
}

#[test]
fn short_and_long_words_count_as_the_byte_slice_table_does() {
    // words of 0-40 characters (packed keys up to 15 bytes, slices beyond) with NULs and
    // 2-, 3- and 4-byte characters, in 3 MiB of documents so that two threads take the
    // parallel path; `whole` adds every piece to the table one by one
    let alphabet = ["a", "b", "\0", "\u{e9}", "\u{4e2d}", "Z", "\u{1F600}", "7", "-"];
    let mut seed = 0x9e37_79b9_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    };
    let mut docs = Vec::new();
    let mut size = 0;
    while size < 3 << 20 {
        let mut doc = String::new();
        for _ in 0..next() % 60 {
            doc.push(' ');
            for _ in 0..next() % 41 {
                doc.push_str(alphabet[next() % alphabet.len()]);
            }
        }
        size += doc.len();
        docs.push(doc);
    }
    let mut want = WordCounts::new();
    for doc in &docs {
        want.merge_from(&whole(GPT2, doc));
    }
    let lens: Vec<usize> = want.iter().map(|(w, _)| w.len()).collect();
    assert!(lens.iter().any(|&n| n <= packed::MAX_PACKED) && lens.iter().any(|&n| n > 40));
    let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
    for threads in [1, 2] {
        let mut c = Counter::new(GPT2, vec![], threads).unwrap();
        c.add_documents(&docs).unwrap();
        assert_eq!(c.take_counts().unwrap(), want, "{threads} threads");
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

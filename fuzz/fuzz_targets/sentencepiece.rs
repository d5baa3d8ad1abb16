//! libFuzzer entry for `bpekit::fuzzing::sentencepiece` (the body, and what it checks, is in src/fuzzing.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bpekit::fuzzing::sentencepiece(data));

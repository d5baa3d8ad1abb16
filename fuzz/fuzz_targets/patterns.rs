//! libFuzzer entry for `bpekit::fuzzing::patterns` (the body, and what it checks, is in src/fuzzing_patterns.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bpekit::fuzzing::patterns(data));

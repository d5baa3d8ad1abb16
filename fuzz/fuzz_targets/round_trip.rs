//! libFuzzer entry for `bpekit::fuzzing::round_trip` (the body, and what it checks, is in src/fuzzing.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bpekit::fuzzing::round_trip(data));

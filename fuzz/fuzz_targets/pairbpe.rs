//! libFuzzer entry for `bpekit::fuzzing::pairbpe` (the body, and what it checks, is in src/fuzzing_pairbpe.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bpekit::fuzzing::pairbpe(data));

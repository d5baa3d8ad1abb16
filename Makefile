# bpekit's one toolchain: CI runs `make test` through .ci/run (see README).
.PHONY: help install test test-rust test-python bench bench-encode lint fuzz

help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install:  ## build the Rust core and install the package with test dependencies (editable)
	pip install -e ".[dev]"

test: test-rust test-python  ## the whole test suite

test-rust:  ## Rust unit and differential tests (no Python needed)
	cargo test --release --no-default-features --quiet

test-python:  ## the Python test suite
	python -m pytest -q

bench-encode:  ## single-thread encode speed vs tiktoken (docs/benchmarks.md)
	python benches/encode.py --rounds 5 --numpy

bench: bench-encode  ## every benchmark

lint:  ## clippy with warnings as errors
	cargo clippy --no-default-features -- -D warnings

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= pretokenize round_trip merges rankfile specials
FUZZ_SANITIZER ?= none
# Per target (see docs/reliability.md): the differential targets (pretokenize, round_trip, merges)
# cost grows with the input, so -max_len 256, and they are built without comparison tracing
# (--no-trace-compares, 2.4x the exec/s; their seeds are real text) in target/notc; the parsers
# (rankfile 4096, specials 512) keep it, it is what lets libFuzzer guess numbers and delimiters.
fuzz:  ## run every cargo-fuzz target FUZZ_SECONDS each (nightly + cargo-fuzz; seeds from fuzz/make_corpus.py)
	python fuzz/make_corpus.py
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		case $$t in rankfile) ml=4096 fl="";; specials) ml=512 fl="";; \
			*) ml=256 fl="--no-trace-compares --target-dir target/notc";; esac; \
		cargo +nightly fuzz run --sanitizer $(FUZZ_SANITIZER) $$fl $$t corpus/$$t -- -max_len=$$ml \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -print_final_stats=1 || exit 1; \
	done

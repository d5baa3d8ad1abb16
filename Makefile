# bpekit's one toolchain: CI runs `make test` through .ci/run (see README).
.PHONY: help install test test-rust test-python browser bench bench-encode lint fuzz

help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

install:  ## build the Rust core and install the package with test dependencies (editable)
	pip install -e ".[dev]"

test: test-rust test-python  ## the whole test suite

test-rust:  ## Rust unit and differential tests (no Python needed)
	cargo test --release --no-default-features --quiet

test-python: browser  ## the Python test suite
	python -m pytest -q

# The picture tests drive a real headless Chromium (Debian's package). Installed here when missing
# and we may (root with apt-get); otherwise those tests skip and say why.
browser:  ## make sure Chromium is there for tests/viz/test_browser.py
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
		|| { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		     && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } \
		|| echo "chromium not installed: the browser tests will skip"

bench-encode:  ## single-thread encode speed vs tiktoken (docs/benchmarks.md)
	python benches/encode.py --rounds 5 --numpy

bench-speed:  ## encode speed, worst cases, load time and memory vs tiktoken and every installed peer
	python benches/speed.py --rounds 3 --write-docs

bench: bench-encode bench-speed  ## every benchmark

lint:  ## clippy with warnings as errors, without and with the Python bindings
	cargo clippy --no-default-features -- -D warnings
	cargo clippy --features python -- -D warnings

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= pretokenize round_trip merges rankfile specials sentencepiece pairbpe patterns
FUZZ_PY_TARGETS ?= tiktoken minbpe sentencepiece json hf gguf
FUZZ_SANITIZER ?= none
# Per target (see docs/reliability.md): the differential targets (pretokenize, round_trip, merges)
# cost grows with the input, so -max_len 256, and they are built without comparison tracing
# (--no-trace-compares, 2.4x the exec/s; their seeds are real text) in target/notc; so is
# specials (max_len 512): its bytes map onto a five-letter alphabet, so comparison tracing has
# little to find. The rank-file parser (4096) keeps it: it lets libFuzzer guess digits and tabs.
# The Python parsers (atheris, fuzz/python/parsers.py) run one after the other, each input
# limited to 10 s and the process to 2 GB; FUZZ_PY_TARGETS= skips them.
fuzz:  ## run every cargo-fuzz and atheris target FUZZ_SECONDS each (nightly + cargo-fuzz, atheris; seeds from fuzz/make_corpus.py)
	python fuzz/make_corpus.py
	cd fuzz && for t in $(FUZZ_TARGETS); do \
		case $$t in rankfile) ml=4096 fl="";; specials) ml=512 fl="--no-trace-compares --target-dir target/notc";; \
			*) ml=256 fl="--no-trace-compares --target-dir target/notc";; esac; \
		cargo +nightly fuzz run --sanitizer $(FUZZ_SANITIZER) $$fl $$t corpus/$$t -- -max_len=$$ml \
			-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 -print_final_stats=1 || exit 1; \
	done
	mkdir -p fuzz/artifacts; for t in $(FUZZ_PY_TARGETS); do \
		python fuzz/python/parsers.py $$t -timeout=10 -rss_limit_mb=2048 -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 -artifact_prefix=fuzz/artifacts/py_$$t- fuzz/corpus/py_$$t || exit 1; \
	done

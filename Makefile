# bpekit's one toolchain: CI runs `make test` through .ci/run (see README).
.PHONY: help install test test-rust test-python bench bench-encode lint

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

bench-speed:  ## encode speed, worst cases, load time and memory vs tiktoken and every installed peer
	python benches/speed.py --rounds 3 --write-docs

bench: bench-encode bench-speed  ## every benchmark

lint:  ## clippy with warnings as errors
	cargo clippy --no-default-features -- -D warnings

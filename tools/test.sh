#!/usr/bin/env bash
# The test command: every Rust test of the workspace, then the Python
# package, installed into a virtual environment, and its pytest suite
# (python/test.sh). cargo test builds the Python extension too (the
# extension-module feature on, so that it links as Python loads it), and
# python/test.sh installs that build: the library is compiled once.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --features jounce-python/extension-module
# cargo test builds no cdylib, so the package is built by maturin develop
bash python/test.sh

#!/usr/bin/env bash
# The test command: every Rust test of the workspace, then the Python
# package, installed into a virtual environment, and its pytest suite
# (python/test.sh). The library is compiled once, in the test profile:
# cargo test builds everything but the extension's cdylib (a test harness
# links no cdylib); the cargo build below links it from the same artifacts
# and unified features (--tests, the extension-module feature on, so that
# it links as Python loads it), about a minute, where a separate maturin
# build compiled the whole workspace again in the dev profile (5 minutes
# of CI); python/test.sh --from-cargo installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --features jounce-python/extension-module
cargo build --workspace --lib --bins --tests --profile test --features jounce-python/extension-module
bash python/test.sh --from-cargo

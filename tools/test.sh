#!/usr/bin/env bash
# The test command: every Rust test of the workspace, then the Python
# package built into a virtual environment and its pytest suite
# (python/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
bash python/test.sh

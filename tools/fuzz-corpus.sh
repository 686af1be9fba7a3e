#!/usr/bin/env bash
# Seed corpus of the cargo-fuzz target: every *.toml under examples/ and
# tests/ (the 1000-body chain left out: too large to mutate usefully).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=fuzz/corpus/parse_check
mkdir -p "$dir"
find examples tests -name '*.toml' -size -50k -print0 |
  while IFS= read -r -d '' f; do
    cp "$f" "$dir/$(echo "$f" | tr '/' '_')"
  done
echo "$(ls "$dir" | wc -l) seed files in $dir"

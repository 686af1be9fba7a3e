#!/usr/bin/env bash
# The Python package's tests: create a virtual environment (default
# .venv at the repository root, JOUNCE_VENV to change it), install the
# pinned test tools into it, build and install the package (`maturin
# develop`: the dev profile, which reuses what `cargo test --workspace`
# compiled; JOUNCE_PY_RELEASE=1 for an optimised build), build the
# `jounce` command the tests compare with, run pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=${JOUNCE_VENV:-$root/.venv}
python=${PYTHON:-python3}
start=$(date +%s)
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
release=()
profile=debug
if [ -n "${JOUNCE_PY_RELEASE:-}" ]; then
  release=(--release)
  profile=release
fi
(cd python && VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop -q "${release[@]}")
# the command the tests compare with, from the same sources and profile
cargo build -q --bin jounce "${release[@]}"
export JOUNCE_CLI="$root/target/$profile/jounce"
echo "python/test.sh: environment and build $(( $(date +%s) - start )) s"
"$venv/bin/python" -m pytest -q python/tests "$@"
echo "python/test.sh: total $(( $(date +%s) - start )) s"

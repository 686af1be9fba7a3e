#!/usr/bin/env bash
# The Python package's tests: create a virtual environment (default .venv
# at the repository root; JOUNCE_VENV to change it), install the pinned
# test tools into it (requirements-test.txt), install the package, run
# pytest on python/tests (extra arguments go to pytest).
#
# How the package is built:
#   python/test.sh                 maturin develop (dev profile; with
#                                  JOUNCE_PY_RELEASE=1 --release)
#   python/test.sh --from-cargo    the extension that tools/test.sh has just
#                                  built in the test profile (`cargo build
#                                  --workspace --lib --bins --tests --profile
#                                  test --features
#                                  jounce-python/extension-module`): the
#                                  package's files and target/debug/lib_jounce.so
#                                  installed into the environment. A separate
#                                  maturin build would compile the library
#                                  again (cargo test unifies other features:
#                                  dev-dependencies, the CLI's), minutes in CI.
# The tests compare with the `jounce` command of the same profile
# (target/debug/jounce, built by cargo test in the test profile; rebuilt
# here when older than the sources), or $JOUNCE_CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=${JOUNCE_VENV:-$root/.venv}
python=${PYTHON:-python3}
from_cargo=
if [ "${1:-}" = "--from-cargo" ]; then
  from_cargo=1
  shift
fi
start=$(date +%s)
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
pip=("$venv/bin/python" -m pip -q)
"${pip[@]}" install -r python/requirements-test.txt
"${pip[@]}" uninstall -y jounce >/dev/null 2>&1 || true
profile=debug
if [ -n "$from_cargo" ]; then
  so=target/debug/lib_jounce.so
  if [ ! -f "$so" ]; then
    echo "python/test.sh --from-cargo: no $so; run tools/test.sh (or its cargo build line) first" >&2
    exit 1
  fi
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -rf "$site/jounce"
  mkdir -p "$site/jounce"
  cp python/jounce/*.py python/jounce/*.pyi python/jounce/py.typed "$site/jounce/"
  cp "$so" "$site/jounce/_jounce.abi3.so"
else
  release=()
  if [ -n "${JOUNCE_PY_RELEASE:-}" ]; then
    release=(--release)
    profile=release
  fi
  (cd python && VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop -q "${release[@]}")
fi
# the command the tests compare with, from the same sources and profile
if [ -z "${JOUNCE_CLI:-}" ]; then
  export JOUNCE_CLI="$root/target/$profile/jounce"
  if [ ! -x "$JOUNCE_CLI" ] || [ -n "$(find crates src -name '*.rs' -newer "$JOUNCE_CLI" | head -1)" ]; then
    if [ "$profile" = release ]; then cargo build -q --release --bin jounce; elif [ -n "$from_cargo" ]; then cargo build -q --profile test --bin jounce; else cargo build -q --bin jounce; fi
  fi
fi
echo "python/test.sh: environment and build $(( $(date +%s) - start )) s"
status=0
"$venv/bin/python" -m pytest -q python/tests "$@" || status=$?
echo "python/test.sh: total $(( $(date +%s) - start )) s"
exit $status

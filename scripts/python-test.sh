#!/usr/bin/env bash
# The Python package: builds the wheel with maturin (target/python/wheels), installs it
# into a fresh virtual environment (target/python/venv) with pytest and jax, and runs
# python/tests against the Rust binary (target/release/oomlens, built first) on the
# committed fixtures and on real out-of-memory failures of the CPU backend.
#
# OOMLENS_PYTHON: the interpreter (default python3, >= 3.9). Tools (maturin, pytest,
# jax) come from the package index or pip's cache; where jax cannot be installed the
# jax tests are reported as skipped with the reason (pytest -rs), never passed.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${OOMLENS_PYTHON:-python3}
say() { printf '\033[1m[python]\033[0m %s\n' "$*"; }

tools=target/python/tools
if [ ! -x "$tools/bin/maturin" ]; then
  say "a build venv with maturin ($tools)"
  "$py" -m venv "$tools"
  "$tools/bin/pip" install -q 'maturin>=1.9.4,<2'
fi
[ -x target/release/oomlens ] || cargo build --release

say "building the wheel"
rm -rf target/python/wheels
(cd python && "../$tools/bin/maturin" build --release --out ../target/python/wheels)
wheel=$(ls target/python/wheels/oomlens-*.whl)

venv=target/python/venv
say "installing $(basename "$wheel") into a fresh venv ($venv)"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install -q "$wheel" pytest
if ! "$venv/bin/pip" install -q jax; then
  say "WARNING: jax could not be installed: the oomlens.jax tests will be reported as skipped"
fi

say "pytest"
OOMLENS_BIN=$PWD/target/release/oomlens "$venv/bin/python" -m pytest -rs -p no:cacheprovider python/tests

#!/usr/bin/env bash
# The Python package: builds the wheel with maturin (target/python/wheels), with the web
# page (dist/) inside for its TensorBoard tab, installs it into a fresh virtual
# environment (target/python/venv) with pytest, jax, tensorboard and the fleet extra
# (dask, pyarrow, fsspec), and runs
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

# The TensorBoard tab (oomlens.tensorboard) serves the web page from the wheel: dist/,
# built again when a source of the engine or the page is newer, goes into
# python/oomlens/tensorboard/static (git-ignored; pyproject.toml's maturin include).
if [ ! -f dist/oomlens_bg.wasm ] || [ -n "$(find src www proto Cargo.toml Cargo.lock build.rs -newer dist/oomlens_bg.wasm -print -quit 2>/dev/null)" ]; then
  say "building the web page (dist/) for the wheel's TensorBoard tab"
  node scripts/build.mjs
fi
rm -rf python/oomlens/tensorboard/static
mkdir -p python/oomlens/tensorboard/static
cp -R dist/. python/oomlens/tensorboard/static/

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
# TensorBoard, for the OOM tab's tests here and in tests/web/tensorboard.test.mjs (which
# starts target/python/venv/bin/tensorboard); under CI its absence fails those tests.
if ! "$venv/bin/pip" install -q "$wheel[tensorboard]"; then
  say "WARNING: tensorboard could not be installed: the TensorBoard tab's tests will be reported as skipped (failed under CI)"
fi
# The fleet extra (dask, distributed, pyarrow, fsspec) for oomlens.fleet's tests
# (python/tests/test_fleet.py): skipped without it, failed under CI=true.
if ! "$venv/bin/pip" install -q "$wheel[fleet]"; then
  say "WARNING: the fleet extra could not be installed: the oomlens.fleet tests will be reported as skipped (failed under CI)"
fi

say "pytest"
OOMLENS_BIN=$PWD/target/release/oomlens "$venv/bin/python" -m pytest -rs -p no:cacheprovider python/tests

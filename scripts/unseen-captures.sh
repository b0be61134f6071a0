#!/usr/bin/env bash
# Records fresh JAX captures at sizes the committed fixtures do not have, with their
# memory_analysis() oracle, and checks oomlens against them. Needs Python 3 with
# jax[cpu] (installed into .venv when missing) and, for XProf's figures, xprof.
set -euo pipefail
cd "$(dirname "$0")/.."

python=python3
if ! python3 -c "import jax" 2>/dev/null; then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  python=.venv/bin/python
  "$python" -c "import jax" 2>/dev/null || "$python" -m pip install -q "jax[cpu]"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Two sizes the committed fixtures were not recorded at.
for scale in 2 3; do
  "$python" tests/fixtures/make_captures.py --out "$out/scale$scale" --scale "$scale" --no-xprof
done
OOMLENS_UNSEEN_CAPTURES="$out" cargo test --release --test own_captures -- --nocapture unseen

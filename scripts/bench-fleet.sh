#!/usr/bin/env bash
# oomlens.fleet's throughput (host files/s, MB/s) and memory (peak RSS per Dask worker)
# against the single-process CLI on the same host files (python/benches/fleet.py says
# how). Uses the venv scripts/python-test.sh builds (target/python/venv: the wheel and
# the fleet extra) and target/release/oomlens; OOMLENS_VENV picks another venv.
#
#   scripts/bench-fleet.sh [--files 1000] [--hosts 8] [--workers 1,2] [--repeat 3] [--big 300]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${OOMLENS_VENV:-target/python/venv}
[ -x target/release/oomlens ] || cargo build --release
if ! "$venv/bin/python" -c 'import oomlens.fleet, dask.distributed, pyarrow' 2>/dev/null; then
  echo "bench-fleet: $venv lacks oomlens and the fleet extra: run scripts/python-test.sh first" >&2
  exit 2
fi
exec "$venv/bin/python" python/benches/fleet.py "$@"

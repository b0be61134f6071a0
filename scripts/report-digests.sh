#!/usr/bin/env bash
# Renders every report oomlens can be asked for on the inputs at hand — each capture
# under tests/fixtures, the scenario captures of tests/support, the shared captures
# (when ../shared is there), each recorded failure with and without its error text, and
# the corpus of pasted error messages — as JSON, text and Markdown, and prints one md5
# per output. Run it with the binaries before and after a refactor and diff the two
# listings: what works today must keep working byte for byte.
#
#   scripts/report-digests.sh [BINARY] [OUT_DIR] > digests.txt
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/oomlens}")
out=${2:-$(mktemp -d)}
mkdir -p "$out"
scenarios=$out/scenarios
if [ ! -d "$scenarios" ]; then
  OOMLENS_WRITE_SCENARIOS="$scenarios" cargo test -q --release --test write_scenarios >/dev/null
fi
shared=()
[ -d ../shared/captures ] && shared=(../shared/captures)
mapfile -t inputs < <(find tests/fixtures "$scenarios" "${shared[@]}" tests/corpus/analyze -name '*.xplane.pb' | sort)
render() { # name, then the arguments
  local name=$1; shift
  for format in json text markdown; do
    "$bin" "$@" --format "$format" > "$out/$name.$format" 2>&1 || echo "exit $?" >> "$out/$name.$format"
  done
}
for f in "${inputs[@]}"; do
  name=$(basename "$f" .xplane.pb)
  render "$name" "$f"
  [ -f "$(dirname "$f")/error.txt" ] && render "$name.pasted" "$f" --error-text "$(dirname "$f")/error.txt"
done
render train_eval.eval_step tests/fixtures/train_eval --module jit_eval_step
for e in tests/fixtures/errors/*.txt; do
  render "pasted.$(basename "$e" .txt)" "$scenarios/attention_plan_too_big.xplane.pb" --error-text "$e"
done
(cd "$out" && md5sum -- *.json *.text *.markdown)

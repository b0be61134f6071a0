#!/usr/bin/env bash
# A folder of many hosts, against one host (issue 14 §4; BENCHMARKS.md "A folder of
# hosts"). Makes 256 host files from real captures of different sizes — each capture of
# tests/fixtures and ../shared/captures (read there, never copied into the repository),
# scaled 1×, 8× and 32× by the bench's scaler — in bench-out/hosts/ (git-ignored), then
# times oomlens on one host, 16 hosts and 256 hosts (JSON and text), with peak RSS.
#
#   scripts/bench-hosts.sh [HOSTS...]     # default: 16 256
set -euo pipefail
cd "$(dirname "$0")/.."
counts=("${@:-16 256}"); counts=(${counts[@]})
cargo build --release --quiet
bin=target/release/oomlens
out=bench-out/hosts
mkdir -p "$out/scaled"
mapfile -t sources < <(ls tests/fixtures/*/*.xplane.pb ../shared/captures/*.xplane.pb 2>/dev/null | sort)
scaled=()
for src in "${sources[@]}"; do
  for copies in 1 8 32; do
    name=$(basename "$(dirname "$src")")_$(basename "$src" .xplane.pb)_${copies}x.xplane.pb
    target=$out/scaled/$name
    [ -f "$target" ] || cargo bench --quiet --bench bench -- scale "$src" "$target" "$copies" >/dev/null
    scaled+=("$target")
  done
done
max=0; for n in "${counts[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
for n in 1 "${counts[@]}"; do
  dir=$out/run_$n
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    # Host i takes scaled capture i mod S: every folder has the same mix of sizes.
    for ((i = 0; i < n; i++)); do
      ln "${scaled[$((i % ${#scaled[@]}))]}" "$dir/$(printf 'host%04d' "$i").xplane.pb"
    done
  fi
done
measure() { # label, then the command; prints wall seconds and peak RSS (MiB)
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o /tmp/oomlens-bench-time "$@" >/dev/null 2>&1 || true
  read -r s kib < /tmp/oomlens-bench-time
  printf '| %s | %s s | %.1f MiB |\n' "$label" "$s" "$(echo "$kib / 1024" | bc -l)"
}
echo "sources: ${#sources[@]} captures × 3 sizes = ${#scaled[@]} files, $(du -shL "$out/scaled" | cut -f1) in all"
echo "| what | wall | peak RSS |"
echo "|---|---|---|"
one=$(ls "$out/run_1"/*.xplane.pb)
measure "1 host ($(stat -c %s "$one") bytes), JSON" "$bin" "$one" --format json
largest=$(ls -S "$out"/scaled/*.xplane.pb | head -1)
measure "the largest host ($(stat -c %s "$largest") bytes), JSON" "$bin" "$largest" --format json
for n in "${counts[@]}"; do
  dir=$out/run_$n
  bytes=$(du -sbL "$dir" | cut -f1)
  measure "$n hosts ($((bytes / 1000000)) MB), JSON" "$bin" "$dir" --format json
  measure "$n hosts, text summary" "$bin" "$dir"
  measure "$n hosts, JSON, --jobs 1" "$bin" "$dir" --format json --jobs 1
done

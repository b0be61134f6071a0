#!/usr/bin/env bash
# Runs every test: formatting and lints, the Rust tests (unit, real captures, our own
# captures against XLA's memory_analysis(), malformed input), the oracle check on
# captures recorded fresh at other sizes, the GitHub Pages workflow (checked, and its
# build run here: it builds dist/), and the browser tests of the page.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "format and lints"
cargo fmt --check
cargo clippy --all-targets -- -D warnings

step "Rust tests"
cargo build --release
cargo test --release

step "captures at sizes the committed fixtures do not have, against memory_analysis()"
bash scripts/unseen-captures.sh

step "the GitHub Pages workflow: its structure, then its own build of dist/"
node scripts/check-pages-workflow.mjs --build

step "the page, in Chromium"
npm test

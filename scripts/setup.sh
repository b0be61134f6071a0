#!/usr/bin/env bash
# Installs what oomlens needs to build, serve and test, on a fresh Debian machine.
# Safe to run again: each step is skipped when its tool is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

if ! command -v cargo >/dev/null; then
  echo "setup: cargo is missing; install Rust with rustup (https://rustup.rs) and run this again" >&2
  exit 1
fi
if ! rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
if ! command -v wasm-pack >/dev/null; then
  say "installing wasm-pack (compiles from crates.io, a few minutes)"
  cargo install wasm-pack --locked
fi
need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
command -v node >/dev/null || need_apt+=(nodejs npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing ${need_apt[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install ${need_apt[*]} (Debian: sudo apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  say "installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi

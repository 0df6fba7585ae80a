#!/usr/bin/env bash
# Sets up, builds and opens attnscope on the built-in example (the two "bank" sentences).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec ./build/bin/attnscope "$@"

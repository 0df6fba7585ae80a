#!/bin/sh
# Heatmap frame time at 4,096 tokens on Mesa's llvmpipe at 1600x1000 (issue 12's target: < 33 ms),
# zoomed out and while panning (zoomed 8x, 7 rows and 5 columns a frame, bouncing at the edges).
# Usage: bench/heatmap_frame_bench.sh [build/bin/attnscope] [runs]
# Prints each run's median frame time (the app's own --layout statistics: frames after the first
# two, GL work included through glFinish) and the median of the runs.
set -eu
BIN=${1:-build/bin/attnscope}
RUNS=${2:-3}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
HERE=$(dirname "$0")
/usr/bin/python3 "$HERE/make_long_trace.py" 4096 "$DIR/long.safetensors"
run() {  # $1: label, $2: extra options
  all=""
  i=0
  while [ "$i" -lt "$RUNS" ]; do
    # shellcheck disable=SC2086
    xvfb-run -a -s '-screen 0 1600x1000x24' "$BIN" view "$DIR/long.safetensors" \
      --window 1600x1000 --frames 120 --screenshot "$DIR/shot.png" --layout "$DIR/layout.json" $2
    ms=$(/usr/bin/python3 -c "import json,sys; print('%.1f' % json.load(open(sys.argv[1]))['frame_ms_median'])" "$DIR/layout.json")
    all="$all $ms"
    i=$((i + 1))
  done
  median=$(echo "$all" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$1: runs (ms):$all  median $median ms"
}
run "4096 tokens, zoomed out" ""
run "4096 tokens, zoomed 8x, panning" "--heatmap-view 8,0,0,7,5"

#!/bin/sh
# Frame time of the model view with every head of a 16-layer x 32-head model at 128 tokens (issue
# 12: < 33 ms on llvmpipe at 1600x1000). A random Llama-shaped trace (model_view_trace.py) is opened
# through a session whose panel is the model view; the app renders FRAMES frames headless under
# Xvfb and its layout file reports the median frame time (whole frame including the GL work,
# glFinish'ed) and the median UI-building time. Run it a few times, side by side with other work
# stopped or not, and quote the medians.
#
#   bench/model_view_frame.sh build/bin/attnscope [RUNS=3] [FRAMES=120] [WINDOW=1600x1000]
set -eu
bin=${1:?usage: model_view_frame.sh path/to/attnscope [runs] [frames] [window]}
runs=${2:-3}
frames=${3:-120}
window=${4:-1600x1000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 "$(dirname "$0")/model_view_trace.py" "$dir/trace.safetensors"
printf '{"format": "attnscope-session/1", "model": "trace:%s", "view": {"panel": "model"}}\n' \
  "$dir/trace.safetensors" >"$dir/s.attnscope"
i=0
while [ "$i" -lt "$runs" ]; do
  XDG_CONFIG_HOME="$dir/config" xvfb-run -a -s "-screen 0 ${window}x24" "$bin" \
    --session "$dir/s.attnscope" --window "$window" --frames "$frames" \
    --screenshot "$dir/shot.png" --layout "$dir/layout.json"
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
m=[v for v in d["views"] if v["view"]=="model"][0]
print("run %s: %dx%d heads, %d tokens, frame median %.1f ms, UI median %.1f ms, atlas builds %d" % (sys.argv[2],
 m["layers"], m["heads"], len(d["traces"][0]["tokens"]), d["frame_ms_median"], d["ui_ms_median"], m["atlas_builds"]))' \
    "$dir/layout.json" "$i"
  i=$((i + 1))
done

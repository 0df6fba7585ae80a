#!/bin/bash
# Clicks the visible window at X,Y and then presses KEYS, with real X events (xdotool under Xvfb,
# no window manager), then quits it with Ctrl+Q; the app writes OUTDIR/layout.json as it quits.
# Usage: click_then_keys.sh ATTNSCOPE_BINARY OUTDIR X Y "KEYS" [APP ARGS...]   (run under xvfb-run)
# KEYS are xdotool key names separated by spaces ("Next", "space").
set -u
bin=$1 out=$2 x=$3 y=$4 keys=$5
shift 5
export HOME=$out XDG_CONFIG_HOME=$out/config
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }
frames=$out/frames
. "$(dirname "$0")/frames.sh"
"$bin" "$@" --layout "$out/layout.json" --frame-file "$frames" &
pid=$!
wid=$(timeout 60 xdotool search --sync --onlyvisible --name attnscope | head -1)
[ -n "$wid" ] || fail "the window did not appear"
# The keyboard focus first: a focus change arriving with the keys may clear ImGui's key state.
xdotool windowfocus "$wid" || fail "windowfocus"
# The model loads and the trace arrives. With --ready-file among the app's arguments, also wait
# for that file (the first box has the keyboard).
ready=
prev=
for a in "$@"; do
  [ "$prev" = --ready-file ] && ready=$a
  prev=$a
done
wait_settled
if [ -n "$ready" ]; then
  for _ in $(seq 1800); do [ -f "$ready" ] && break; sleep 0.1; done
  [ -f "$ready" ] || fail "the app never became ready"
fi
wait_frames 3
xdotool mousemove --window "$wid" "$x" "$y" || fail "mousemove"
wait_frames 3  # ImGui sees the pointer over the control before the button goes down
xdotool click 1
wait_frames 4
for key in $keys; do
  xdotool key "$key"
  wait_frames 4
done
quit_app
echo ok

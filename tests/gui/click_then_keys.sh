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
"$bin" "$@" --layout "$out/layout.json" &
pid=$!
wid=$(timeout 30 xdotool search --sync --onlyvisible --name attnscope | head -1)
[ -n "$wid" ] || fail "the window did not appear"
# The first frames: the model loads and the trace arrives. With --ready-file among the app's
# arguments, wait for that file (the model settled and the first box has the keyboard) instead of
# a fixed time, which a machine busy with other work can overrun.
ready=
prev=
for a in "$@"; do
  [ "$prev" = --ready-file ] && ready=$a
  prev=$a
done
if [ -n "$ready" ]; then
  for _ in $(seq 600); do [ -f "$ready" ] && break; sleep 0.1; done
  [ -f "$ready" ] || fail "the app never became ready"
  sleep 0.3
else
  sleep 2
fi
xdotool windowfocus "$wid" || fail "windowfocus"
xdotool mousemove --window "$wid" "$x" "$y" || fail "mousemove"
sleep 0.5  # ImGui sees the pointer over the control before the button goes down
xdotool click 1
sleep 0.5
for key in $keys; do
  xdotool key "$key"
  sleep 0.5
done
xdotool key ctrl+q
for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
kill -0 "$pid" 2>/dev/null && fail "Ctrl+Q did not quit"
wait "$pid" || fail "exit code $?"
echo ok

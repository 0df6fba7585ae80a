#!/bin/bash
# The visible window driven by real key presses (xdotool under Xvfb, no window manager):
# Ctrl+S writes a timestamped PNG of the window into ~/Pictures/attnscope, Ctrl+= enlarges the
# text, Ctrl+Q quits with exit code 0, and the settings are remembered in $XDG_CONFIG_HOME.
# Usage: interactive_test.sh ATTNSCOPE_BINARY   (run under xvfb-run)
set -u
bin=$1
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME=$home XDG_CONFIG_HOME=$home/config
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }

"$bin" --window 1280x720 & pid=$!
wid=$(timeout 30 xdotool search --sync --onlyvisible --name attnscope | head -1)
[ -n "$wid" ] || fail "the window did not appear"
sleep 2  # let the first frames draw; the shortcuts go through GLFW's queue, not ImGui's state
xdotool windowfocus "$wid" || fail "windowfocus"
xdotool key ctrl+s
for _ in $(seq 40); do
  shot=$(ls "$home"/Pictures/attnscope/attnscope-*.png 2>/dev/null | head -1)
  [ -n "$shot" ] && break
  sleep 0.25
done
[ -n "$shot" ] || fail "Ctrl+S wrote no screenshot"
sleep 0.5  # the PNG is written in one go; give it time to finish
# PNG header: width and height are big-endian 32-bit numbers at bytes 16 and 20.
size=$(od -An -tu1 -j16 -N8 "$shot" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')
[ "$size" = "1280x720" ] || fail "screenshot is $size, expected 1280x720"
case "$(basename "$shot")" in attnscope-20[0-9][0-9][01][0-9][0-3][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9].png) ;; *) fail "name $(basename "$shot") is not timestamped" ;; esac
xdotool key ctrl+equal
sleep 1
xdotool key ctrl+q
for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
kill -0 "$pid" 2>/dev/null && fail "Ctrl+Q did not quit"
wait "$pid"; rc=$?
[ "$rc" = 0 ] || fail "exit code $rc"
settings=$XDG_CONFIG_HOME/attnscope/settings.json
[ -f "$settings" ] || fail "no $settings"
grep -q '"font_scale": 1.1' "$settings" || fail "Ctrl+= was not remembered: $(cat "$settings")"
grep -q '"window_width": 1280' "$settings" || fail "window size not remembered"
echo "ok: $size screenshot, font scale and window size remembered"

#!/bin/bash
# The visible window driven by real key presses (xdotool under Xvfb, no window manager):
# F12 writes a timestamped PNG of the window into the pictures folder that user-dirs.dirs names
# (XDG_PICTURES_DIR="$HOME/Bilder": Bilder/attnscope), Ctrl+= enlarges the text, Ctrl+Q quits
# with exit code 0, and the settings are remembered in $XDG_CONFIG_HOME.
# Usage: interactive_test.sh ATTNSCOPE_BINARY   (run under xvfb-run)
set -u
bin=$1
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME=$home XDG_CONFIG_HOME=$home/config
unset XDG_PICTURES_DIR
mkdir -p "$XDG_CONFIG_HOME"
echo 'XDG_PICTURES_DIR="$HOME/Bilder"' >"$XDG_CONFIG_HOME/user-dirs.dirs"
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }

frames=$home/frames
. "$(dirname "$0")/frames.sh"
"$bin" --window 1280x720 --frame-file "$frames" & pid=$!
wid=$(timeout 60 xdotool search --sync --onlyvisible --name attnscope | head -1)
[ -n "$wid" ] || fail "the window did not appear"
xdotool windowfocus "$wid" || fail "windowfocus"
wait_settled  # the first frames drawn (frames.sh: no fixed sleep a busy machine overruns)
wait_frames 3
xdotool key F12
for _ in $(seq 600); do
  shot=$(ls "$home"/Bilder/attnscope/attnscope-*.png 2>/dev/null | head -1)
  [ -n "$shot" ] && break
  sleep 0.25
done
[ -n "$shot" ] || fail "F12 wrote no screenshot in \$HOME/Bilder/attnscope"
[ -e "$home/Pictures" ] && fail "a screenshot went to ~/Pictures, not to XDG_PICTURES_DIR"
wait_frames 3  # the PNG is written within the frame that took it
# PNG header: width and height are big-endian 32-bit numbers at bytes 16 and 20.
size=$(od -An -tu1 -j16 -N8 "$shot" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')
[ "$size" = "1280x720" ] || fail "screenshot is $size, expected 1280x720"
case "$(basename "$shot")" in attnscope-20[0-9][0-9][01][0-9][0-3][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9].png) ;; *) fail "name $(basename "$shot") is not timestamped" ;; esac
xdotool key ctrl+equal
wait_frames 4
quit_app
settings=$XDG_CONFIG_HOME/attnscope/settings.json
[ -f "$settings" ] || fail "no $settings"
grep -q '"font_scale": 1.1' "$settings" || fail "Ctrl+= was not remembered: $(cat "$settings")"
grep -q '"window_width": 1280' "$settings" || fail "window size not remembered"
echo "ok: $size screenshot, font scale and window size remembered"

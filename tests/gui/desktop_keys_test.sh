#!/bin/bash
# Desktop conventions with real X events (xdotool under Xvfb, no window manager), issue 25:
# 1. No dialog program (ATTNSCOPE_FILE_DIALOG=none): Ctrl+S asks for a path in the typed-path
#    popup (~/lesson.attnscope) and saves there; Ctrl+Shift+S to the same file asks "Replace …?":
#    Escape (Cancel) keeps the file's bytes, Enter (Replace) writes the new state.
# 2. F12 writes screenshots into $XDG_PICTURES_DIR/attnscope; two in a row are two files.
# 3. The window comes back where it was (settings.json window_x/window_y) when that is on a
#    monitor, not when it is off every monitor, and not with --window.
# Usage: desktop_keys_test.sh ATTNSCOPE_BINARY   (run under xvfb-run)
set -u
bin=$1
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME=$home XDG_CONFIG_HOME=$home/config XDG_RUNTIME_DIR=$home/run
export ATTNSCOPE_FILE_DIALOG=none XDG_PICTURES_DIR=$home/shots
mkdir -p "$XDG_CONFIG_HOME/attnscope" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }
frames=$home/frames
. "$(dirname "$0")/frames.sh"

start() {
  rm -f "$frames"
  "$bin" "$@" --frame-file "$frames" &
  pid=$!
  wid=$(timeout 60 xdotool search --sync --onlyvisible --pid "$pid" --name attnscope | head -1)
  [ -n "$wid" ] || fail "the window did not appear"
  xdotool windowfocus "$wid" || fail "windowfocus"
  wait_settled
  wait_frames 3
}
# A key held for two frames: ImGui 1.86 samples keys once per frame, so a tap inside one frame
# would be lost to its popups (the app's shortcuts have their own queue and take taps).
press() {
  xdotool keydown "$1"
  wait_frames 2
  xdotool keyup "$1"
  wait_frames 3
}
position() { xdotool getwindowgeometry "$wid" | sed -n 's/.*Position: \([-0-9]*,[-0-9]*\).*/\1/p'; }

# --- 1. Save, then save over it: Cancel keeps the bytes, Replace writes ---------------------------
session=$home/lesson.attnscope
start --window 1280x720
xdotool key ctrl+s
wait_frames 4
press Return
for _ in $(seq 100); do [ -s "$session" ] && break; sleep 0.1; done
[ -s "$session" ] || fail "Ctrl+S and Enter in the path popup saved nothing at $session"
grep -q '"font_scale": 1.0' "$session" || fail "unexpected session: $(cat "$session")"
cp "$session" "$home/before"
xdotool key ctrl+equal
wait_frames 4
xdotool key ctrl+shift+s
wait_frames 4
press Return # the path popup shows the session's own file: the question comes
press Escape # Cancel
cmp -s "$session" "$home/before" || fail "Cancel changed the file: $(cat "$session")"
xdotool key ctrl+shift+s
wait_frames 4
press Return
press Return # Replace
for _ in $(seq 100); do grep -q '"font_scale": 1.1' "$session" && break; sleep 0.1; done
grep -q '"font_scale": 1.1' "$session" || fail "Replace did not write: $(cat "$session")"

# --- 2. F12: screenshots in $XDG_PICTURES_DIR/attnscope, a new file each --------------------------
xdotool key F12
wait_frames 4
xdotool key F12
for _ in $(seq 200); do
  [ "$(ls "$home"/shots/attnscope/attnscope-*.png 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.1
done
n=$(ls "$home"/shots/attnscope/attnscope-*.png 2>/dev/null | wc -l)
[ "$n" -eq 2 ] || fail "two F12 presses gave $n screenshots in \$XDG_PICTURES_DIR/attnscope"
[ -e "$home/Pictures" ] && fail "a screenshot went to ~/Pictures"
quit_app

# --- 3. The window's place -----------------------------------------------------------------------
settings=$XDG_CONFIG_HOME/attnscope/settings.json
grep -q '"window_x"' "$settings" || fail "no position remembered: $(cat "$settings")"
echo '{"window_x": 137, "window_y": 71, "window_width": 900, "window_height": 600}' >"$settings"
start
[ "$(position)" = "137,71" ] || fail "the window is at $(position), not at the remembered 137,71"
xdotool getwindowgeometry "$wid" | grep -q "Geometry: 900x600" || fail "size not restored"
quit_app
grep -q '"window_x": 137' "$settings" || fail "position not saved again: $(cat "$settings")"
# Off every monitor (Xvfb's screen is 1600x1000): not restored.
echo '{"window_x": 5000, "window_y": 71, "window_width": 900, "window_height": 600}' >"$settings"
start
[ "$(position)" != "5000,71" ] || fail "restored a position off every monitor"
quit_app
# --window: neither the remembered size nor the place.
echo '{"window_x": 137, "window_y": 71, "window_width": 900, "window_height": 600}' >"$settings"
start --window 800x500
[ "$(position)" != "137,71" ] || fail "--window was placed at the remembered position"
xdotool getwindowgeometry "$wid" | grep -q "Geometry: 800x500" || fail "--window size not used"
quit_app
echo "ok: typed-path save, Replace/Cancel, F12 to XDG_PICTURES_DIR, window position"

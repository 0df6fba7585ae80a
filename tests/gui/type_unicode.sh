#!/bin/bash
# Types into sentence 1's text box of the visible window with real X key events (xdotool under
# Xvfb, no window manager), so the characters go GLFW -> attnscope's char callback -> ImGui.
# Usage: type_unicode.sh ATTNSCOPE_BINARY OUTDIR TEXT TYPED [KEYS_BEFORE [CLIPBOARD]]
# (run under xvfb-run). CLIPBOARD, when given, is put on the X clipboard (xclip) before the keys,
# so KEYS_BEFORE "ctrl+v" pastes it.
# Writes OUTDIR/layout.json (the app's layout file, written when Ctrl+Q quits it).
# xdotool types a character missing from the keymap by remapping a spare keycode for a moment;
# GLFW often reads the event after the mapping was restored and gets no character. So the
# characters above U+00FF are bound to spare keycodes first (xkbcomp), while the app is
# connected (a server with no client left resets its keymap).
set -u
bin=$1 out=$2 text=$3 typed=$4 before=${5:-} clip=${6:-}
export HOME=$out XDG_CONFIG_HOME=$out/config
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }
frames=$out/frames
. "$(dirname "$0")/frames.sh"
"$bin" --window 1280x720 --text "$text" --layout "$out/layout.json" --ready-file "$out/ready" \
  --frame-file "$frames" &
pid=$!
wid=$(timeout 60 xdotool search --sync --onlyvisible --name attnscope | head -1)
[ -n "$wid" ] || fail "the window did not appear"
xkbcomp -w0 "$DISPLAY" "$out/keymap.xkb" || fail "xkbcomp could not read the keymap"
code=207
# (od reads 4-byte words in the host order: UTF-32LE on the little-endian machines we run on)
for cp in $(printf '%s' "$typed" | iconv -f UTF-8 -t UTF-32LE | od -An -v -tx4); do
  cp=$((16#$cp))
  [ "$cp" -le 255 ] && continue
  sym=$(printf 'U%04X' "$cp")
  # <I208>.. are XF86 media keys in the default keymap: rebind one bound key per character.
  code=$((code + 1))
  while ! grep -q "key <I$code> {" "$out/keymap.xkb"; do
    code=$((code + 1))
    [ "$code" -le 250 ] || fail "no spare keycode left"
  done
  sed -i "s/key <I$code> {[^}]*}/key <I$code> { [ $sym ] }/" "$out/keymap.xkb"
done
xkbcomp -w0 "$out/keymap.xkb" "$DISPLAY" || fail "xkbcomp could not load the keymap"
wait_settled
for _ in $(seq 1800); do [ -f "$out/ready" ] && break; sleep 0.1; done
[ -f "$out/ready" ] || fail "the text box never had the keyboard"
xdotool windowfocus "$wid" || fail "windowfocus"
wait_frames 3  # the focus change read before the keys
if [ -n "$clip" ]; then
  printf '%s' "$clip" | xclip -selection clipboard -i || fail "xclip could not set the clipboard"
fi
if [ -n "$before" ]; then
  xdotool key --delay 100 $before
  # ImGui takes one key event per frame; a paste reaches the box a character per frame (the
  # typed characters' way, for emoji).
  n=$(printf '%s' "$clip" | iconv -f UTF-8 -t UTF-32LE | wc -c)
  wait_frames $((n / 4 * 2 + 4 * $(echo $before | wc -w) + 4))
fi
if [ -n "$typed" ]; then
  # Each character is a key press and release: two events, a frame each.
  chars=$(printf '%s' "$typed" | iconv -f UTF-8 -t UTF-32LE | wc -c)
  xdotool type --delay 150 "$typed"
  wait_frames $((chars / 4 * 3 + 4))
fi
quit_app
echo ok

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
"$bin" --window 1280x720 --text "$text" --layout "$out/layout.json" --ready-file "$out/ready" &
pid=$!
wid=$(timeout 30 xdotool search --sync --onlyvisible --name attnscope | head -1)
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
for _ in $(seq 300); do [ -f "$out/ready" ] && break; sleep 0.1; done
[ -f "$out/ready" ] || fail "the text box never had the keyboard"
xdotool windowfocus "$wid" || fail "windowfocus"
sleep 0.3
if [ -n "$clip" ]; then
  printf '%s' "$clip" | xclip -selection clipboard -i || fail "xclip could not set the clipboard"
fi
[ -n "$before" ] && xdotool key --delay 100 $before
[ -n "$typed" ] && xdotool type --delay 150 "$typed"
sleep 1
xdotool key ctrl+q
for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
kill -0 "$pid" 2>/dev/null && fail "Ctrl+Q did not quit"
wait "$pid" || fail "exit code $?"
echo ok

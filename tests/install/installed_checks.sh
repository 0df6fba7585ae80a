#!/usr/bin/env bash
# Run by install_test.sh from /, in a mount namespace where the source and build trees are empty
# tmpfs mounts: everything the installed attnscope ($EXE, under the fresh root $ROOT) needs must
# come from the installed files. Inputs in the environment: EXE ROOT WORK SRC BUILD APP_ID.
set -euo pipefail
fail() {
  echo "install_test: FAIL (installed, source hidden): $*" >&2
  exit 1
}
[[ ! -e $SRC/assets && ! -e $SRC/CMakeLists.txt ]] || fail "the source tree is not hidden"
[[ ! -e $BUILD/bin/attnscope ]] || fail "the build tree is not hidden"
[[ $PWD == / ]] || fail "not running from /"
SHARE=$ROOT/usr/share
PNG_CHECK="python3 $WORK/png_check.py"

# --version, models (the built-in models' folders are the installed ones), backends.
version=$("$EXE" --version)
[[ -n $version ]] || fail "--version printed nothing"
models=$("$EXE" models) || fail "models failed: $models"
for m in lesson tiny stories; do
  grep -q "^$m " <<<"$models" || fail "models does not list $m: $models"
done
[[ $models == *"$SHARE/attnscope/assets/tiny_model"* ]] || fail "tiny is not the installed copy: $models"
backends=$("$EXE" backends 2>&1) || fail "backends failed: $backends"
if [[ -f $ROOT/usr/lib/attnscope/libattnscope_gl.so ]]; then
  [[ $backends != *"OpenGL module was not built"* ]] ||
    fail "the installed OpenGL module was not found: $backends"
fi
echo "install_test: $version; models and backends run from /"

# export: the lesson model (installed word vectors), a valid trace with its tokens.
"$EXE" export --text "The bank of the river" -o "$WORK/trace.json" 2>"$WORK/export.err" ||
  fail "export: $(cat "$WORK/export.err")"
python3 - "$WORK/trace.json" <<'EOF' || fail "export's trace is not what was asked for"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["format"] == "attnscope-trace/1", t["format"]
words = [tok["text"] for tok in t["tokens"]]
assert words == ["the", "bank", "of", "the", "river"], words
n = len(words)
att = t["attention"]
assert all(len(row) == n for layer in att for head in layer for row in head), "attention shape"
for layer in att:
    for head in layer:
        for row in head:
            assert abs(sum(row) - 1) < 1e-4 or sum(row) == 0, row
EOF
# The built-in stories model (installed safetensors and tokenizer).
"$EXE" tokenize --model stories --text "Once upon a time" -o - >"$WORK/tokens.json" 2>/dev/null ||
  "$EXE" tokenize --model stories --text "Once upon a time" >"$WORK/tokens.json" ||
  fail "tokenize --model stories failed"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); assert len(t["tokens"]) >= 3, t' \
  "$WORK/tokens.json" || fail "tokenize's JSON: $(head -c 300 "$WORK/tokens.json")"
echo "install_test: export (lesson) and tokenize (stories) from the installed assets"

# render: SVG (text as text, the tokens in it) and PNG (not one colour).
"$EXE" render --trace "$WORK/trace.json" --view lines -o "$WORK/figure.svg" 2>/dev/null ||
  fail "render to SVG failed"
python3 - "$WORK/figure.svg" <<'EOF' || fail "the SVG figure is not what was asked for"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg"), root.tag
text = " ".join("".join(e.itertext()) for e in root.iter() if e.tag.endswith("text"))
assert "river" in text and "bank" in text, text[:300]
EOF
"$EXE" render --trace "$WORK/trace.json" --view heatmap -o "$WORK/figure.png" 2>/dev/null ||
  fail "render to PNG failed"
$PNG_CHECK "$WORK/figure.png" >/dev/null || fail "the PNG figure: $($PNG_CHECK "$WORK/figure.png")"
echo "install_test: render wrote SVG and PNG"

# A headless screenshot of the window (Mesa under Xvfb).
xvfb-run -a -s "-screen 0 1280x800x24" "$EXE" --screenshot "$WORK/window.png" --window 1024x640 \
  >"$WORK/screenshot.log" 2>&1 || { cat "$WORK/screenshot.log"; fail "the headless screenshot failed"; }
shot=$($PNG_CHECK "$WORK/window.png") || fail "the screenshot: $shot"
read -r w h colours <<<"$shot"
((w >= 1024 && h >= 640 && colours >= 16)) || fail "the screenshot is ${w}x$h with $colours colours"
echo "install_test: screenshot ${w}x$h, $colours+ colours"

# The desktop files, validated where they are installed.
appstreamcli validate --no-net "$SHARE/metainfo/$APP_ID.metainfo.xml" ||
  fail "appstreamcli validate rejects the metainfo"
desktop-file-validate "$SHARE/applications/$APP_ID.desktop" || fail "desktop-file-validate"
grep -q "^Exec=attnscope" "$SHARE/applications/$APP_ID.desktop" || fail "the desktop file's Exec"
grep -q "<launchable type=\"desktop-id\">$APP_ID.desktop</launchable>" \
  "$SHARE/metainfo/$APP_ID.metainfo.xml" || fail "the metainfo does not launch the desktop file"
grep -q "<release version=\"${version##* }\"" "$SHARE/metainfo/$APP_ID.metainfo.xml" ||
  fail "the metainfo has no release entry for ${version##* }"
# Icons: the SVG, and each PNG at its size.
[[ -f $SHARE/icons/hicolor/scalable/apps/$APP_ID.svg ]] || fail "no scalable icon"
for size in 16 22 24 32 48 64 128 256 512; do
  png=$SHARE/icons/hicolor/${size}x$size/apps/$APP_ID.png
  [[ -f $png ]] || fail "no ${size}x$size icon"
  $PNG_CHECK "$png" --size "${size}x$size" >/dev/null || fail "icon $png: $($PNG_CHECK "$png")"
done

# The man page: renders without warnings, and names every subcommand and top-level option that
# --help lists.
MAN=$SHARE/man/man1/attnscope.1
warnings=$(MANWIDTH=80 man --warnings -l "$MAN" 2>&1 >"$WORK/man.txt") || fail "man -l failed"
[[ -z $warnings ]] || fail "man reports: $warnings"
help=$("$EXE" --help)
subs=$(sed -n '/^Subcommands:/,$p' <<<"$help" | awk 'NR > 1 && /^  [a-z]/ {print $1}')
[[ $(wc -w <<<"$subs") -ge 11 ]] || fail "--help lists too few subcommands: $subs"
for sub in $subs; do
  grep -q "^ \{7\}$sub\b" "$WORK/man.txt" || fail "the man page does not describe '$sub'"
done
options=$(grep -oE '^  -[^ ]+' <<<"$help" | tr ',' '\n' | sed 's/^ *//')
for opt in $options; do
  grep -qE -- "(^|[^-[:alnum:]])$opt([^-[:alnum:]]|\$)" "$WORK/man.txt" ||
    fail "the man page does not name $opt"
done
echo "install_test: man page ($(wc -l <"$WORK/man.txt") lines) names $(wc -w <<<"$subs") subcommands" \
  "and $(wc -w <<<"$options") options"

# Bash completion, sourced from its installed place, asking the installed binary.
PATH=$ROOT/usr/bin:$PATH bash -c '
  source "$1"
  comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _attnscope;
           printf "%s " "${COMPREPLY[@]}"; }
  mkdir -p "$2/c/some_model"; touch "$2/c/t.json" "$2/c/w.safetensors" "$2/c/x.txt"; cd "$2/c"
  expect() { [[ " $2" == *" $3 "* ]] || { echo "completing [$1]: [$2] lacks $3"; exit 1; }; }
  refuse() { [[ " $2" != *" $3 "* ]] || { echo "completing [$1]: [$2] offers $3"; exit 1; }; }
  r=$(comp attnscope ex); expect "attnscope ex" "$r" export
  r=$(comp attnscope ""); for s in export render view models download lens; do expect "attnscope" "$r" $s; done
  r=$(comp attnscope render --vi); expect "render --vi" "$r" --view
  r=$(comp attnscope --la); refuse "--la" "$r" --layout
  r=$(comp attnscope --backend ""); expect "--backend" "$r" opengl
  r=$(comp attnscope --model ""); for m in lesson tiny stories some_model; do expect "--model" "$r" $m; done
  refuse "--model" "$r" x.txt
  r=$(comp attnscope view ""); expect "view" "$r" t.json; expect "view" "$r" w.safetensors
  refuse "view" "$r" x.txt
' completion "$SHARE/bash-completion/completions/attnscope" "$WORK" ||
  fail "bash completion"
echo "install_test: desktop file, metainfo, icons, man page and completion checked"

#!/bin/sh
# Switching the head of a long trace held compactly (each head recomputed from Q and K when it is
# shown; AttentionTrace::recomputed): how long the UI thread spends per frame while the arrow keys
# move through heads. Issue 12: typing and switching never block a frame. A Llama-shaped decoder
# (`decoder_bench make smollm2-135m DIR` writes a random SmolLM2-135M-shaped one) opens on a text of
# about TOKENS tokens; the scripted keys switch the head SWITCHES times, one per settled frame; the
# app's layout file reports the median and the largest UI-building time of the frames (GL work
# excluded: that is the heatmap's own cost, measured by heatmap_frame_bench.sh).
#
#   bench/head_switch_frame_bench.sh build/bin/attnscope MODEL_DIR [TOKENS=4096] [RUNS=3] [SWITCHES=8]
set -eu
bin=${1:?usage: head_switch_frame_bench.sh path/to/attnscope model_dir [tokens] [runs] [switches]}
model=${2:?a decoder model folder (bench: build/bin/decoder_bench make smollm2-135m DIR)}
tokens=${3:-4096}
runs=${4:-3}
switches=${5:-8}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# decoder_bench's random models carry no tokenizer: lend them the tiny model's (4,096 ids).
if [ ! -e "$model/tokenizer.json" ] && [ ! -e "$model/vocab.json" ]; then
  mkdir "$dir/model"
  for f in "$model"/*; do ln -s "$(realpath "$f")" "$dir/model/"; done
  here=$(dirname "$(realpath "$0")")
  cp "$here/../assets/tiny_model/tokenizer.json" "$here/../assets/tiny_model/tokenizer_config.json" \
    "$dir/model/"
  model=$dir/model
fi
# Words of one or two tokens each; the tokenizer decides the exact count (reported below).
/usr/bin/python3 - "$dir/s.attnscope" "$model" "$tokens" <<'PY'
import json, sys
words = "the river bank was muddy after rain and money went to deposit his boat".split()
text = " ".join(words[(i * 5 + i // 3) % len(words)] for i in range(int(sys.argv[3])))
json.dump({"format": "attnscope-session/1", "model": sys.argv[2], "texts": [{"text": text}],
           "show_second": False, "view": {"layer": 0, "head": 0}}, open(sys.argv[1], "w"))
PY
keys=$(/usr/bin/python3 -c "print(','.join(['down'] * int('$switches')))")
i=0
while [ "$i" -lt "$runs" ]; do
  XDG_CONFIG_HOME="$dir/config" xvfb-run -a -s "-screen 0 1600x1000x24" "$bin" \
    --session "$dir/s.attnscope" --window 1600x1000 --keys "$keys" \
    --screenshot "$dir/shot.png" --layout "$dir/layout.json"
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["traces"][0]
print("run %s: %d tokens, compact %s, %d frames, UI median %.1f ms, UI max %.1f ms, frame median %.1f ms" % (
 sys.argv[2], len(t["tokens"]), t.get("compact"), d["frames"], d["ui_ms_median"], d.get("ui_ms_max", -1),
 d["frame_ms_median"]))' "$dir/layout.json" "$i"
  i=$((i + 1))
done

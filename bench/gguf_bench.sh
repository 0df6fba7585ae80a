#!/bin/bash
# Issue 26's goals for a Llama-3.2-1B-shaped Q4_K_M GGUF, measured side by side:
#   memory: peak RSS of `attnscope export` on the GGUF at 64 tokens <= 1.3x the file's size
#   speed:  the forward of 64 tokens on Q4_K_M <= 1.5x the same shape in bf16 (gguf_quant_bench)
# The GGUF (about 0.8 GB, random valid blocks, the real Llama 3 tokenizer) is written by
# bench/make_llama1b_gguf.py into $GGUF_BENCH_DIR (default /tmp) once and kept.
#   bench/gguf_bench.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
dir=${GGUF_BENCH_DIR:-/tmp}
gguf=$dir/attnscope-llama-3.2-1b-shape-q4_k_m.gguf
[ -f "$gguf" ] || /usr/bin/python3 "$here/make_llama1b_gguf.py" "$gguf"
text="The quick brown fox jumps over the lazy dog while the old river keeps running past the \
mill, and every evening the baker closes his shop, counts the coins in the wooden drawer, and \
walks home along the quiet road under the tall trees near the hill by the water. Then he sleeps \
until the church bells ring."  # 64 tokens with Llama 3's tokenizer (BOS included)
trace=$(mktemp)
trap 'rm -f "$trace" "$trace.time"' EXIT
/usr/bin/time -v "$build/bin/attnscope" export --model "$gguf" --text "$text" -o "$trace" \
  2> "$trace.time"
tokens=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tokens']))" "$trace")
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$trace.time")
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$trace.time")
size=$(stat -c %s "$gguf")
echo "export: $tokens tokens, wall $wall, peak RSS $((rss_kb / 1024)) MiB, file $((size / 1048576)) MiB," \
  "ratio $(/usr/bin/python3 -c "print(round($rss_kb * 1024 / $size, 3))") (goal <= 1.3)"
"$build/bin/gguf_quant_bench" --benchmark_repetitions=${REPS:-5} \
  --benchmark_report_aggregates_only=true --benchmark_filter='.*' 2>&1 | grep -E "median|Run on|CPU"

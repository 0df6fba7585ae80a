#!/usr/bin/env bash
# attnscope's tokenizers side by side with Hugging Face's (tokenizers@0.23.2, Node binding, one text
# per call, one thread) on the same 10,000-word text: median wall and process-CPU milliseconds per
# encode, per pipeline (CPU time stays comparable when other jobs share the machine).
# usage: bench/tokenizer_vs_hf.sh [BUILD_DIR] [RUNS]
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${repo_root}/build}"
runs="${2:-15}"
text="$(mktemp)"
trap 'rm -f "${text}"' EXIT
"${build}/bin/tokenizer_bench" --write-text "${text}"
export RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false UV_THREADPOOL_SIZE=1
ours="$("${build}/bin/tokenizer_bench" --compare "${text}" "${runs}")"
theirs="$(node "${repo_root}/bench/hf_tokenizer_bench.js" "${repo_root}/tests/data/npm" "${text}" "${runs}")"
echo "pipeline   wall_ms: attnscope      hf   cpu_ms: attnscope      hf   tokens"
join <(sort <<<"${ours}") <(sort <<<"${theirs}") |
  awk '{ printf "%-10s %18.2f %7.2f %18.2f %7.2f   %s/%s\n", $1, $2, $5, $3, $6, $4, $7 }'

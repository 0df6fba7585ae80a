#pragma once
// The tiny encoder–decoder fixtures (BART, Marian, T5 v1.0, Flan-T5): random weights in the real
// Hugging Face layouts and config keys of facebook/bart-base, Helsinki-NLP/opus-mt-en-de, t5-small
// and google/flan-t5-small, with the tokenizer files those checkpoints ship where their inputs are
// found.
#include <filesystem>

namespace fixture {

// Writes bart-tiny, marian-tiny, t5-tiny and flan-t5-tiny under `out`. `gpt2_vocab`: the folder
// with GPT-2's encoder.json and vocab.bpe (BART's byte-level BPE, as RoBERTa's); `t5_tokenizer`:
// the T5-like tokenizer.json tests/tools/make_unigram_tokenizers.py builds (both T5 fixtures). An
// empty or missing one leaves that folder without a tokenizer (the id-based golden tests need
// none). Returns how many got a tokenizer.
int write_seq2seq_fixtures(const std::filesystem::path& out,
                           const std::filesystem::path& gpt2_vocab,
                           const std::filesystem::path& t5_tokenizer);

}  // namespace fixture

#pragma once
// The tiny encoder fixtures after BERT (RoBERTa, XLM-RoBERTa, DistilBERT): random weights in the
// real Hugging Face layouts and config keys, with real tokenizers where their inputs are found.
#include <filesystem>

namespace fixture {

// Writes roberta-tiny, xlm-roberta-tiny and distilbert-tiny under `out`. `gpt2_vocab`: the folder
// with GPT-2's encoder.json and vocab.bpe (RoBERTa's byte-level BPE); `xlmr_tokenizer`: the
// XLM-R-like tokenizer.json tests/tools/make_unigram_tokenizers.py builds; `bert_vocab`: BERT's
// uncased vocab.txt (DistilBERT). An empty or missing one leaves that folder without a tokenizer
// (the id-based golden tests need none). Returns how many got a tokenizer.
int write_encoder_fixtures(const std::filesystem::path& out,
                           const std::filesystem::path& gpt2_vocab,
                           const std::filesystem::path& xlmr_tokenizer,
                           const std::filesystem::path& bert_vocab_txt);

// RoBERTa's tokenizer.json (and a tokenizer_config.json) in `dir`, over GPT-2's vocabulary and
// merges from `gpt2_vocab` (roberta-base's ids: <s> <pad> </s> <unk>, GPT-2's + 4, <mask> 50264).
// BART's tokenizer is the same (seq2seq_fixtures.cpp). False when the GPT-2 files are missing.
bool write_roberta_tokenizer(const std::filesystem::path& dir,
                             const std::filesystem::path& gpt2_vocab);

}  // namespace fixture

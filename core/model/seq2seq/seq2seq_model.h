#pragma once
// An encoder–decoder (BART, Marian, T5) as a Model: the source and target tokenizers in front of
// Seq2SeqNetwork; run_translation traces the encoder's self-attention and the decoder's self- and
// cross-attention of a given target, or of the greedy output (KV cache).
#include <filesystem>
#include <memory>
#include <string>

#include "core/model/model.h"
#include "core/model/seq2seq/seq2seq_spec.h"
#include "core/text/tokenizer.h"

namespace attnscope {

// The folder's tokenizers for `spec`: the same tokenizer.json for both sides (BART, T5), or
// Marian's source.spm / target.spm with vocab.json. Throws ModelError.
struct Seq2SeqTokenizers {
  std::shared_ptr<const Tokenizer> source, target;
};
Seq2SeqTokenizers load_seq2seq_tokenizers(const std::filesystem::path& folder,
                                          const Seq2SeqSpec& spec);

// The model of `folder` described by `spec` (generation_config.json applied). Throws ModelError
// naming the file and problem.
std::shared_ptr<const Model> load_seq2seq_model(const std::filesystem::path& folder,
                                                Seq2SeqSpec spec, const ProgressFn& progress);

}  // namespace attnscope

#pragma once
// What llama.cpp's vocabulary loader decides from a GGUF's names (src/llama-vocab.cpp,
// llama_vocab::impl::load): the word split, ignore_merges and BOS of each tokenizer.ggml.pre, and
// the token texts it makes control tokens whatever tokenizer.ggml.token_type says. Internal to
// core/text/llama_cpp_tokenizer.cpp.
#include <optional>
#include <string>
#include <vector>

#include "core/text/llama_cpp_split.h"

namespace attnscope::llama_cpp {

// What tokenizer.ggml.pre selects (llama_vocab::impl::load and llm_tokenizer_bpe's regex lists).
struct PreSpec {
  std::vector<SplitKind> splits;
  bool ignore_merges = false;
  bool add_bos = false;
  bool no_bos = false;  // chatglm: no BOS token at all
};

// The pre-tokenizers attnscope knows ("" is llama.cpp's "default"); nullopt for any other.
std::optional<PreSpec> pre_spec(const std::string& pre);

// Token texts llama.cpp's loader turns into control tokens (its end-of-generation, end-of-turn and
// fill-in-the-middle names).
bool control_by_name(const std::string& text);

}  // namespace attnscope::llama_cpp

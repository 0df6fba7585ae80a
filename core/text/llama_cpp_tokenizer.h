#pragma once
// The tokenizer a GGUF file carries (tokenizer.ggml.* metadata), giving llama.cpp's ids: its
// llama_vocab, not Hugging Face's tokenizer.json pipeline. Two models:
//   "gpt2"  byte-level BPE with merges; the pre-tokenizer (its regexes, ignore_merges, default
//           BOS) chosen by tokenizer.ggml.pre as llama.cpp's llama-vocab.cpp does ("llama-bpe",
//           "qwen2", "smollm", "gpt-2", "default", …);
//   "llama" SentencePiece: symbols merged by the scores of the pieces they form
//   (llm_tokenizer_spm),
//           "▁" for spaces, an optional leading "▁" (add_space_prefix), byte fallback <0xXX>.
// Special tokens typed in the text (control / user-defined token types) are matched first, as
// llama_tokenize(..., parse_special = true) does. BOS/EOS added as the metadata says.
#include <memory>
#include <string>
#include <vector>

#include "core/text/tokenizer.h"

namespace attnscope {

// tokenizer.ggml.* as read from a file (core/model/gguf/gguf_vocab.cpp fills it).
struct LlamaCppVocab {
  std::string model;                // tokenizer.ggml.model: "gpt2", "llama", …
  std::string pre;                  // tokenizer.ggml.pre ("" when absent: llama.cpp's "default")
  std::vector<std::string> tokens;  // tokenizer.ggml.tokens, id order
  std::vector<float> scores;        // tokenizer.ggml.scores (empty when absent)
  std::vector<int> token_types;     // tokenizer.ggml.token_type (llama_token_type; empty: normal)
  std::vector<std::string> merges;  // tokenizer.ggml.merges ("a b"), BPE only
  int bos_id = -1, eos_id = -1, unk_id = -1, pad_id = -1, eot_id = -1;
  // -1: the key is absent, llama.cpp's default for the model/pre applies; 0/1 as given.
  int add_bos = -1, add_eos = -1, add_space_prefix = -1;
  // general.name: llama.cpp strips the white space after special tokens for models whose name
  // says Phi-3 ("phi-3"/"phi3", any case), and only by that name.
  std::string name;
};

// Throws ModelError "WHERE: what" for a model or pre-tokenizer llama.cpp would not know, or
// inconsistent tables (scores/types of another length, a merge naming an absent token, ids out of
// range).
std::shared_ptr<const Tokenizer> make_llama_cpp_tokenizer(LlamaCppVocab vocab,
                                                          const std::string& where);

}  // namespace attnscope

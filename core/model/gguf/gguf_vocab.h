#pragma once
// The tokenizer a GGUF file carries: tokenizer.ggml.* read into a LlamaCppVocab, each key's type
// checked as llama.cpp's loader checks it.
#include "core/model/gguf/gguf_file.h"
#include "core/text/llama_cpp_tokenizer.h"

namespace attnscope {

// Reads tokenizer.ggml.model, pre, tokens, scores, token_type, merges, bos/eos/unknown/padding/eot
// token ids, add_bos_token, add_eos_token and add_space_prefix. Throws ModelError with one line
// per problem ("PATH: tokenizer.ggml.scores is a string, not an array of numbers"), all problems
// of the file at once, naming the file.
LlamaCppVocab read_gguf_vocab(const GgufFile& file);

}  // namespace attnscope

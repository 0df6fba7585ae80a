#include "core/model/gguf/gguf_vocab.h"

#include <string>
#include <vector>

#include "core/util/error.h"

namespace attnscope {
namespace {

std::string type_text(const GgufValue& v) {
  if (v.type != GgufType::kArray) return gguf_type_name(v.type);
  return std::string("an array of ") + gguf_type_name(v.element_type);
}

}  // namespace

LlamaCppVocab read_gguf_vocab(const GgufFile& file) {
  LlamaCppVocab vocab;
  std::vector<std::string> problems;
  auto problem = [&](const std::string& key, const std::string& what) {
    problems.push_back(key + " " + what);
  };
  auto find = [&](const char* key) { return file.find(key); };

  if (const GgufValue* v = find("tokenizer.ggml.model")) {
    if (v->type != GgufType::kString) {
      problem("tokenizer.ggml.model", "is " + type_text(*v) + ", not a string");
    } else {
      vocab.model = v->string;
    }
  } else {
    problems.push_back("has no tokenizer (tokenizer.ggml.model is absent)");
  }
  if (const GgufValue* v = find("general.name"); v && v->type == GgufType::kString) {
    vocab.name = v->string;
  }
  if (const GgufValue* v = find("tokenizer.ggml.pre")) {
    if (v->type != GgufType::kString) {
      problem("tokenizer.ggml.pre", "is " + type_text(*v) + ", not a string");
    } else {
      vocab.pre = v->string;
    }
  }
  if (const GgufValue* v = find("tokenizer.ggml.tokens")) {
    if (v->type != GgufType::kArray || v->element_type != GgufType::kString) {
      problem("tokenizer.ggml.tokens", "is " + type_text(*v) + ", not an array of strings");
    } else {
      vocab.tokens = v->strings;
    }
  } else if (!vocab.model.empty()) {
    problem("tokenizer.ggml.tokens", "is absent");
  }
  const std::size_t n = vocab.tokens.size();
  if (const GgufValue* v = find("tokenizer.ggml.scores")) {
    // llama.cpp takes float32 or int32 scores.
    if (v->type != GgufType::kArray ||
        (v->element_type != GgufType::kFloat32 && v->element_type != GgufType::kInt32)) {
      problem("tokenizer.ggml.scores", "is " + type_text(*v) + ", not an array of float32");
    } else if (v->array_size() < n) {
      problem("tokenizer.ggml.scores", "has " + std::to_string(v->array_size()) + " entries for " +
                                           std::to_string(n) + " tokens");
    } else if (v->element_type == GgufType::kFloat32) {
      vocab.scores.assign(v->reals.begin(), v->reals.end());
    } else {
      vocab.scores.assign(v->integers.begin(), v->integers.end());
    }
  }
  if (const GgufValue* v = find("tokenizer.ggml.token_type")) {
    if (v->type != GgufType::kArray || v->element_type != GgufType::kInt32) {
      problem("tokenizer.ggml.token_type", "is " + type_text(*v) + ", not an array of int32");
    } else if (v->array_size() < n) {
      problem("tokenizer.ggml.token_type", "has " + std::to_string(v->array_size()) +
                                               " entries for " + std::to_string(n) + " tokens");
    } else {
      vocab.token_types.assign(v->integers.begin(), v->integers.end());
    }
  }
  if (const GgufValue* v = find("tokenizer.ggml.merges")) {
    if (v->type != GgufType::kArray || v->element_type != GgufType::kString) {
      problem("tokenizer.ggml.merges", "is " + type_text(*v) + ", not an array of strings");
    } else {
      vocab.merges = v->strings;
    }
  } else if (vocab.model == "gpt2") {
    problem("tokenizer.ggml.merges", "is absent (a gpt2 tokenizer needs its merges)");
  }

  auto read_id = [&](const char* key, int& out) {
    const GgufValue* v = find(key);
    if (!v) return;
    if (!gguf_is_integer_type(v->type)) {
      problem(key, "is " + type_text(*v) + ", not an integer");
    } else if (v->integer < 0 || v->integer > 0xFFFFFFFFll) {
      problem(key, "is " + std::to_string(v->integer) + ", not a token id");
    } else {
      // An id beyond the vocabulary is kept: llama.cpp then uses the model's default, as
      // make_llama_cpp_tokenizer does.
      out = v->integer >= static_cast<std::int64_t>(n) ? -1 : static_cast<int>(v->integer);
    }
  };
  read_id("tokenizer.ggml.bos_token_id", vocab.bos_id);
  read_id("tokenizer.ggml.eos_token_id", vocab.eos_id);
  read_id("tokenizer.ggml.unknown_token_id", vocab.unk_id);
  read_id("tokenizer.ggml.padding_token_id", vocab.pad_id);
  read_id("tokenizer.ggml.eot_token_id", vocab.eot_id);

  auto read_flag = [&](const char* key, int& out) {
    const GgufValue* v = find(key);
    if (!v) return;
    if (v->type != GgufType::kBool) {
      problem(key, "is " + type_text(*v) + ", not a bool");
    } else {
      out = v->integer != 0 ? 1 : 0;
    }
  };
  read_flag("tokenizer.ggml.add_bos_token", vocab.add_bos);
  read_flag("tokenizer.ggml.add_eos_token", vocab.add_eos);
  read_flag("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);

  if (!problems.empty()) {
    std::string message;
    for (const std::string& p : problems) {
      if (!message.empty()) message += "\n";
      message += file.path().string() + ": " + p;
    }
    throw ModelError(message);
  }
  return vocab;
}

}  // namespace attnscope

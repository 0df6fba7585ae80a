#pragma once
// The tokenizer.json pipeline as one Tokenizer: added tokens, normalizer, pre-tokenizer, model,
// post-processor and (for decode) decoder. The loader (tokenizer_loader.cpp) fills the parts.
#include <memory>
#include <string>
#include <vector>

#include "core/text/pipeline/added_vocabulary.h"
#include "core/text/pipeline/models.h"
#include "core/text/pipeline/normalizers.h"
#include "core/text/pipeline/pre_tokenizers.h"
#include "core/text/tokenizer.h"

namespace attnscope::text {

// One post-processing step (tokenizer.json's post_processor, flattened).
struct PostStep {
  bool trim_offsets = false;      // ByteLevel / RobertaProcessing trim_offsets
  bool add_prefix_space = false;  // …and its add_prefix_space (the first token keeps one space)
  // Tokens the step adds with add_special_tokens (TemplateProcessing's single template,
  // BertProcessing, RobertaProcessing): before and after the text.
  std::vector<std::pair<int, std::string>> prefix;
  std::vector<std::pair<int, std::string>> suffix;
};

// One step of decoding a single token (tokenizer.json's decoder, flattened).
enum class DecodeStep { kByteLevel, kByteFallback, kReplace, kWordPiece };
struct DecoderStep {
  DecodeStep kind;
  std::string from, to;  // kReplace: the string and what it becomes; kWordPiece: the prefix
};

struct PipelineParts {
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::vector<AddedTokenSpec> added_tokens;
  std::vector<PostStep> post_processor;
  std::vector<DecoderStep> decoder;
  int bos_id = -1;
  int eos_id = -1;
  std::string description;
};

std::shared_ptr<const Tokenizer> make_pipeline_tokenizer(PipelineParts parts);

}  // namespace attnscope::text

#pragma once
// The description of a BERT-style encoder that every encoder family's config.json maps to: what
// differs between BERT, RoBERTa, XLM-RoBERTa and DistilBERT (tensor names, where positions start,
// whether there are token types, the special tokens around the text) is data here, not code. One
// network (bert_network.h) runs any description; a family is one file that fills it in
// (families/*.cpp) plus one registration line (core/model/hf/hf_families.cpp).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/backend.h"

namespace attnscope {

// Sizes and numbers of the network (post-LayerNorm layers, learned absolute positions).
struct BertConfig {
  std::string kind = "bert";  // config.json's model_type, also ModelInfo::kind
  int layers = 12;
  int heads = 12;
  int d_model = 768;
  int d_ff = 3072;
  int positions = 512;  // max_position_embeddings: rows of the position table
  int type_vocab = 2;   // rows of the token-type table; 0: the family has none (DistilBERT)
  int vocab = 30522;
  float ln_eps = 1e-12f;
  Gelu gelu = Gelu::kErf;
  // RoBERTa's positions (create_position_ids_from_input_ids): token i that is not padding_idx sits
  // at padding_idx + (how many non-padding tokens up to i), padding tokens at padding_idx itself,
  // so the first usable row is padding_idx + 1. -1: position i is row i (BERT, DistilBERT).
  int position_padding_idx = -1;
  // How many tokens fit: rows after the first usable one.
  int max_tokens() const {
    return position_padding_idx < 0 ? positions : positions - position_padding_idx - 1;
  }
};

// Tensor names relative to the base model (the head model's prefix is tried too). A layer's names
// follow `layer` + N + ".".
struct EncoderTensorNames {
  std::vector<std::string> prefixes;  // "bert." (BertForMaskedLM), "roberta.", "distilbert."
  std::string word = "embeddings.word_embeddings.weight";
  std::string position = "embeddings.position_embeddings.weight";
  std::string token_type = "embeddings.token_type_embeddings.weight";  // unused when type_vocab 0
  std::string embeddings_norm = "embeddings.LayerNorm";
  std::string layer = "encoder.layer.";
  std::string query = "attention.self.query", key = "attention.self.key",
              value = "attention.self.value";
  std::string attention_out = "attention.output.dense";
  std::string attention_norm = "attention.output.LayerNorm";
  std::string mlp_up = "intermediate.dense", mlp_down = "output.dense";
  std::string mlp_norm = "output.LayerNorm";
};

struct EncoderSpec {
  BertConfig config;
  EncoderTensorNames names;
  // The tokens around the text, as the family's tokenizer(text) adds them ([CLS] … [SEP] or
  // <s> … </s>), and how many separators a typed one between two sentences stands for:
  // tokenizer(a, b) writes BERT's pair as [CLS] a [SEP] b [SEP], RoBERTa's as <s> a </s></s> b
  // </s>.
  std::string cls = "[CLS]", sep = "[SEP]";
  int pair_separators = 1;
};

// The families' config.json mappings (families/*.cpp); `where` names config.json in errors.
EncoderSpec bert_encoder_spec(const nlohmann::json& config, const std::filesystem::path& where);
EncoderSpec roberta_encoder_spec(const nlohmann::json& config, const std::filesystem::path& where);
EncoderSpec xlm_roberta_encoder_spec(const nlohmann::json& config,
                                     const std::filesystem::path& where);
EncoderSpec distilbert_encoder_spec(const nlohmann::json& config,
                                    const std::filesystem::path& where);

// BERT's layer sizes and activation under its own key names (num_hidden_layers, hidden_size,
// hidden_act …), which RoBERTa and XLM-RoBERTa share.
BertConfig read_bert_style_config(const nlohmann::json& config, const std::filesystem::path& where);
// hidden_act / activation: "gelu" is erf's, the tanh forms are gelu_new and its aliases.
Gelu encoder_gelu(const nlohmann::json& config, const std::string& key,
                  const std::filesystem::path& where);

}  // namespace attnscope

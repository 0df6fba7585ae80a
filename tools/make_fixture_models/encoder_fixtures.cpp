// The encoder fixtures after BERT, each with its real checkpoint's config.json keys (roberta-base,
// xlm-roberta-base, distilbert-base-uncased at tiny sizes) and the tensor names of its masked-LM
// class (RobertaForMaskedLM, XLMRobertaForMaskedLM, DistilBertForMaskedLM), heads included: the
// readers must ignore them. Bytes reproducible as make_fixture_models.cpp explains.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "encoder_fixtures.h"
#include "fixture_writer.h"

namespace fixture {
namespace {

constexpr int kLayers = 2, kHeads = 4, kDim = 32, kFf = 64, kTokens = 64;
constexpr int kRobertaVocab = 50265;  // roberta-base's: <s> <pad> </s> <unk>, GPT-2's, <mask>
constexpr int kRobertaMask = 50264;
constexpr int kXlmrVocab = 31709;  // the XLM-R-like tokenizer's (make_unigram_tokenizers.py)
constexpr int kDistilVocab = 30522;

// RoBERTa / XLM-R as their ForMaskedLM classes save them: BERT's names under "roberta.", one token
// type, no pooler, lm_head.{dense,layer_norm,bias} (lm_head.decoder is tied, not saved).
std::vector<NamedTensor> roberta_tensors(std::uint64_t seed, int vocab, int positions) {
  WeightMaker m(seed);
  const std::string p = "roberta.";
  const double w_std = 1.0 / std::sqrt(static_cast<double>(kDim));
  std::vector<NamedTensor> t;
  t.push_back(m.make(p + "embeddings.word_embeddings.weight", {vocab, kDim}, 0.5));
  t.push_back(m.make(p + "embeddings.position_embeddings.weight", {positions, kDim}, 0.3));
  t.push_back(m.make(p + "embeddings.token_type_embeddings.weight", {1, kDim}, 0.3));
  t.push_back(m.make(p + "embeddings.LayerNorm.weight", {kDim}, 0.1, 1.0));
  t.push_back(m.make(p + "embeddings.LayerNorm.bias", {kDim}, 0.1));
  for (int l = 0; l < kLayers; ++l) {
    const std::string e = p + "encoder.layer." + std::to_string(l) + ".";
    for (const char* qkv : {"query", "key", "value"}) {
      t.push_back(m.make(e + "attention.self." + qkv + ".weight", {kDim, kDim}, 1.5 * w_std));
      t.push_back(m.make(e + "attention.self." + qkv + ".bias", {kDim}, 0.1));
    }
    t.push_back(m.make(e + "attention.output.dense.weight", {kDim, kDim}, w_std));
    t.push_back(m.make(e + "attention.output.dense.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "attention.output.LayerNorm.weight", {kDim}, 0.1, 1.0));
    t.push_back(m.make(e + "attention.output.LayerNorm.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "intermediate.dense.weight", {kFf, kDim}, w_std));
    t.push_back(m.make(e + "intermediate.dense.bias", {kFf}, 0.1));
    t.push_back(m.make(e + "output.dense.weight", {kDim, kFf}, 0.5 * w_std));
    t.push_back(m.make(e + "output.dense.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "output.LayerNorm.weight", {kDim}, 0.1, 1.0));
    t.push_back(m.make(e + "output.LayerNorm.bias", {kDim}, 0.1));
  }
  t.push_back(m.make("lm_head.dense.weight", {kDim, kDim}, w_std));
  t.push_back(m.make("lm_head.dense.bias", {kDim}, 0.1));
  t.push_back(m.make("lm_head.layer_norm.weight", {kDim}, 0.1, 1.0));
  t.push_back(m.make("lm_head.layer_norm.bias", {kDim}, 0.1));
  t.push_back(m.make("lm_head.bias", {vocab}, 0.1));
  return t;
}

// DistilBertForMaskedLM: "distilbert." names, no token types, vocab_* head.
std::vector<NamedTensor> distilbert_tensors() {
  WeightMaker m(0x64697374696cull);
  const std::string p = "distilbert.";
  const double w_std = 1.0 / std::sqrt(static_cast<double>(kDim));
  std::vector<NamedTensor> t;
  t.push_back(m.make(p + "embeddings.word_embeddings.weight", {kDistilVocab, kDim}, 0.5));
  t.push_back(m.make(p + "embeddings.position_embeddings.weight", {kTokens, kDim}, 0.3));
  t.push_back(m.make(p + "embeddings.LayerNorm.weight", {kDim}, 0.1, 1.0));
  t.push_back(m.make(p + "embeddings.LayerNorm.bias", {kDim}, 0.1));
  for (int l = 0; l < kLayers; ++l) {
    const std::string e = p + "transformer.layer." + std::to_string(l) + ".";
    for (const char* lin : {"q_lin", "k_lin", "v_lin"}) {
      t.push_back(m.make(e + "attention." + lin + ".weight", {kDim, kDim}, 1.5 * w_std));
      t.push_back(m.make(e + "attention." + lin + ".bias", {kDim}, 0.1));
    }
    t.push_back(m.make(e + "attention.out_lin.weight", {kDim, kDim}, w_std));
    t.push_back(m.make(e + "attention.out_lin.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "sa_layer_norm.weight", {kDim}, 0.1, 1.0));
    t.push_back(m.make(e + "sa_layer_norm.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "ffn.lin1.weight", {kFf, kDim}, w_std));
    t.push_back(m.make(e + "ffn.lin1.bias", {kFf}, 0.1));
    t.push_back(m.make(e + "ffn.lin2.weight", {kDim, kFf}, 0.5 * w_std));
    t.push_back(m.make(e + "ffn.lin2.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "output_layer_norm.weight", {kDim}, 0.1, 1.0));
    t.push_back(m.make(e + "output_layer_norm.bias", {kDim}, 0.1));
  }
  t.push_back(m.make("vocab_transform.weight", {kDim, kDim}, w_std));
  t.push_back(m.make("vocab_transform.bias", {kDim}, 0.1));
  t.push_back(m.make("vocab_layer_norm.weight", {kDim}, 0.1, 1.0));
  t.push_back(m.make("vocab_layer_norm.bias", {kDim}, 0.1));
  t.push_back(m.make("vocab_projector.bias", {kDistilVocab}, 0.1));
  return t;
}

// roberta-base's config.json keys (tiny sizes): 64 tokens need max_position_embeddings 66, as
// 512 need 514 (positions start after padding_idx 1).
json roberta_config(const std::string& model_type, const std::string& architecture, int vocab) {
  json c = {{"architectures", {architecture}},
            {"attention_probs_dropout_prob", 0.1},
            {"bos_token_id", 0},
            {"eos_token_id", 2},
            {"hidden_act", "gelu"},
            {"hidden_dropout_prob", 0.1},
            {"hidden_size", kDim},
            {"initializer_range", 0.02},
            {"intermediate_size", kFf},
            {"layer_norm_eps", 1e-05},
            {"max_position_embeddings", kTokens + 2},
            {"model_type", model_type},
            {"num_attention_heads", kHeads},
            {"num_hidden_layers", kLayers},
            {"pad_token_id", 1},
            {"type_vocab_size", 1},
            {"vocab_size", vocab}};
  if (model_type == "xlm-roberta") {  // xlm-roberta-base's extra keys
    c["output_past"] = true;
    c["position_embedding_type"] = "absolute";
  }
  return c;
}

// The XLM-R-like tokenizer.json, if it is the one this fixture's vocab_size was made for.
bool copy_xlmr_tokenizer(const fs::path& dir, const fs::path& tokenizer) {
  if (tokenizer.empty() || !fs::exists(tokenizer)) return false;
  std::ifstream in(tokenizer);
  const json t = json::parse(in);
  if (!t.contains("model") || !t["model"].contains("vocab") ||
      t["model"]["vocab"].size() != static_cast<std::size_t>(kXlmrVocab))
    throw std::runtime_error(tokenizer.string() + ": not the " + std::to_string(kXlmrVocab) +
                             "-piece XLM-R-like tokenizer xlm-roberta-tiny was made for");
  fs::copy_file(tokenizer, dir / "tokenizer.json", fs::copy_options::overwrite_existing);
  write_json(dir / "tokenizer_config.json", {{"tokenizer_class", "XLMRobertaTokenizer"},
                                             {"bos_token", "<s>"},
                                             {"eos_token", "</s>"},
                                             {"mask_token", "<mask>"},
                                             {"model_max_length", kTokens}});
  return true;
}

}  // namespace

// RoBERTa's tokenizer.json as roberta-base's is laid out (ByteLevel pre-tokenizer without prefix
// space, RobertaProcessing, <mask> with lstrip), over GPT-2's vocabulary and merges. roberta-base's
// vocab.json orders GPT-2's pieces by its fairseq dictionary, which is not available here: GPT-2's
// id k is k + 4 after <s> <pad> </s> <unk>, then fairseq's padding pieces, <mask> at 50264 as in
// roberta-base. The merges, and so the pieces of every text, are GPT-2's (roberta-base's are).
bool write_roberta_tokenizer(const fs::path& dir, const fs::path& gpt2_vocab) {
  if (gpt2_vocab.empty() || !fs::exists(gpt2_vocab / "encoder.json") ||
      !fs::exists(gpt2_vocab / "vocab.bpe"))
    return false;
  std::ifstream vocab_in(gpt2_vocab / "encoder.json");
  const json gpt2 = json::parse(vocab_in);
  json vocab = json::object();
  vocab["<s>"] = 0;
  vocab["<pad>"] = 1;
  vocab["</s>"] = 2;
  vocab["<unk>"] = 3;
  for (const auto& [piece, id] : gpt2.items()) vocab[piece] = id.get<int>() + 4;
  for (int i = 0; i < 3; ++i) vocab["madeupword000" + std::to_string(i)] = 50261 + i;
  vocab["<mask>"] = kRobertaMask;
  json merges = json::array();
  std::ifstream merges_in(gpt2_vocab / "vocab.bpe");
  for (std::string line; std::getline(merges_in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.rfind("#version", 0) == 0) continue;
    merges.push_back(line);
  }
  auto added = [](int id, const std::string& content, bool lstrip, bool normalized) {
    return json{{"id", id},         {"content", content}, {"single_word", false},
                {"lstrip", lstrip}, {"rstrip", false},    {"normalized", normalized},
                {"special", true}};
  };
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", true}};
  json decoder = byte_level;
  decoder["add_prefix_space"] = true;
  const json tokenizer = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens",
       {added(0, "<s>", false, true), added(1, "<pad>", false, true), added(2, "</s>", false, true),
        added(3, "<unk>", false, true), added(kRobertaMask, "<mask>", true, false)}},
      {"normalizer", nullptr},
      {"pre_tokenizer", byte_level},
      {"post_processor",
       {{"type", "RobertaProcessing"},
        {"sep", {"</s>", 2}},
        {"cls", {"<s>", 0}},
        {"trim_offsets", true},
        {"add_prefix_space", false}}},
      {"decoder", decoder},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"vocab", vocab},
        {"merges", merges}}}};
  write_json(dir / "tokenizer.json", tokenizer);
  write_json(dir / "tokenizer_config.json", {{"tokenizer_class", "RobertaTokenizer"},
                                             {"bos_token", "<s>"},
                                             {"eos_token", "</s>"},
                                             {"sep_token", "</s>"},
                                             {"cls_token", "<s>"},
                                             {"unk_token", "<unk>"},
                                             {"pad_token", "<pad>"},
                                             {"mask_token", "<mask>"},
                                             {"add_prefix_space", false},
                                             {"model_max_length", kTokens}});
  return true;
}

int write_encoder_fixtures(const fs::path& out, const fs::path& gpt2_vocab,
                           const fs::path& xlmr_tokenizer, const fs::path& bert_vocab_txt) {
  int with_tokenizer = 0;
  {
    const fs::path dir = out / "roberta-tiny";
    fs::create_directories(dir);
    write_json(dir / "config.json", roberta_config("roberta", "RobertaForMaskedLM", kRobertaVocab));
    write_safetensors(dir / "model.safetensors",
                      roberta_tensors(0x726f6265727461ull, kRobertaVocab, kTokens + 2), "F32");
    with_tokenizer += write_roberta_tokenizer(dir, gpt2_vocab);
  }
  {
    const fs::path dir = out / "xlm-roberta-tiny";
    fs::create_directories(dir);
    write_json(dir / "config.json",
               roberta_config("xlm-roberta", "XLMRobertaForMaskedLM", kXlmrVocab));
    write_safetensors(dir / "model.safetensors",
                      roberta_tensors(0x786c6d72ull, kXlmrVocab, kTokens + 2), "BF16");
    with_tokenizer += copy_xlmr_tokenizer(dir, xlmr_tokenizer);
  }
  {
    const fs::path dir = out / "distilbert-tiny";
    fs::create_directories(dir);
    // distilbert-base-uncased's config.json keys.
    write_json(dir / "config.json", {{"activation", "gelu"},
                                     {"architectures", {"DistilBertForMaskedLM"}},
                                     {"attention_dropout", 0.1},
                                     {"dim", kDim},
                                     {"dropout", 0.1},
                                     {"hidden_dim", kFf},
                                     {"initializer_range", 0.02},
                                     {"max_position_embeddings", kTokens},
                                     {"model_type", "distilbert"},
                                     {"n_heads", kHeads},
                                     {"n_layers", kLayers},
                                     {"pad_token_id", 0},
                                     {"qa_dropout", 0.1},
                                     {"seq_classif_dropout", 0.2},
                                     {"sinusoidal_pos_embds", false},
                                     {"tie_weights_", true},
                                     {"vocab_size", kDistilVocab}});
    write_safetensors(dir / "model.safetensors", distilbert_tensors(), "F32");
    write_json(dir / "tokenizer_config.json", {{"do_lower_case", true}});
    if (!bert_vocab_txt.empty() && fs::exists(bert_vocab_txt)) {
      fs::copy_file(bert_vocab_txt, dir / "vocab.txt", fs::copy_options::overwrite_existing);
      ++with_tokenizer;
    }
  }
  return with_tokenizer;
}

}  // namespace fixture

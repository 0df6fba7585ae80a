#pragma once
// What attention does, not only where it looks: interventions on a model's forward pass (switch a
// head off, cut an edge), the next-token distribution they give, the logit lens, each head's
// effect and direct logit attribution. A Model that can answer these (the decoders) also is an
// Intervenable; intervenable(model) says whether it is. Indices count from 0.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/model/model.h"
#include "core/util/matrix.h"

namespace attnscope {

struct HeadRef {
  int layer = 0;
  int head = 0;
  bool operator==(const HeadRef& o) const { return layer == o.layer && head == o.head; }
};

enum class AblationMode {
  kZero,  // the head's attention output (weights·V, before the output projection) becomes 0
  kMean,  // … becomes its mean over the text's positions in the clean run
};

// In layer `layer`, query `query` may not attend to key `key` (its score becomes -inf before the
// softmax; the row renormalises over the remaining keys), in head `head` or every head (-1).
struct EdgeKnockout {
  int layer = 0;
  int head = -1;
  int query = 0;
  int key = 0;
};

struct Interventions {
  std::vector<HeadRef> ablate;
  AblationMode ablate_mode = AblationMode::kZero;
  std::vector<EdgeKnockout> knockout;

  bool empty() const { return ablate.empty() && knockout.empty(); }
  // The first layer an intervention touches (`layers` when none): the layers before it run as in
  // the clean run.
  int first_layer(int layers) const;
  bool ablates(int layer, int head) const;
};

// "3.2,1.0" → layer 3 head 2, layer 1 head 0. Throws UsageError naming the bad part.
std::vector<HeadRef> parse_head_list(const std::string& text);
// "2:5>1" (layer 2, every head, query 5, key 1), "2.3:5>1" (head 3 only), comma-separated.
// Throws UsageError naming the bad part.
std::vector<EdgeKnockout> parse_knockouts(const std::string& text);
const char* ablation_mode_name(AblationMode mode);  // "zero" | "mean"
// The inverses of the parsers: "3.2,1.0" and "2:5>1,2.3:5>1" (sessions store these).
std::string format_head_list(const std::vector<HeadRef>& heads);
std::string format_knockouts(const std::vector<EdgeKnockout>& knockouts);

// Throws UsageError naming the first layer, head or token index out of range.
void check_interventions(const Interventions& iv, int layers, int heads, int tokens);

// One entry of a next-token distribution: natural log of the softmax over the whole vocabulary.
struct TokenProbability {
  int id = -1;
  std::string text;
  double logprob = 0.0;
  double probability = 0.0;
};

// log_softmax of a row of logits, in double.
std::vector<double> log_softmax(const RowVector& logits);

// The clean run of one text, kept so that interventions re-run only from the first layer they
// touch. Not thread-safe: one probe per thread (the app's worker owns its own).
class Probe {
 public:
  virtual ~Probe() = default;
  virtual const Tokens& tokens() const = 0;
  virtual int layers() const = 0;
  virtual int heads() const = 0;
  virtual int vocab() const = 0;
  // A vocabulary entry's text, decoded and printable.
  virtual std::string token_text(int id) const = 0;

  // The final logits (after any final softcap, as the model samples) of the next token after
  // position `at`, under `iv` (clean when empty). Throws UsageError for an index out of range or a
  // knockout that leaves a row without keys. When `attention` is given it receives the weights of
  // every layer and head under `iv` ([layer][head], [T x T]).
  virtual RowVector logits(const Interventions& iv, int at,
                           std::vector<std::vector<Matrix>>* attention = nullptr) = 0;

  // The logit lens at `at`: row 0 is the embedding output (after any embedding scaling; GPT-2:
  // token + position embeddings), row b + 1 the residual stream after block b, each through the
  // final norm, the unembedding and any final softcap. [layers + 1 x vocab].
  virtual Matrix lens(int at) = 0;

  // The log-probability of `target` as the next token after position `at` (-1: the last) with
  // head `head` zero-ablated alone, minus the clean one (negative: the head helps).
  virtual double head_effect(int target, int at, HeadRef head) = 0;

  // head_effect of every head at the last position, [layers x heads]. `progress` gets the
  // fraction done; stops early (returning what it has, NaN elsewhere) when `cancelled` says so.
  // Later layers first: each costs (L - l) / L of a forward pass, so the cheap ones fill in first.
  Matrix head_effects(int target, const std::function<void(double)>& progress = {},
                      const std::function<bool()>& cancelled = {});

  // dla(l, h) at position `at` (-1: the last): the head's output through its slice of the output
  // projection (bias excluded), through a post-attention norm with the clean denominator frozen
  // (Gemma 2/3), through the final norm with the clean denominator frozen (LayerNorm: centred),
  // dotted with the target's unembedding row (before any final softcap).
  virtual Matrix direct_logit_attribution(int target, int at = -1) = 0;
};

// A model whose forward pass can be intervened on.
class Intervenable {
 public:
  virtual ~Intervenable() = default;
  // The clean run of `text` (tokenized as Model::tokenize, cut to the model's limit).
  virtual std::unique_ptr<Probe> probe(const std::string& text, Backend& backend) const = 0;
  // The trace of `text` (as Model::run) with `iv` applied: the weights every view draws are those
  // of the intervened run (a knocked-out edge is 0 and its row renormalised; the layers after an
  // ablated head see its change). Throws UsageError as Probe::logits does.
  virtual AttentionTrace run_intervened(const std::string& text, Backend& backend,
                                        const Interventions& iv) const = 0;
};

// The model's Intervenable side, or null (encoders, the lesson model).
const Intervenable* intervenable(const Model& model);

// The top `n` of a row of logits by probability (ties: the lower id first), with log-probabilities.
std::vector<TokenProbability> top_tokens(const Probe& probe, const RowVector& logits, int n);

}  // namespace attnscope

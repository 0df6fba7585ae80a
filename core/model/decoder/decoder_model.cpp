// A decoder family as a Model: the folder's tokenizer (tokenizer.json) in front of DecoderNetwork,
// traces with every query head's attention and the next-token predictions, and generation with a
// KV cache.
#include "core/model/decoder/decoder_model.h"

#include <chrono>
#include <cmath>
#include <numeric>

#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_probe.h"
#include "core/model/transformer/hf_weights.h"
#include "core/model/transformer/transformer_blocks.h"
#include "core/text/tokenizer.h"
#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

// A deterministic random stream (splitmix64): the same seed gives the same tokens everywhere.
class SeededRandom {
 public:
  explicit SeededRandom(std::uint64_t seed) : state_(seed) {}
  double uniform() {  // [0, 1)
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

// The next token from a row of logits: the arg max (temperature 0), else a draw from
// softmax(logits / T) restricted to the top_k most likely.
int choose_token(const RowVector& logits, const GenerationOptions& o, SeededRandom& random) {
  const int vocab = static_cast<int>(logits.size());
  if (o.temperature <= 0.0f) {
    Eigen::Index best = 0;
    logits.maxCoeff(&best);  // the first of equal maxima: the lowest id
    return static_cast<int>(best);
  }
  std::vector<int> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  const int k = o.top_k > 0 ? std::min(o.top_k, vocab) : vocab;
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  std::vector<double> p(k);
  const double top = logits[order[0]];
  double sum = 0;
  for (int i = 0; i < k; ++i) sum += p[i] = std::exp((logits[order[i]] - top) / o.temperature);
  double u = random.uniform() * sum;
  for (int i = 0; i < k; ++i) {
    if (u < p[i]) return order[i];
    u -= p[i];
  }
  return order[k - 1];
}

// ‖v_j·W_O,h‖ for every key costs layers·heads·keys·head_dim² operations: kept below this (a
// 1B model at 2,048 tokens), beyond it the trace has none and value-norm weighting says so.
constexpr double kValueNormsMaxOps = 4.5e9;
bool keep_value_norms(const DecoderSpec& s, int keys) {
  return static_cast<double>(s.layers) * s.heads * keys * s.head_dim * s.head_dim <=
         kValueNormsMaxOps;
}

// The prompt's tokens as the network runs them: at most max_position_embeddings; the byte where
// the first dropped token starts, or -1.
int cut_to_limit(Tokens& tokens, int limit) {
  if (static_cast<int>(tokens.size()) <= limit) return -1;
  const int at = tokens[static_cast<std::size_t>(limit)].start;
  tokens.resize(static_cast<std::size_t>(limit));
  return at;
}

class DecoderModel final : public Model,
                           public Intervenable,
                           public std::enable_shared_from_this<DecoderModel> {
 public:
  DecoderModel(std::string name, DecoderNetwork network, std::shared_ptr<const Tokenizer> tokenizer,
               ModelSource source = {})
      : name_(std::move(name)),
        network_(std::move(network)),
        tokenizer_(std::move(tokenizer)),
        source_(std::move(source)) {}

  ModelInfo info() const override {
    const DecoderSpec& s = network_.spec();
    ModelInfo i;
    i.name = name_;
    i.kind = s.kind;
    i.layers = s.layers;
    i.heads = s.heads;
    if (s.reports_kv_heads) i.kv_heads = s.kv_heads;
    i.pieces = tokenizer_->piece_encoding();
    i.capabilities.formula_steps = true;
    i.capabilities.predictions = true;
    i.capabilities.generation = true;
    i.source = source_;
    return i;
  }

  Tokens tokenize(const std::string& text) const override {
    return tokenizer_->encode(text, /*add_special_tokens=*/true);
  }

  AttentionTrace run(const std::string& text, Backend& backend) const override {
    KvCache cache;
    return prompt_trace(text, backend, cache);
  }

  // The trace of the prompt alone; leaves its keys and values in `cache` and the last position's
  // logits in `*last_logits` when asked.
  AttentionTrace prompt_trace(const std::string& text, Backend& backend, KvCache& cache,
                              Matrix* last_logits = nullptr,
                              const Interventions* iv = nullptr) const {
    const auto t0 = std::chrono::steady_clock::now();
    Tokens tokens = tokenize(text);
    AttentionTrace trace;
    trace.truncated_at_byte = -1;
    // No position beyond max_position_embeddings: the text from the first dropped token is unused.
    trace.truncated_at_byte = cut_to_limit(tokens, network_.spec().max_positions);
    check_tokens_embedded(tokens, network_.spec().vocab);
    DecoderRequest request;
    request.keep_steps = static_cast<int>(tokens.size()) <= kStepsMaxTokens;
    request.keep_vector_steps =
        keep_vector_steps(static_cast<int>(tokens.size()), network_.spec().layers,
                          network_.spec().heads, network_.spec().head_dim);
    // Weights beyond the budget (a 4,096-token trace of a 1B model: 34 GB) are not kept: the trace
    // keeps each layer's Q and K and recomputes a head when it is asked for.
    const int n = static_cast<int>(tokens.size());
    request.keep_attention =
        attention_fits_budget(n, n, network_.spec().layers, network_.spec().heads);
    request.keep_attention_inputs = !request.keep_attention;
    request.keep_value_norms = keep_value_norms(network_.spec(), n);
    std::vector<RowVector> means;
    if (iv && !iv->empty()) {
      check_interventions(*iv, network_.spec().layers, network_.spec().heads, n);
      // A long trace recomputes its weights from Q and K, which knows no cut edge.
      if (!iv->knockout.empty() && !request.keep_attention)
        throw UsageError("cutting an edge needs a shorter text (this one's weights are not kept)");
      if (iv->ablate_mode == AblationMode::kMean && !iv->ablate.empty()) {
        DecoderRequest clean;
        clean.keep_attention = false;
        clean.keep_context = true;
        KvCache scratch;
        for (const Matrix& c : network_.forward(token_ids(tokens), scratch, backend, clean).context)
          means.push_back(c.colwise().mean());
        request.mean_context = &means;
      }
      request.interventions = iv;
    }
    DecoderOutputs out = network_.forward(token_ids(tokens), cache, backend, request);
    trace.model = info();
    trace.backend = backend.name();
    trace.text = text;
    trace.tokens = std::move(tokens);
    trace.note = network_.spec().note;
    trace.attention = std::move(out.attention);
    if (request.keep_attention_inputs)
      trace.recomputed =
          std::make_shared<const RecomputedAttention>(std::move(out.attention_inputs));
    trace.steps = std::move(out.steps);
    trace.value_norms = std::move(out.value_norms);
    if (out.logits.rows() > 0) trace.predictions = predictions(out.logits, 10);
    if (last_logits) *last_logits = std::move(out.logits);
    trace.token_predictions.assign(trace.tokens.size(), {});
    trace.compute_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return trace;
  }

  std::vector<Prediction> predictions(const Matrix& logits, int k) const {
    std::vector<Prediction> top = DecoderNetwork::top_predictions(logits, 0, k);
    for (Prediction& p : top) p.text = unicode::printable_utf8(tokenizer_->decode(p.id));
    return top;
  }

  bool is_end_of_text(int id) const {
    const std::vector<int>& eos = network_.spec().eos_ids;
    return id == tokenizer_->eos_id() || std::find(eos.begin(), eos.end(), id) != eos.end();
  }

  AttentionTrace run_intervened(const std::string& text, Backend& backend,
                                const Interventions& iv) const override {
    KvCache cache;
    return prompt_trace(text, backend, cache, nullptr, &iv);
  }

  std::unique_ptr<Probe> probe(const std::string& text, Backend& backend) const override {
    Tokens tokens = tokenize(text);
    cut_to_limit(tokens, network_.spec().max_positions);
    check_tokens_embedded(tokens, network_.spec().vocab);
    std::shared_ptr<const DecoderModel> self = shared_from_this();
    return make_decoder_probe(
        network_, std::move(tokens), backend,
        [self](int id) { return unicode::printable_utf8(self->tokenizer_->decode(id)); }, self);
  }

  const DecoderNetwork& network() const { return network_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }

  std::unique_ptr<Generator> start_generation(const std::string& text, Backend& backend,
                                              const GenerationOptions& options) const override;

 private:
  std::string name_;
  DecoderNetwork network_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  ModelSource source_;
};

class DecoderGenerator final : public Generator {
 public:
  DecoderGenerator(std::shared_ptr<const DecoderModel> model, const std::string& text,
                   Backend& backend, const GenerationOptions& options)
      : model_(std::move(model)), backend_(backend), options_(options), random_(options.seed) {
    if (options.max_new_tokens < 0) throw UsageError("the number of new tokens must be >= 0");
    if (!(options.temperature >= 0.0f) || !std::isfinite(options.temperature))
      throw UsageError("temperature must be a finite number >= 0");
    if (options.top_k < 0) throw UsageError("top-k must be >= 0 (0 = no limit)");
    trace_ = model_->prompt_trace(text, backend, cache_, &next_logits_);
    // No room left, or nothing to continue from (a tokenizer without BOS and an empty text).
    if (trace_.tokens.empty() || trace_.truncated_at_byte >= 0) done_ = true;
  }

  const AttentionTrace& trace() const override { return trace_; }
  bool done() const override {
    return done_ || produced_ >= options_.max_new_tokens ||
           static_cast<int>(trace_.tokens.size()) >= model_->network().spec().max_positions;
  }

  GenerationStep step() override {
    if (done()) throw UsageError("generation has ended");
    const Tokenizer& tok = model_->tokenizer();
    GenerationStep st;
    const Matrix logits = next_logits_;
    st.predictions = model_->predictions(logits, options_.predictions);
    const int id = choose_token(logits.row(0), options_, random_);
    // The token's text extends the trace's text; its offsets point there.
    const std::string piece = tok.decode(id);
    st.token.id = id;
    st.token.text = unicode::printable_utf8(tok.id_to_token(id));
    st.token.start = static_cast<int>(trace_.text.size());
    trace_.text += piece;
    st.token.end = static_cast<int>(trace_.text.size());
    st.token.generated = true;
    st.end_of_text = model_->is_end_of_text(id);

    // One token's work: its row of every head, attending to the cached keys.
    DecoderRequest request;
    request.keep_attention_inputs = trace_.recomputed != nullptr;
    request.keep_value_norms = !trace_.value_norms.empty() &&
                               keep_value_norms(model_->network().spec(), cache_.length() + 1);
    DecoderOutputs out = model_->network().forward({id}, cache_, backend_, request);
    const int m = static_cast<int>(trace_.tokens.size()) + 1;
    st.attention.resize(out.attention.size());
    for (std::size_t l = 0; l < out.attention.size(); ++l)
      for (std::size_t h = 0; h < out.attention[l].size(); ++h)
        st.attention[l].push_back(out.attention[l][h].row(0));
    if (trace_.recomputed) {
      // The trace keeps Q and K: the new query row and the keys so far, copied into a new object
      // (traces already published share the old one).
      std::vector<Matrix> q_rows, keys;
      for (AttentionInputs& in : out.attention_inputs) {
        q_rows.push_back(std::move(in.q));
        keys.push_back(std::move(in.k));
      }
      trace_.recomputed = trace_.recomputed->extended(q_rows, keys);
    } else {
      for (std::size_t l = 0; l < out.attention.size(); ++l) {
        for (std::size_t h = 0; h < out.attention[l].size(); ++h) {
          Matrix& full = trace_.attention[l][h];
          full.conservativeResize(m, m);
          full.col(m - 1).setZero();  // causal: no earlier query sees the new key
          full.row(m - 1) = out.attention[l][h].row(0);
        }
      }
    }
    // The new key's value: every head's norms over the keys so far (or none beyond the budget).
    trace_.value_norms = std::move(out.value_norms);
    trace_.tokens.push_back(st.token);
    trace_.token_predictions.push_back(st.predictions);
    trace_.steps.clear();  // the formula steps were the prompt's
    next_logits_ = out.logits;
    trace_.predictions = model_->predictions(next_logits_, 10);
    ++produced_;
    if (st.end_of_text) done_ = true;
    return st;
  }

 private:
  std::shared_ptr<const DecoderModel> model_;
  Backend& backend_;
  GenerationOptions options_;
  SeededRandom random_;
  KvCache cache_;
  AttentionTrace trace_;
  Matrix next_logits_;  // [1 x vocab]: what the next step chooses from
  int produced_ = 0;
  bool done_ = false;
};

std::unique_ptr<Generator> DecoderModel::start_generation(const std::string& text, Backend& backend,
                                                          const GenerationOptions& options) const {
  return std::make_unique<DecoderGenerator>(shared_from_this(), text, backend, options);
}

}  // namespace

std::shared_ptr<const Model> load_decoder_model(const fs::path& folder, DecoderSpec spec,
                                                const ProgressFn& progress,
                                                const std::string& name) {
  if (!has_tokenizer_files(folder))
    throw ModelError(folder.string() + ": no tokenizer found (a " + spec.kind +
                     " model needs tokenizer.json, or vocab.json + merges.txt)");
  std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer(folder);
  // A tokenizer with more tokens than the embedding has rows is opened (released checkpoints
  // often are so): a text that produces such an id is refused when it is encoded.
  DecoderNetwork network = DecoderNetwork::load(folder, std::move(spec), progress);
  return std::make_shared<DecoderModel>(name.empty() ? model_name_from_folder(folder) : name,
                                        std::move(network), std::move(tokenizer));
}

std::shared_ptr<const Model> make_decoder_model(std::string name, DecoderNetwork network,
                                                std::shared_ptr<const Tokenizer> tokenizer,
                                                ModelSource source) {
  return std::make_shared<DecoderModel>(std::move(name), std::move(network), std::move(tokenizer),
                                        std::move(source));
}

}  // namespace attnscope

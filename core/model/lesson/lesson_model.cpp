#include "core/model/lesson/lesson_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>

#include "core/attention/attention.h"
#include "core/model/lesson/word_vectors.h"
#include "core/text/word_tokenizer.h"
#include "core/util/assets.h"
#include "core/util/error.h"

namespace attnscope {

namespace {

constexpr std::uint64_t kProjectionSeed = 0x6c6573736f6e;  // "lesson"

// X scale so that (s·x)·(s·y) / √d_k = β·cos(x, y) for unit x, y.
float input_scale(float beta, int d_head) {
  return std::sqrt(beta * std::sqrt(static_cast<float>(d_head)));
}

// Rows of `p` back to unit length (zero rows stay zero), times s: then p·pᵀ/√d_k = β·cos.
void normalize_rows(Matrix& p, float s) {
  for (int i = 0; i < p.rows(); ++i) {
    float norm = p.row(i).norm();
    if (norm > 1e-12f) p.row(i) *= s / norm;
  }
}

// Unknown words that are not English (any letter beyond ASCII): the vectors cannot help them, and
// a teacher should know why the whole sentence is masked, and where to go instead. The words are
// counted, not quoted: the note is drawn as plain UI text, which does not shape Arabic or Hindi.
std::string lesson_language_note(const Tokens& tokens) {
  int foreign = 0;
  for (const Token& t : tokens)
    if (t.unknown && std::any_of(t.text.begin(), t.text.end(),
                                 [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
      ++foreign;
  if (foreign == 0) return {};
  return "The lesson model's word vectors are English only: " + std::to_string(foreign) +
         (foreign == 1 ? " word here has" : " words here have") +
         " no vector, so they are masked (weights 0). To see attention in this language, open a "
         "model that reads every script: \"tiny\" (built in) or a real multilingual one such as "
         "Qwen, Llama 3 or Gemma (Model: folder or repo id).";
}

class LessonModel final : public Model {
 public:
  LessonModel(const LessonOptions& options, std::shared_ptr<const WordVectors> vectors)
      : options_(options), vectors_(std::move(vectors)) {
    for (int h = 0; h < options_.heads; ++h)
      projections_.push_back(lesson_head_projection(options_.heads, h, vectors_->dim()));
  }

  ModelInfo info() const override {
    ModelInfo m;
    m.name = "lesson";
    m.kind = "lesson";
    m.capabilities.formula_steps = true;
    m.capabilities.meaning_shift = true;
    m.layers = 1;
    m.heads = options_.heads;
    m.options = {{"beta", options_.beta},
                 {"mask_self", options_.mask_self},
                 {"scale", options_.scale},
                 {"causal", options_.causal},
                 {"positional", options_.positional},
                 {"heads", options_.heads},
                 {"mask_unknown", options_.mask_unknown},
                 {"head_design", head_design_name(options_.head_design)},
                 {"dim", vectors_->dim()},
                 {"max_tokens", kLessonMaxTokens}};
    nlohmann::json roles = nlohmann::json::array(), recipes = nlohmann::json::array();
    for (int h = 0; h < options_.heads; ++h) {
      HeadRecipe r = lesson_head_recipe(options_, h);
      roles.push_back(r.role);
      recipes.push_back(r.recipe);
    }
    m.options["head_roles"] = roles;
    m.options["head_recipes"] = recipes;
    return m;
  }

  Tokens tokenize(const std::string& text) const override {
    return tokenize_truncated(text).tokens;
  }

  AttentionTrace run(const std::string& text, Backend& backend) const override {
    const auto t0 = std::chrono::steady_clock::now();
    AttentionTrace trace;
    trace.model = info();
    trace.backend = backend.name();
    trace.text = text;
    WordTokenization tok = tokenize_truncated(text);
    trace.tokens = std::move(tok.tokens);
    trace.truncated_at_byte = tok.truncated_at_byte;

    const int n = static_cast<int>(trace.tokens.size()), dim = vectors_->dim();
    const int d_head = dim / options_.heads;
    trace.attention.assign(1, {});
    if (n == 0) {
      trace.attention[0].assign(options_.heads, Matrix(0, 0));
      trace.steps.assign(options_.heads, HeadSteps{});
      trace.value_norms.assign(1, std::vector<RowVector>(options_.heads, RowVector(0)));
      trace.compute_ms = elapsed_ms(t0);
      return trace;
    }

    // X [n x dim]: each token's unit word vector (zero if unknown), plus its position.
    Matrix x = Matrix::Zero(n, dim);
    AttentionOptions attn;
    attn.scale = options_.scale;
    attn.causal = options_.causal;
    attn.mask_self = options_.mask_self;
    bool any_unknown = false;
    for (int i = 0; i < n; ++i) {
      const Token& t = trace.tokens[i];
      if (t.id >= 0) x.row(i) = vectors_->vectors.row(t.id);
      any_unknown |= t.unknown;
      if (options_.positional) x.row(i) += lesson_positional_encoding(i, dim);
    }
    if (any_unknown) trace.note = lesson_language_note(trace.tokens);
    if (options_.mask_unknown && any_unknown) {
      attn.key_padding.resize(n);
      for (int i = 0; i < n; ++i) attn.key_padding[i] = trace.tokens[i].unknown ? 1 : 0;
    }

    // The value-norm weighting (core/analysis/value_weighting.h): W_O = I and v_j the token's word
    // vector (issue 27), so every head weights key j by ‖word vector‖: 1 for a known word (the
    // vectors are unit length), 0 for an unknown one (nothing to give, masked or not).
    RowVector norms = RowVector::Zero(n);
    for (int j = 0; j < n; ++j)
      if (trace.tokens[j].id >= 0) norms[j] = vectors_->vectors.row(trace.tokens[j].id).norm();
    trace.value_norms.assign(1, std::vector<RowVector>(options_.heads, norms));

    const float s = input_scale(options_.beta, d_head);
    for (int h = 0; h < options_.heads; ++h) {
      // Head h: P [n x d_head] = X · R_h, rows back to unit length, times s.
      Matrix p = options_.heads == 1 ? x : Matrix(x * projections_[h]);  // one head: R = I
      normalize_rows(p, s);
      if (lesson_head_recipe(options_, h).role == "position") {
        // q = k = the positions' encodings [n x d_head]; v stays the word vectors P, so each word
        // gathers its neighbours' meaning. An unknown word still has a position: it may look,
        // and (unless masked) be looked at.
        Matrix pos(n, d_head);
        for (int i = 0; i < n; ++i)
          pos.row(i) = lesson_positional_encoding(i, d_head, kPositionHeadBase);
        normalize_rows(pos, s);
        AttentionResult r = attention_forward(backend, pos, pos, p, attn);
        trace.attention[0].push_back(r.weights);
        trace.steps.push_back(HeadSteps{pos, pos, p, std::move(r.scores), std::move(r.scaled),
                                        std::move(r.weights), std::move(r.output)});
        continue;
      }
      AttentionResult r = attention_forward(backend, p, p, p, attn);
      trace.attention[0].push_back(r.weights);
      trace.steps.push_back(HeadSteps{p, p, p, std::move(r.scores), std::move(r.scaled),
                                      std::move(r.weights), std::move(r.output)});
    }
    trace.compute_ms = elapsed_ms(t0);
    return trace;
  }

 private:
  static double elapsed_ms(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  WordTokenization tokenize_truncated(const std::string& text) const {
    WordTokenization tok = word_tokenize(text, kLessonMaxTokens);
    for (Token& t : tok.tokens) {
      t.id = vectors_->lookup(t.text);
      t.unknown = t.id < 0;
    }
    return tok;
  }

  LessonOptions options_;
  std::shared_ptr<const WordVectors> vectors_;
  std::vector<Matrix> projections_;  // per head [dim x d_head]
};

std::vector<Neighbor> nearest(const WordVectors& wv, const RowVector& v, int k, int exclude) {
  std::vector<Neighbor> out;
  const float norm = v.norm();
  if (norm < 1e-12f || k <= 0) return out;
  Vector sims = wv.vectors * (v.transpose() / norm);  // [vocab]; rows are unit length
  std::vector<int> order;
  order.reserve(sims.size());
  for (int i = 0; i < sims.size(); ++i)
    if (i != exclude) order.push_back(i);
  const int top = std::min<int>(k, static_cast<int>(order.size()));
  std::partial_sort(order.begin(), order.begin() + top, order.end(),
                    [&](int a, int b) { return sims[a] != sims[b] ? sims[a] > sims[b] : a < b; });
  for (int i = 0; i < top; ++i) out.push_back({wv.words[order[i]], sims[order[i]]});
  return out;
}

}  // namespace

const char* head_design_name(HeadDesign design) {
  return design == HeadDesign::kRandom ? "random" : "roles";
}

HeadDesign parse_head_design(const std::string& name) {
  if (name == "roles") return HeadDesign::kRoles;
  if (name == "random") return HeadDesign::kRandom;
  throw UsageError("lesson model: head design must be \"roles\" or \"random\", not \"" + name +
                   "\"");
}

HeadRecipe lesson_head_recipe(const LessonOptions& options, int head) {
  const std::string pos = options.positional ? " plus their positions" : "";
  if (options.heads == 1)
    return {"meaning", "q = k = v = the word vectors" + pos + ": words look at related words"};
  if (options.head_design == HeadDesign::kRoles && head == 0)
    return {"meaning", "q = k = v = the word vectors" + pos +
                           ", seen through one slice of their dimensions: it follows the sense"};
  if (options.head_design == HeadDesign::kRoles && head == 1)
    return {"position",
            "q = k = the positional encodings, v = the word vectors: each word looks at its "
            "neighbours and gathers their meaning"};
  return {"mixed",
          "q = k = v = a random slice of the word vectors" + pos + ": a mix that is hard to name"};
}

RowVector lesson_positional_encoding(int position, int dim, double base) {
  RowVector pe(dim);
  for (int i = 0; i < dim; ++i) {
    double rate = std::pow(base, -2.0 * (i / 2) / dim);
    pe[i] = static_cast<float>(i % 2 == 0 ? std::sin(position * rate) : std::cos(position * rate));
  }
  return pe / std::max(pe.norm(), 1e-12f);
}

RowVector lesson_positional_encoding(int position, int dim) {
  return lesson_positional_encoding(position, dim, 10000.0);
}

Matrix lesson_head_projection(int heads, int head, int dim) {
  if (heads <= 0 || dim % heads != 0 || head < 0 || head >= heads)
    throw UsageError("lesson model: " + std::to_string(heads) + " heads do not divide the " +
                     std::to_string(dim) + "-dimensional word vectors");
  const int d_head = dim / heads;
  if (heads == 1) return Matrix::Identity(dim, dim);
  // A Haar-random orthogonal matrix: QR of a Gaussian matrix, signs fixed by diag(R) > 0. The
  // Gaussian comes from our own Box–Muller so that every standard library draws the same one.
  std::mt19937_64 rng(kProjectionSeed);
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  Eigen::MatrixXd g(dim, dim);
  for (int j = 0; j < dim; ++j)
    for (int i = 0; i < dim; ++i)
      g(i, j) =
          std::sqrt(-2.0 * std::log(1.0 - uniform())) * std::cos(6.283185307179586 * uniform());
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
  Eigen::MatrixXd q = qr.householderQ();
  for (int j = 0; j < dim; ++j)
    if (qr.matrixQR()(j, j) < 0) q.col(j) = -q.col(j);
  return q.middleCols(head * d_head, d_head).cast<float>();
}

std::shared_ptr<const Model> make_lesson_model(const LessonOptions& options) {
  if (!(options.beta >= 0.0f && options.beta <= 1000.0f))
    throw UsageError("lesson model: the sharpness beta must be between 0 and 1000");
  auto vectors = lesson_word_vectors();
  lesson_head_projection(options.heads, 0, vectors->dim());  // validates the head count
  return std::make_shared<LessonModel>(options, std::move(vectors));
}

RowVector lesson_context_vector(const AttentionTrace& trace, int index) {
  auto vectors = lesson_word_vectors();
  const int dim = vectors->dim();
  RowVector c = RowVector::Zero(dim);
  const int heads = static_cast<int>(trace.steps.size());
  if (heads == 0 || dim % heads != 0 || index < 0) return c;
  for (int h = 0; h < heads; ++h) {
    const Matrix& out = trace.steps[h].output;  // [n x d_head]
    if (index >= out.rows() || out.cols() != dim / heads) return RowVector::Zero(dim);
    c += out.row(index) * lesson_head_projection(heads, h, dim).transpose();
  }
  return c;
}

MeaningShift lesson_meaning_shift(const AttentionTrace& trace, int index, int k) {
  MeaningShift shift;
  if (index < 0 || index >= static_cast<int>(trace.tokens.size())) return shift;
  auto vectors = lesson_word_vectors();
  const int id = trace.tokens[index].id;
  if (id >= 0 && id < vectors->vectors.rows())
    shift.static_neighbors = nearest(*vectors, vectors->vectors.row(id), k, id);
  shift.context_neighbors = nearest(*vectors, lesson_context_vector(trace, index), k, id);
  return shift;
}

std::vector<MeaningShift> lesson_meaning_shifts(const AttentionTrace& trace, int k) {
  auto vectors = lesson_word_vectors();
  const int dim = vectors->dim();
  const int n = static_cast<int>(trace.tokens.size());
  const int heads = static_cast<int>(trace.steps.size());
  std::vector<MeaningShift> shifts(static_cast<size_t>(n));
  // The same sum as lesson_context_vector, for all rows at once: [n x dim].
  Matrix context = Matrix::Zero(n, dim);
  bool has_context = heads > 0 && dim % heads == 0;
  for (int h = 0; has_context && h < heads; ++h) {
    const Matrix& out = trace.steps[h].output;  // [n x d_head]
    if (out.rows() < n || out.cols() != dim / heads) {
      has_context = false;
      break;
    }
    context += out.topRows(n) * lesson_head_projection(heads, h, dim).transpose();
  }
  for (int i = 0; i < n; ++i) {
    const int id = trace.tokens[i].id;
    if (id >= 0 && id < vectors->vectors.rows())
      shifts[i].static_neighbors = nearest(*vectors, vectors->vectors.row(id), k, id);
    shifts[i].context_neighbors =
        nearest(*vectors, has_context ? RowVector(context.row(i)) : RowVector::Zero(dim), k, id);
  }
  return shifts;
}

std::vector<PresetPair> lesson_presets() {
  const auto path = find_asset("presets.json");
  std::ifstream f(path);
  if (!f) throw ModelError("cannot open '" + path.string() + "'");
  try {
    nlohmann::json doc = nlohmann::json::parse(f);
    std::vector<PresetPair> pairs;
    for (const auto& p : doc.at("pairs")) {
      PresetPair pair;
      pair.word = p.at("word").get<std::string>();
      pair.sense1 = p.at("sense1").get<std::string>();
      pair.text1 = p.at("text1").get<std::string>();
      pair.cues1 = p.at("cues1").get<std::vector<std::string>>();
      pair.sense2 = p.at("sense2").get<std::string>();
      pair.text2 = p.at("text2").get<std::string>();
      pair.cues2 = p.at("cues2").get<std::vector<std::string>>();
      pairs.push_back(std::move(pair));
    }
    return pairs;
  } catch (const nlohmann::json::exception& e) {
    throw ModelError("the presets '" + path.string() + "' are malformed: " + e.what());
  }
}

}  // namespace attnscope

#include "core/model/decoder/decoder_probe.h"

#include <cmath>

#include "core/util/error.h"

namespace attnscope {
namespace {

class DecoderProbe final : public Probe {
 public:
  DecoderProbe(const DecoderNetwork& network, Tokens tokens, Backend& backend,
               std::function<std::string(int)> text_of, std::shared_ptr<const void> owner)
      : owner_(std::move(owner)),
        network_(network),
        backend_(backend),
        tokens_(std::move(tokens)),
        text_of_(std::move(text_of)) {
    ids_ = token_ids(tokens_);
    if (ids_.empty()) throw UsageError("the text has no tokens");
    DecoderRequest request;
    request.keep_attention = false;
    request.keep_residuals = true;
    request.keep_context = true;
    request.keep_attention_output = true;
    KvCache cache;
    DecoderOutputs out = network_.forward(ids_, cache, backend_, request);
    residuals_ = std::move(out.residuals);
    context_ = std::move(out.context);
    attention_output_ = std::move(out.attention_output);
    for (const Matrix& c : context_) means_.push_back(c.colwise().mean());
  }

  const Tokens& tokens() const override { return tokens_; }
  int layers() const override { return network_.spec().layers; }
  int heads() const override { return network_.spec().heads; }
  int vocab() const override { return network_.spec().vocab; }
  std::string token_text(int id) const override { return text_of_ ? text_of_(id) : ""; }

  RowVector logits(const Interventions& iv, int at,
                   std::vector<std::vector<Matrix>>* attention) override {
    check_position(at);
    check_interventions(iv, layers(), heads(), static_cast<int>(ids_.size()));
    if (iv.empty() && !attention)
      return network_.unembed(residuals_.back().row(at), backend_).row(0);
    DecoderRequest request;
    request.keep_attention = attention != nullptr;
    request.interventions = &iv;
    request.mean_context = &means_;
    request.logits_row = at;
    // The layers before the first one touched are the clean run's (unless every layer's weights
    // are wanted).
    request.start_layer = attention ? 0 : iv.first_layer(layers());
    if (request.start_layer >= layers())  // nothing touched
      return network_.unembed(residuals_.back().row(at), backend_).row(0);
    request.start_residual = &residuals_[static_cast<std::size_t>(request.start_layer)];
    KvCache cache;
    DecoderOutputs out = network_.forward(ids_, cache, backend_, request);
    if (attention) *attention = std::move(out.attention);
    return out.logits.row(0);
  }

  Matrix lens(int at) override {
    check_position(at);
    Matrix rows(static_cast<Eigen::Index>(residuals_.size()), residuals_[0].cols());
    for (std::size_t b = 0; b < residuals_.size(); ++b)
      rows.row(static_cast<Eigen::Index>(b)) = residuals_[b].row(at);
    return network_.unembed(rows, backend_);
  }

  Matrix head_effects(int target, const std::function<void(double)>& progress,
                      const std::function<bool()>& cancelled) override {
    check_target(target);
    const int last = static_cast<int>(ids_.size()) - 1, L = layers(), H = heads();
    const double clean = log_softmax(logits({}, last, nullptr))[static_cast<std::size_t>(target)];
    Matrix effect = Matrix::Constant(L, H, std::numeric_limits<float>::quiet_NaN());
    // Later layers first: each costs (L - l) / L of a forward pass, so the cheap ones fill in
    // while the expensive ones wait.
    int done = 0;
    for (int l = L - 1; l >= 0; --l) {
      for (int h = 0; h < H; ++h) {
        if (cancelled && cancelled()) return effect;
        Interventions iv;
        iv.ablate.push_back({l, h});
        effect(l, h) = static_cast<float>(
            log_softmax(logits(iv, last, nullptr))[static_cast<std::size_t>(target)] - clean);
        if (progress) progress(static_cast<double>(++done) / (L * H));
      }
    }
    return effect;
  }

  Matrix direct_logit_attribution(int target) override {
    check_target(target);
    const DecoderSpec& s = network_.spec();
    const int at = static_cast<int>(ids_.size()) - 1;
    // The final norm as a linear map with the clean run's denominator frozen.
    const Eigen::RowVectorXd x_final = residuals_.back().row(at).cast<double>();
    const DecoderNetwork::HostNorm fn = network_.final_norm(backend_);
    const bool layer_norm = s.norm == NormKind::kLayer;
    double denom = 0.0;
    if (layer_norm)
      denom = std::sqrt((x_final.array() - x_final.mean()).square().mean() + s.norm_eps);
    else
      denom = std::sqrt(x_final.array().square().mean() + s.norm_eps);
    const double offset = layer_norm ? 0.0 : s.norm_offset;
    const Eigen::RowVectorXd u = network_.unembedding_row(target).cast<double>();
    // logit contribution of a residual-stream vector c: Σ (c - mean c if LayerNorm) · gain / denom
    // · u
    const Eigen::RowVectorXd readout =
        ((fn.weight.cast<double>().array() + offset) * u.array() / denom).matrix();
    Matrix dla(layers(), heads());
    for (int l = 0; l < layers(); ++l) {
      Eigen::MatrixXd outs =
          network_.head_outputs(l, context_[static_cast<std::size_t>(l)].row(at), backend_)
              .cast<double>();
      if (s.sandwich_norms) {  // the post-attention norm, its denominator frozen (whole output)
        const Eigen::RowVectorXd a =
            attention_output_[static_cast<std::size_t>(l)].row(at).cast<double>();
        const double a_denom = std::sqrt(a.array().square().mean() + s.norm_eps);
        const DecoderNetwork::HostNorm pn = network_.post_attention_norm(l, backend_);
        const Eigen::RowVectorXd gain = (pn.weight.cast<double>().array() + s.norm_offset).matrix();
        outs = (outs.array().rowwise() * (gain.array() / a_denom)).matrix();
      }
      if (layer_norm) outs = outs.colwise() - outs.rowwise().mean();
      dla.row(l) = (outs * readout.transpose()).transpose().cast<float>();
    }
    return dla;
  }

 private:
  void check_position(int at) const {
    if (at < 0 || at >= static_cast<int>(ids_.size()))
      throw UsageError("position " + std::to_string(at) + " is out of range (0-" +
                       std::to_string(ids_.size() - 1) + ")");
  }
  void check_target(int target) const {
    if (target < 0 || target >= vocab())
      throw UsageError("target id " + std::to_string(target) + " is outside the vocabulary (0-" +
                       std::to_string(vocab() - 1) + ")");
  }

  std::shared_ptr<const void> owner_;
  const DecoderNetwork& network_;
  Backend& backend_;
  Tokens tokens_;
  std::function<std::string(int)> text_of_;
  std::vector<int> ids_;
  std::vector<Matrix> residuals_, context_, attention_output_;
  std::vector<RowVector> means_;
};

}  // namespace

std::unique_ptr<Probe> make_decoder_probe(const DecoderNetwork& network, Tokens tokens,
                                          Backend& backend, std::function<std::string(int)> text_of,
                                          std::shared_ptr<const void> owner) {
  return std::make_unique<DecoderProbe>(network, std::move(tokens), backend, std::move(text_of),
                                        std::move(owner));
}

}  // namespace attnscope

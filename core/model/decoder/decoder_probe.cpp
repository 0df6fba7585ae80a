#include "core/model/decoder/decoder_probe.h"

#include <cmath>
#include <limits>

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

  double head_effect(int target, int at, HeadRef head) override {
    check_target(target);
    if (at < 0) at = static_cast<int>(ids_.size()) - 1;
    check_position(at);
    if (clean_at_ != at) {  // the clean log-probabilities of the newest position asked about
      clean_logprobs_ = log_softmax(logits({}, at, nullptr));
      clean_at_ = at;
    }
    Interventions iv;
    iv.ablate.push_back(head);
    const auto t = static_cast<std::size_t>(target);
    return log_softmax(logits(iv, at, nullptr))[t] - clean_logprobs_[t];
  }

  Matrix direct_logit_attribution(int target, int at) override {
    check_target(target);
    const DecoderSpec& s = network_.spec();
    if (at < 0) at = static_cast<int>(ids_.size()) - 1;
    check_position(at);
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
      if (s.post_norms) {  // the post-attention norm, its denominator frozen (whole output)
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
  int clean_at_ = -1;  // the position of clean_logprobs_
  std::vector<double> clean_logprobs_;
};

}  // namespace

std::unique_ptr<Probe> make_decoder_probe(const DecoderNetwork& network, Tokens tokens,
                                          Backend& backend, std::function<std::string(int)> text_of,
                                          std::shared_ptr<const void> owner) {
  return std::make_unique<DecoderProbe>(network, std::move(tokens), backend, std::move(text_of),
                                        std::move(owner));
}

}  // namespace attnscope

// attnscope predict --model M --text T [--at I] [--top N] [--ablate L.H,...]
//                   [--ablate-mode zero|mean] [--knockout L[.H]:Q>K,...] [-o FILE|-]
// The next-token distribution after position I, with heads switched off or edges cut
// (core/model/intervention.h): JSON attnscope-predict/1.
#include "app/cli/command.h"
#include "app/cli/probe_session.h"
#include "core/trace/json_writer.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

class PredictCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "predict",
        "the next token's top predictions, with heads switched off or edges cut (decoders)");
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text")->required();
    add_backend_option(sub, backend_);
    sub->add_option("--at", at_,
                    "the position whose next token is predicted, from 0 (default: the last)");
    sub->add_option("--top", top_, "how many predictions")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub->add_option("--ablate", ablate_,
                    "heads to switch off, LAYER.HEAD comma-separated (e.g. 3.2,1.0): their "
                    "attention output (weights·V) becomes 0, or its mean (--ablate-mode)");
    sub->add_option("--ablate-mode", mode_, "zero, or mean: the head's mean over the text")
        ->check(CLI::IsMember({"zero", "mean"}))
        ->capture_default_str();
    sub->add_option("--knockout", knockout_,
                    "edges to cut, LAYER[.HEAD]:QUERY>KEY comma-separated (e.g. 2:5>1 every head "
                    "of layer 2, 2.3:5>1 head 3 only): the query may not attend to the key. Quote "
                    "it in a shell: '>' redirects");
    sub->add_option("-o,--output", out_, "output file, - for stdout")->capture_default_str();
    return sub;
  }

  int run() override {
    Interventions iv;
    if (!ablate_.empty()) iv.ablate = parse_head_list(ablate_);
    iv.ablate_mode = mode_ == "mean" ? AblationMode::kMean : AblationMode::kZero;
    if (!knockout_.empty()) iv.knockout = parse_knockouts(knockout_);
    ProbeSession s = open_probe_session("predict", model_, text_, backend_);
    const int at = resolve_position(*s.probe, at_);
    const RowVector logits = s.probe->logits(iv, at);

    nlohmann::ordered_json doc;
    doc["format"] = "attnscope-predict/1";
    doc["model"] = model_json(s.info);
    doc["text"] = text_;
    doc["tokens"] = tokens_to_json(s.probe->tokens(), true);
    doc["at"] = at;
    nlohmann::ordered_json predictions = nlohmann::ordered_json::array();
    for (const TokenProbability& p : top_tokens(*s.probe, logits, top_))
      predictions.push_back(
          {{"id", p.id}, {"text", p.text}, {"logprob", p.logprob}, {"probability", p.probability}});
    doc["predictions"] = predictions;
    nlohmann::ordered_json ablate = nlohmann::ordered_json::array(),
                           knockout = nlohmann::ordered_json::array();
    for (const HeadRef& h : iv.ablate) ablate.push_back({h.layer, h.head});
    for (const EdgeKnockout& k : iv.knockout)
      knockout.push_back(
          {k.layer, k.head >= 0 ? nlohmann::ordered_json(k.head) : nullptr, k.query, k.key});
    doc["interventions"] = {{"ablate", ablate},
                            {"ablate_mode", ablation_mode_name(iv.ablate_mode)},
                            {"knockout", knockout}};
    write_output(out_, "predictions", [&](std::ostream& out) {
      out << doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_, backend_ = "auto", ablate_, mode_ = "zero", knockout_,
              out_ = "-";
  int at_ = -1, top_ = 10;
};

}  // namespace

std::unique_ptr<Command> make_predict_command() {
  return std::make_unique<PredictCommand>();
}

}  // namespace attnscope

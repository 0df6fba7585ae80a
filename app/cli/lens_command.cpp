// attnscope lens --model M --text T [--at I] [--top N] [-o FILE|-]
// The logit lens (core/model/intervention.h): what the residual stream after every block would
// predict if it went straight to the unembedding. JSON attnscope-lens/1.
#include <cmath>

#include "app/cli/command.h"
#include "app/cli/probe_session.h"
#include "core/trace/json_writer.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

class LensCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "lens",
        "the logit lens: the top next tokens the residual stream gives after every block "
        "(decoders)");
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text")->required();
    add_backend_option(sub, backend_);
    sub->add_option("--at", at_, "the position to read, from 0 (default: the last)");
    sub->add_option("--top", top_, "how many tokens per layer")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub->add_option("-o,--output", out_, "output file, - for stdout")->capture_default_str();
    return sub;
  }

  int run() override {
    ProbeSession s = open_probe_session("lens", model_, text_, backend_);
    const int at = resolve_position(*s.probe, at_);
    const Matrix rows = s.probe->lens(at);

    nlohmann::ordered_json doc;
    doc["format"] = "attnscope-lens/1";
    doc["model"] = model_json(s.info);
    doc["text"] = text_;
    doc["tokens"] = tokens_to_json(s.probe->tokens(), true);
    doc["at"] = at;
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (Eigen::Index b = 0; b < rows.rows(); ++b) {
      nlohmann::ordered_json top = nlohmann::ordered_json::array();
      for (const TokenProbability& p : top_tokens(*s.probe, rows.row(b), top_))
        top.push_back({{"id", p.id}, {"text", p.text}, {"probability", p.probability}});
      layers.push_back({{"after_block", static_cast<int>(b) - 1}, {"top", top}});
    }
    doc["layers"] = layers;
    write_output(out_, "logit lens", [&](std::ostream& out) {
      out << doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_, backend_ = "auto", out_ = "-";
  int at_ = -1, top_ = 10;
};

}  // namespace

std::unique_ptr<Command> make_lens_command() {
  return std::make_unique<LensCommand>();
}

}  // namespace attnscope

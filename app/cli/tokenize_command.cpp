// attnscope tokenize --model M --text T [--special]: the tokens of a text as JSON.
#include "app/cli/command.h"
#include "core/model/registry.h"
#include "core/trace/json_writer.h"

namespace attnscope {
namespace {

class TokenizeCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("tokenize", "write the tokens of a text as JSON");
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text")->required();
    sub->add_flag("--special", special_, "include added special tokens ([CLS], [SEP])");
    return sub;
  }

  int run() override {
    auto model = open_model(model_);
    nlohmann::ordered_json doc = {{"tokens", tokens_to_json(model->tokenize(text_), special_)}};
    write_output("-", "tokens", [&](std::ostream& out) {
      out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_;
  bool special_ = false;
};

}  // namespace

std::unique_ptr<Command> make_tokenize_command() {
  return std::make_unique<TokenizeCommand>();
}

}  // namespace attnscope

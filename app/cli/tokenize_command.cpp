// attnscope tokenize --model M --text T [--special]: the tokens of a text as JSON.
#include <filesystem>
#include "app/cli/command.h"

#include "core/model/bert/bert_model.h"
#include "core/model/hf/hf_families.h"
#include "core/model/registry.h"
#include "core/model/transformer/hf_weights.h"
#include "core/text/tokenizer.h"
#include "core/trace/json_writer.h"
#include "core/util/error.h"

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
    // A folder with tokenizer files needs no weights: tokenize with its tokenizer alone (a folder
    // of only tokenizer.json works too). Anything else (lesson, a cached hub model) opens the
    // model.
    std::error_code error;
    const Tokens tokens =
        std::filesystem::is_directory(model_, error) && has_tokenizer_files(model_)
            ? folder_tokens()
            : open_model(model_)->tokenize(text_);
    nlohmann::ordered_json doc = {{"tokens", tokens_to_json(tokens, special_)}};
    write_output("-", "tokens", [&](std::ostream& out) {
      out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    });
    return 0;
  }

 private:
  // An encoder's folder gives the tokens its model reads (the family's specials, RoBERTa's doubled
  // pair separator), as the trace has them; any other folder its tokenizer's.
  Tokens folder_tokens() const {
    const std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer(model_);
    const std::filesystem::path config = std::filesystem::path(model_) / "config.json";
    std::error_code error;
    if (std::filesystem::is_regular_file(config, error)) {
      try {
        const nlohmann::json j = read_json_file(config);
        const HfFamily* family = find_hf_family(j);
        if (family && family->encoder_spec)
          return encoder_tokenize(*tokenizer, family->encoder_spec(j, config), text_);
      } catch (const ModelError&) {
        // A config.json that does not open (or a vocabulary without the family's specials):
        // the tokenizer alone, as for a folder of only tokenizer files.
      }
    }
    return tokenizer->encode(text_, special_);
  }

  std::string model_ = "lesson", text_;
  bool special_ = false;
};

}  // namespace

std::unique_ptr<Command> make_tokenize_command() {
  return std::make_unique<TokenizeCommand>();
}

}  // namespace attnscope

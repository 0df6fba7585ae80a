// attnscope tokenize --model M --text T [--special] [--target TGT]: the tokens of a text as JSON.
// With --target (encoder–decoders: bart, marian, t5) the tokens the decoder reads for that target:
// decoder_start_token_id (a special token) and the target tokenizer's tokens, as a trace's
// "decoder" has them.
#include <filesystem>
#include <optional>
#include "app/cli/command.h"

#include "core/model/bert/bert_model.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/model/seq2seq/seq2seq_model.h"
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
    sub->add_option("--target", target_,
                    "encoder–decoders (bart, marian, t5): the decoder's tokens of this target "
                    "instead (--text is then not read)");
    return sub;
  }

  int run() override {
    // A folder with tokenizer files needs no weights: tokenize with its tokenizer alone (a folder
    // of only tokenizer.json works too). Anything else (lesson, a cached hub model) opens the
    // model.
    std::error_code error;
    const Tokens tokens =
        target_ ? target_tokens()
        : std::filesystem::is_directory(model_, error) && has_tokenizer_files(model_)
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

  // The decoder's tokens of --target: the folder's (or the resolved hub model's) Seq2SeqSpec gives
  // decoder_start_token_id and the target tokenizer, without loading the weights.
  Tokens target_tokens() const {
    std::error_code error;
    const bool folder_given = std::filesystem::is_directory(model_, error);
    std::string kind = model_;
    if (folder_given || (model_ != "lesson" && model_ != "tiny" && model_ != "stories")) {
      const std::filesystem::path folder =
          folder_given ? std::filesystem::path(model_) : resolve_model_spec(model_);
      const std::filesystem::path config = folder / "config.json";
      const nlohmann::json j = read_json_file(config);
      const HfFamily* family = find_hf_family(j);
      if (family && family->seq2seq_spec) {
        Seq2SeqSpec spec = family->seq2seq_spec(j, config);
        apply_generation_config(spec, folder);
        const std::shared_ptr<const Tokenizer> tokenizer =
            load_seq2seq_tokenizers(folder, spec).target;
        Token start;
        start.id = spec.decoder_start_id;
        start.text = tokenizer->id_to_token(start.id);
        start.special = true;
        Tokens tokens{start};
        for (Token& t : tokenizer->encode(*target_, /*add_special_tokens=*/true))
          tokens.push_back(std::move(t));
        return tokens;
      }
      kind = family ? family->model_type : std::string("unknown");
    }
    std::string names;
    for (const HfFamily& f : hf_families())
      if (f.seq2seq_spec) names += (names.empty() ? "" : ", ") + f.model_type;
    throw UsageError("--target needs an encoder–decoder (" + names + "); model kind '" + kind +
                     "' has no decoder to translate with");
  }

  std::string model_ = "lesson", text_;
  std::optional<std::string> target_;
  bool special_ = false;
};

}  // namespace

std::unique_ptr<Command> make_tokenize_command() {
  return std::make_unique<TokenizeCommand>();
}

}  // namespace attnscope

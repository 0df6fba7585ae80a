// attnscope generate --model M --text T -n N [--temperature X --top-k K --seed S] [-o FILE|-]:
// a decoder continues the text (KV cache: each new token costs one token's work) and the JSON
// trace of the whole sequence is written: generated tokens carry "generated": true and the top-10
// "predictions" they were chosen from; it stops early at an end-of-sequence token.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <system_error>

#include "app/cli/command.h"
#include "core/backend/select.h"
#include "core/model/registry.h"
#include "core/trace/json_writer.h"
#include "core/trace/trace_check.h"
#include "core/util/file_read.h"

namespace attnscope {
namespace {

// CLI11 reads 18446744073709551616 (2^64) into a uint64_t as 2^64 - 1 without a word, and "-1" as
// 2^64 - 1 too: the seed is checked as text first, so either is a usage error naming --seed.
const CLI::Validator kSeedValidator(
    [](std::string& text) -> std::string {
      std::uint64_t value = 0;
      const char* end = text.data() + text.size();
      const auto [at, ec] = std::from_chars(text.data(), end, value);
      if (text.empty() || ec != std::errc() || at != end)
        return "the seed must be a whole number from 0 to 18446744073709551615, found '" +
               quote_excerpt(text, 40) + "'";
      return "";
    },
    "UINT64");

class GenerateCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "generate", "continue the text with a decoder and write the trace of the whole sequence");
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text to continue")->required();
    sub->add_option("-n,--tokens", options_.max_new_tokens, "how many tokens to add at most")
        ->capture_default_str()
        ->check(CLI::Range(0, 1 << 20));
    sub->add_option("--temperature", options_.temperature,
                    "0 = greedy (the most likely token); above 0 samples")
        ->capture_default_str()
        ->check(CLI::Range(0.0f, 1000.0f));
    sub->add_option("--top-k", options_.top_k, "sample among the k most likely tokens; 0 = all")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--seed", options_.seed, "random seed of sampling (same seed, same tokens)")
        ->capture_default_str()
        ->check(kSeedValidator);
    add_backend_option(sub, backend_);
    sub->add_option("-o,--output", out_, "output file, - for stdout")->capture_default_str();
    return sub;
  }

  int run() override {
    auto model = open_model(model_);
    SelectedBackend sel = select_backend(parse_backend_choice(backend_));
    if (!sel.fallback_reason.empty())
      std::fprintf(stderr, "attnscope: using the CPU: %s\n", sel.fallback_reason.c_str());
    std::unique_ptr<Generator> generator = model->start_generation(text_, *sel.backend, options_);
    while (!generator->done()) generator->step();
    // As export does: a model whose weights overflow gives NaN or all-zero rows, and its
    // "predictions" null probabilities; that is exit 1 naming the layer, never a trace.
    check_attention_rows(generator->trace());
    write_output(out_, "trace",
                 [&](std::ostream& out) { write_trace_json(generator->trace(), out); });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_, backend_ = "auto", out_ = "-";
  GenerationOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_generate_command() {
  return std::make_unique<GenerateCommand>();
}

}  // namespace attnscope

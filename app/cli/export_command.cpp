// attnscope export --model M --text T [--backend B] [--format json|npy|csv|safetensors]
//                  [--layers 0,2-3] [--heads 1] [--weighting raw|value-norm] [-o FILE|-]
//                  [--target TGT] [-n/--tokens N]   (encoder–decoders: bart, marian, t5)
// One forward pass, written by one of core/trace's streaming writers (trace_writer.h). An
// encoder–decoder translates: --text is the source, --target the decoder's side (without it the
// greedy output of at most --tokens tokens); the trace's "decoder" holds the decoder's self- and
// cross-attention.
#include <cstdio>
#include <filesystem>
#include <optional>

#include "app/cli/command.h"
#include "core/analysis/value_weighting.h"
#include "core/backend/select.h"
#include "core/model/hf/hf_families.h"
#include "core/model/registry.h"
#include "core/trace/trace_check.h"
#include "core/trace/trace_writer.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// "bart, marian, t5": the registry's encoder–decoder families.
std::string seq2seq_family_names() {
  std::string names;
  for (const HfFamily& f : hf_families())
    if (f.seq2seq_spec) names += (names.empty() ? "" : ", ") + f.model_type;
  return names;
}

class ExportCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "export", "write the attention of one forward pass (JSON trace, npy, csv, safetensors)");
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text (an encoder–decoder's source)")->required();
    sub->add_option("--target", target_,
                    "encoder–decoders (bart, marian, t5): the target the decoder reads "
                    "(default: the model's greedy output)");
    tokens_option_ =
        sub->add_option("-n,--tokens", max_new_tokens_,
                        "encoder–decoders without --target: how many tokens to generate at most")
            ->capture_default_str()
            ->check(CLI::Range(0, 1 << 20));
    add_backend_option(sub, backend_);
    add_weighting_option(sub, weighting_);
    std::vector<std::string> formats;
    std::string help = "output format:";
    for (const TraceWriter& w : trace_writers()) {
      formats.push_back(w.format);
      help += "\n  " + w.format + ": " + w.description;
    }
    sub->add_option("--format,-f", format_, help)
        ->check(CLI::IsMember(formats))
        ->capture_default_str();
    sub->add_option("--layers", layers_, "layers to write, 0-based: e.g. 0,2-3 (default: all)");
    sub->add_option("--heads", heads_, "heads to write, 0-based: e.g. 1 (default: all)");
    sub->add_option("-o,--output", out_, "output file, - for stdout")->capture_default_str();
    return sub;
  }

  int run() override {
    const TraceWriter& writer = trace_writer(format_);
    if (writer.writes_sidecar && out_ == "-")
      throw UsageError("--format " + format_ +
                       " writes a second file beside the output: give -o FILE, not stdout");
    auto model = open_model(model_);
    // Check the selection against the model before the forward pass, which may take a while.
    const ModelInfo info = model->info();
    parse_index_list(layers_, info.layers, "--layers");
    parse_index_list(heads_, info.heads, "--heads");
    if ((target_ || tokens_option_->count() > 0) && !info.capabilities.cross_attention)
      throw UsageError(std::string(target_ ? "--target" : "--tokens") +
                       " needs an encoder–decoder (" + seq2seq_family_names() + "); model kind '" +
                       info.kind + "' has no decoder to translate with");
    SelectedBackend sel = select_backend(parse_backend_choice(backend_));
    if (!sel.fallback_reason.empty())
      std::fprintf(stderr, "attnscope: using the CPU: %s\n", sel.fallback_reason.c_str());
    AttentionTrace trace =
        info.capabilities.cross_attention
            ? model->run_translation(text_, target_, *sel.backend, max_new_tokens_)
            : model->run(text_, *sel.backend);
    check_attention_rows(trace);  // never write NaN or unnormalised rows (exit 1 instead)
    apply_weighting(trace, weighting_);
    const TraceSlice slice = select_trace(trace, layers_, heads_);
    if (writer.check) writer.check(slice);
    write_output(out_, format_, [&](std::ostream& out) {
      ExportTarget target{
          out, [&](const std::string& suffix, const std::function<void(std::ostream&)>& write) {
            std::filesystem::path side(out_);
            side.replace_extension(suffix);
            write_output(side.string(), format_ + " sidecar", write);
          }};
      writer.write(slice, target);
    });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_, backend_ = "auto", format_ = "json", layers_, heads_,
              out_ = "-", weighting_ = "raw";
  std::optional<std::string> target_;
  int max_new_tokens_ = 64;  // the greedy output's limit (issue 24's contract)
  CLI::Option* tokens_option_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> make_export_command() {
  return std::make_unique<ExportCommand>();
}

}  // namespace attnscope

// attnscope heads [--model M --text T | --trace FILE] [--backend B] [--sort KEY] [--top N]
//                 [--json] [-o FILE|-]
// The head summaries of core/analysis/head_summary.h for every layer and head: a table for people,
// JSON (attnscope-heads/1) for scripts. Same numbers as the model view's captions.
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "app/cli/command.h"
#include "core/analysis/head_summary.h"
#include "core/analysis/value_weighting.h"
#include "core/backend/select.h"
#include "core/model/registry.h"
#include "core/trace/trace_check.h"
#include "core/trace/trace_reader.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

struct HeadRow {
  int layer = 0, head = 0;
  HeadSummary summary;
};

// Layer-major order, or by one key with the notable heads first (ties keep layer-major order).
std::vector<HeadRow> ordered_rows(const std::vector<std::vector<HeadSummary>>& all,
                                  const std::string& sort_key, int top) {
  std::vector<HeadRow> rows;
  for (size_t l = 0; l < all.size(); ++l)
    for (size_t h = 0; h < all[l].size(); ++h)
      rows.push_back({static_cast<int>(l), static_cast<int>(h), all[l][h]});
  if (!sort_key.empty()) {
    const HeadSummaryKey& key = head_summary_key(sort_key);
    std::stable_sort(rows.begin(), rows.end(), [&](const HeadRow& a, const HeadRow& b) {
      return key.higher_is_notable ? key.value(a.summary) > key.value(b.summary)
                                   : key.value(a.summary) < key.value(b.summary);
    });
  }
  if (top > 0 && static_cast<size_t>(top) < rows.size()) rows.resize(static_cast<size_t>(top));
  return rows;
}

nlohmann::ordered_json to_json(const AttentionTrace& trace, const std::vector<HeadRow>& rows) {
  nlohmann::ordered_json doc;
  doc["format"] = "attnscope-heads/1";
  doc["model"] = {{"name", trace.model.name},
                  {"kind", trace.model.kind},
                  {"layers", trace.layers()},
                  {"heads", trace.heads()}};
  doc["text"] = trace.text;
  doc["token_count"] = trace.tokens.size();
  if (trace.weighting != "raw") doc["weighting"] = trace.weighting;
  nlohmann::ordered_json keys = nlohmann::ordered_json::array();
  for (const HeadSummaryKey& k : head_summary_keys())
    keys.push_back({{"name", k.name},
                    {"label", k.label},
                    {"description", k.description},
                    {"higher_is_notable", k.higher_is_notable}});
  doc["keys"] = keys;
  nlohmann::ordered_json heads = nlohmann::ordered_json::array();
  for (const HeadRow& r : rows) {
    nlohmann::ordered_json h = {{"layer", r.layer}, {"head", r.head}};
    for (const HeadSummaryKey& k : head_summary_keys()) h[k.name] = k.value(r.summary);
    heads.push_back(h);
  }
  doc["heads"] = heads;
  return doc;
}

void write_table(std::ostream& out, const std::vector<HeadRow>& rows) {
  const auto& keys = head_summary_keys();
  out << std::setw(5) << "layer" << std::setw(5) << "head";
  for (const HeadSummaryKey& k : keys) out << "  " << std::setw(9) << k.name;
  out << '\n';
  out << std::fixed << std::setprecision(3);
  for (const HeadRow& r : rows) {
    out << std::setw(5) << r.layer << std::setw(5) << r.head;
    for (const HeadSummaryKey& k : keys) out << "  " << std::setw(9) << k.value(r.summary);
    out << '\n';
  }
}

class HeadsCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "heads", "summarise every layer and head: entropy, distance, sinks, previous-token, …");
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text");
    sub->add_option("--trace", trace_, "summarise a stored trace (JSON or safetensors) instead");
    add_backend_option(sub, backend_);
    add_weighting_option(sub, weighting_);
    std::vector<std::string> names;
    std::string help = "list the heads by this summary, the notable ones first:";
    for (const HeadSummaryKey& k : head_summary_keys()) {
      names.push_back(k.name);
      help += "\n  " + k.name + ": " + k.description;
    }
    sub->add_option("--sort", sort_, help)->check(CLI::IsMember(names));
    sub->add_option("--top", top_, "only the first N heads (with --sort: the N most notable)")
        ->check(CLI::PositiveNumber);
    sub->add_flag("--json", json_, "write JSON (attnscope-heads/1) instead of a table");
    sub->add_option("-o,--output", out_, "output file, - for stdout")->capture_default_str();
    return sub;
  }

  int run() override {
    AttentionTrace trace;
    if (!trace_.empty()) {
      if (!text_.empty() || model_ != "lesson")
        throw UsageError("--trace summarises a stored trace: drop --model and --text");
      trace = read_trace_file(trace_);
      apply_weighting(trace, weighting_, "the stored trace " + trace_);
    } else {
      if (text_.empty()) throw UsageError("give --text (or --trace FILE)");
      auto model = open_model(model_);
      SelectedBackend sel = select_backend(parse_backend_choice(backend_));
      if (!sel.fallback_reason.empty())
        std::fprintf(stderr, "attnscope: using the CPU: %s\n", sel.fallback_reason.c_str());
      trace = model->run(text_, *sel.backend);
      check_attention_rows(trace);
      apply_weighting(trace, weighting_);
    }
    if (trace.tokens.empty()) throw UsageError("the text has no tokens to summarise");
    const std::vector<HeadRow> rows = ordered_rows(summarize_trace(trace), sort_, top_);
    write_output(out_, "head summaries", [&](std::ostream& out) {
      if (json_)
        out << to_json(trace, rows).dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
            << '\n';
      else
        write_table(out, rows);
    });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_, trace_, backend_ = "auto", sort_, out_ = "-",
              weighting_ = "raw";
  int top_ = 0;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_heads_command() {
  return std::make_unique<HeadsCommand>();
}

}  // namespace attnscope

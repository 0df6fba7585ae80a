// attnscope heads [--model M --text T | --trace FILE] [--backend B] [--sort KEY] [--top N]
//                 [--effect [--target ID]] [--json] [-o FILE|-]
// The head summaries of core/analysis/head_summary.h for every layer and head: a table for people,
// JSON (attnscope-heads/1) for scripts. Same numbers as the model view's captions. --effect adds
// what each head does to the prediction (core/model/intervention.h): the change in the target's
// log-probability with the head switched off, and its direct logit attribution.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <numeric>
#include <sstream>

#include "app/cli/command.h"
#include "app/cli/probe_session.h"
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
  float effect = NAN, dla = NAN;  // with --effect
};

// What --effect adds: per head the effect and dla on one target token.
struct HeadEffects {
  bool present = false;
  int target = -1;
  std::string target_text;
  double target_logprob = 0.0;
  Matrix effect, dla;  // [layers x heads]
};

// --sort effect: the most negative (the heads the prediction needs most) first; --sort dla: the
// heads that push the target's logit up most first.
const char* const kEffectKeys[] = {"effect", "dla"};

// Layer-major order, or by one key with the notable heads first (ties keep layer-major order).
std::vector<HeadRow> ordered_rows(const std::vector<std::vector<HeadSummary>>& all,
                                  const HeadEffects& fx, const std::string& sort_key, int top) {
  std::vector<HeadRow> rows;
  for (size_t l = 0; l < all.size(); ++l)
    for (size_t h = 0; h < all[l].size(); ++h) {
      HeadRow r{static_cast<int>(l), static_cast<int>(h), all[l][h]};
      if (fx.present) {
        r.effect = fx.effect(r.layer, r.head);
        r.dla = fx.dla(r.layer, r.head);
      }
      rows.push_back(r);
    }
  if (sort_key == "effect") {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const HeadRow& a, const HeadRow& b) { return a.effect < b.effect; });
  } else if (sort_key == "dla") {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const HeadRow& a, const HeadRow& b) { return a.dla > b.dla; });
  } else if (!sort_key.empty()) {
    const HeadSummaryKey& key = head_summary_key(sort_key);
    std::stable_sort(rows.begin(), rows.end(), [&](const HeadRow& a, const HeadRow& b) {
      return key.higher_is_notable ? key.value(a.summary) > key.value(b.summary)
                                   : key.value(a.summary) < key.value(b.summary);
    });
  }
  if (top > 0 && static_cast<size_t>(top) < rows.size()) rows.resize(static_cast<size_t>(top));
  return rows;
}

nlohmann::ordered_json to_json(const AttentionTrace& trace, const HeadEffects& fx,
                               const std::vector<HeadRow>& rows) {
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
  if (fx.present)
    doc["effect_target"] = {
        {"id", fx.target}, {"text", fx.target_text}, {"logprob", fx.target_logprob}};
  nlohmann::ordered_json heads = nlohmann::ordered_json::array();
  for (const HeadRow& r : rows) {
    nlohmann::ordered_json h = {{"layer", r.layer}, {"head", r.head}};
    for (const HeadSummaryKey& k : head_summary_keys()) h[k.name] = k.value(r.summary);
    if (fx.present) {
      h["effect"] = r.effect;
      h["dla"] = r.dla;
    }
    heads.push_back(h);
  }
  doc["heads"] = heads;
  return doc;
}

void write_table(std::ostream& out, const HeadEffects& fx, const std::vector<HeadRow>& rows) {
  const auto& keys = head_summary_keys();
  if (fx.present)
    out << "effect and dla: on token " << fx.target << " '" << fx.target_text
        << "' at the last position (log-probability " << std::setprecision(4) << fx.target_logprob
        << ")\n";
  out << std::setw(5) << "layer" << std::setw(5) << "head";
  for (const HeadSummaryKey& k : keys) out << "  " << std::setw(9) << k.name;
  if (fx.present)
    for (const char* k : kEffectKeys) out << "  " << std::setw(9) << k;
  out << '\n';
  out << std::fixed << std::setprecision(3);
  for (const HeadRow& r : rows) {
    out << std::setw(5) << r.layer << std::setw(5) << r.head;
    for (const HeadSummaryKey& k : keys) out << "  " << std::setw(9) << k.value(r.summary);
    if (fx.present) out << "  " << std::setw(9) << r.effect << "  " << std::setw(9) << r.dla;
    out << '\n';
  }
}

HeadEffects head_effects(Probe& p, int target) {
  const int last = static_cast<int>(p.tokens().size()) - 1;
  const RowVector clean = p.logits({}, last);
  HeadEffects fx;
  fx.present = true;
  if (target < 0) {
    Eigen::Index best = 0;
    clean.maxCoeff(&best);  // the first of equal maxima: the lowest id
    target = static_cast<int>(best);
  } else if (target >= p.vocab()) {
    throw UsageError("--target " + std::to_string(target) + " is outside the vocabulary (0-" +
                     std::to_string(p.vocab() - 1) + ")");
  }
  fx.target = target;
  fx.target_text = p.token_text(target);
  fx.target_logprob = log_softmax(clean)[static_cast<std::size_t>(target)];
  fx.effect = p.head_effects(target);
  fx.dla = p.direct_logit_attribution(target);
  return fx;
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
    names.insert(names.end(), std::begin(kEffectKeys), std::end(kEffectKeys));
    help +=
        "\n  effect: (implies --effect) the change in the target's log-probability with the head "
        "switched off; the most negative first"
        "\n  dla: (implies --effect) the head's direct logit attribution; the largest first";
    sub->add_option("--sort", sort_, help)->check(CLI::IsMember(names));
    sub->add_option("--top", top_, "only the first N heads (with --sort: the N most notable)")
        ->check(CLI::PositiveNumber);
    sub->add_flag("--effect", effect_,
                  "add each head's effect on the prediction at the last position (decoders): "
                  "effect = log-probability of the target with the head switched off minus the "
                  "clean one; dla = its direct logit attribution");
    sub->add_option("--target", target_,
                    "the token id --effect measures (default: the top prediction)")
        ->check(CLI::NonNegativeNumber);
    sub->add_flag("--json", json_, "write JSON (attnscope-heads/1) instead of a table");
    sub->add_option("-o,--output", out_, "output file, - for stdout")->capture_default_str();
    return sub;
  }

  int run() override {
    if (sort_ == "effect" || sort_ == "dla") effect_ = true;
    if (target_ >= 0 && !effect_) throw UsageError("--target goes with --effect");
    if (effect_ && !trace_.empty())
      throw UsageError("--effect runs the model: give --model and --text, not --trace");
    AttentionTrace trace;
    HeadEffects fx;
    if (effect_) {  // the clean run for the effects, and the trace on the same backend
      if (text_.empty()) throw UsageError("give --text");
      ProbeSession s = open_probe_session("heads --effect", model_, text_, backend_);
      fx = head_effects(*s.probe, target_);
      trace = s.model->run(text_, *s.backend.backend);
      check_attention_rows(trace);
      apply_weighting(trace, weighting_);
    } else if (!trace_.empty()) {
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
    const std::vector<HeadRow> rows = ordered_rows(summarize_trace(trace), fx, sort_, top_);
    write_output(out_, "head summaries", [&](std::ostream& out) {
      if (json_)
        out << to_json(trace, fx, rows)
                   .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
            << '\n';
      else
        write_table(out, fx, rows);
    });
    return 0;
  }

 private:
  std::string model_ = "lesson", text_, trace_, backend_ = "auto", sort_, out_ = "-",
              weighting_ = "raw";
  int top_ = 0, target_ = -1;
  bool json_ = false, effect_ = false;
};

}  // namespace

std::unique_ptr<Command> make_heads_command() {
  return std::make_unique<HeadsCommand>();
}

}  // namespace attnscope

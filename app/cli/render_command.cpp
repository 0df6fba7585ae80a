// attnscope render --view heatmap|lines|arcs|grid|formula [--layer L --head H | --aggregate A]
//                  [--model M --text T | --trace FILE] -o fig.svg|fig.pdf|fig.png|- [--format F]
//                  [--theme light|dark] [--width PX] [--colormap C] [--focus I] [--top-k K]
//                  [--scale S] [--weighting raw|value-norm]
// A figure of one view, headless: SVG and PDF are vector (text as text), PNG is drawn by cairo's
// image surface. No display and no OpenGL are needed for any of them. `-o -` writes the figure to
// stdout (SVG unless --format says png or pdf) and nothing else goes there: messages go to stderr.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "app/cli/command.h"
#include "app/figure/figure_export.h"
#include "app/figure/figure_views.h"
#include "app/figure/pango_text.h"
#include "app/ui/colormap.h"
#include "core/analysis/value_weighting.h"
#include "core/backend/select.h"
#include "core/model/registry.h"
#include "core/trace/aggregate.h"
#include "core/trace/trace_reader.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// CLI::Range compares, and every comparison with NaN is false: "--scale nan" passed the range
// check and ended in a cairo message naming no option. Checked first, the option is named.
const CLI::Validator kFinite(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
        return "expected a finite number, found '" + text + "'";
      return "";
    },
    "FINITE");

class RenderCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("render", "write a figure of one view: SVG, PDF or PNG");
    std::vector<std::string> views, aggregates, maps;
    std::string view_help = "the view:", agg_help = "combine the layer's heads instead of --head:";
    for (const FigureView& v : figure_views()) {
      views.push_back(v.name);
      view_help += "\n  " + v.name + ": " + v.description;
    }
    for (const HeadAggregate& a : head_aggregates()) {
      aggregates.push_back(a.name);
      agg_help += "\n  " + a.name + ": " + a.description;
    }
    for (const Colormap& c : colormaps()) maps.push_back(c.name);
    sub->add_option("--view", view_, view_help)->check(CLI::IsMember(views))->capture_default_str();
    sub->add_option("--layer,-l", layer_, "layer, from 0")->capture_default_str();
    auto* head = sub->add_option("--head", head_, "head, from 0")->capture_default_str();
    sub->add_option("--aggregate", aggregate_, agg_help)
        ->check(CLI::IsMember(aggregates))
        ->excludes(head);
    add_model_option(sub, model_);
    sub->add_option("--text,-t", text_, "the text (default: the built-in \"bank\" sentence)");
    sub->add_option("--trace", trace_, "draw a stored trace (JSON or safetensors) instead");
    add_backend_option(sub, backend_);
    add_weighting_option(sub, weighting_);
    sub->add_option("-o,--output", out_, "the figure: .svg, .pdf or .png, or - for stdout")
        ->required();
    std::vector<std::string> formats;
    for (const FigureExporter& e : figure_exporters()) formats.push_back(e.extension);
    sub->add_option("--format", format_,
                    "svg, pdf or png (default: from -o's extension; SVG for -o -)")
        ->check(CLI::IsMember(formats, CLI::ignore_case));
    sub->add_option("--theme", theme_, "light (paper) or dark")
        ->check(CLI::IsMember({"light", "dark"}))
        ->capture_default_str();
    sub->add_option("--width", width_, "figure width in px (default: the view's own)")
        ->check(kFinite)
        ->check(CLI::Range(100, 20000));
    sub->add_option("--colormap", colormap_, "colormap")
        ->check(CLI::IsMember(maps))
        ->capture_default_str();
    sub->add_option("--focus", focus_, "single out this token (index from 0)");
    sub->add_option("--top-k", top_k_, "lines and arcs: each query's k strongest keys")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    sub->add_flag("--fixed-range", fixed_range_, "colours span 0..1 instead of 0..max");
    sub->add_flag("--no-title", no_title_, "leave out the title line");
    sub->add_flag("--hide-first", options_.hide_first,
                  "hide the first token as a key (an attention sink), rows renormalised");
    sub->add_flag("--hide-special", options_.hide_special,
                  "hide special tokens as keys, rows renormalised");
    sub->add_flag("--log-scale", options_.log_scale, "colours follow log10(weight)");
    sub->add_option("--log-floor", options_.log_floor, "weights below it get the first colour")
        ->check(kFinite)
        ->check(CLI::Range(1e-9, 0.5))
        ->capture_default_str();
    sub->add_option("--scale", scale_, "PNG pixels per unit")
        ->check(kFinite)
        ->check(CLI::Range(0.25, 8.0));
    sub->add_option("--layout", layout_, "write where cells went (JSON, for tests)")->group("");
    return sub;
  }

  int run() override {
    // A bad name fails before work.
    const FigureExporter& exporter = figure_exporter_for(out_, format_);
    AttentionTrace trace;
    if (!trace_.empty()) {
      if (!text_.empty() || model_ != "lesson")
        throw UsageError("--trace draws a stored trace: drop --model and --text");
      trace = read_trace_file(trace_);
      apply_weighting(trace, weighting_, "the stored trace " + trace_);
    } else {
      auto model = open_model(model_);
      SelectedBackend sel = select_backend(parse_backend_choice(backend_));
      if (!sel.fallback_reason.empty())
        std::fprintf(stderr, "attnscope: using the CPU: %s\n", sel.fallback_reason.c_str());
      trace = model->run(text_.empty() ? "she sat on the bank of the river" : text_, *sel.backend);
      apply_weighting(trace, weighting_);
    }
    if (trace.tokens.empty()) throw UsageError("the text has no tokens to draw");
    if (focus_ >= static_cast<int>(trace.tokens.size()))
      throw UsageError("--focus " + std::to_string(focus_) + " is out of range (" +
                       std::to_string(trace.tokens.size()) + " tokens)");
    FigureRequest request;
    request.trace = &trace;
    request.layer = layer_;
    request.head = head_;
    request.aggregate = aggregate_;
    request.colormap = colormap_index(colormap_);
    request.light = theme_ == "light";
    request.width = width_;
    request.focus = focus_;
    request.top_k = top_k_;
    request.fixed_range = fixed_range_;
    request.title = !no_title_;
    request.options = options_;
    const Figure fig = build_figure(view_, request);
    write_figure(exporter, fig, out_, scale_);
    if (!layout_.empty()) {
      nlohmann::json doc = fig.layout;
      doc["width"] = fig.width;
      doc["height"] = fig.height;
      doc["missing_glyphs"] = figure_missing_glyphs(fig);  // characters no font has (hex boxes)
      std::ofstream(layout_) << doc.dump(1) << '\n';
    }
    return 0;
  }

 private:
  std::string view_ = "heatmap", aggregate_, model_ = "lesson", text_, trace_, backend_ = "auto",
              out_, format_, theme_ = "light", colormap_ = "viridis", layout_, weighting_ = "raw";
  int layer_ = 0, head_ = 0, focus_ = -1, top_k_ = 5;  // top-k: the window's default
  float width_ = 0, scale_ = 2.0f;
  bool fixed_range_ = false, no_title_ = false;
  ShownOptions options_;  // sinks hidden, log colours (stated in the title)
};

}  // namespace

std::unique_ptr<Command> make_render_command() {
  return std::make_unique<RenderCommand>();
}

}  // namespace attnscope

#include "app/views/shown_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/analysis/value_weighting.h"
#include "core/analysis/view_transform.h"
#include "core/trace/aggregate.h"
#include "core/util/error.h"
#include "core/util/round_ticks.h"

namespace attnscope {

namespace {
constexpr const char* kDot = " \xC2\xB7 ";  // " · "

std::string number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

float ColorScale::position(float w) const {
  if (log) return log_scale(w, vmin, vmax);
  const float t = (w - vmin) / std::max(vmax - vmin, 1e-12f);
  return std::isfinite(t) ? std::clamp(t, 0.0f, 1.0f) : 0.0f;
}

float ColorScale::weight_at(float t) const {
  return log ? log_scale_inverse(t, vmin, vmax) : vmin + (vmax - vmin) * t;
}

ColorScale make_color_scale(const Matrix& w, int colormap, bool fixed_range,
                            const ShownOptions& options) {
  ColorScale s;
  s.colormap = colormap;
  float max = w.size() ? w.maxCoeff() : 1.0f;
  if (fixed_range || !std::isfinite(max) || max <= 0.0f) max = 1.0f;
  s.vmax = max;
  s.log = options.log_scale;
  s.vmin = s.log ? std::clamp(options.log_floor, 1e-9f, s.vmax * 0.5f) : 0.0f;  // floor < ceiling
  return s;
}

const float* ShownMatrix::focus_row(int focus) const {
  if (!combined.empty()) return combined.data();
  if (focus < 0 || focus >= weights.rows()) return nullptr;
  return &weights(focus, 0);  // Matrix is row-major: a row is contiguous
}

Matrix shown_weights(const AttentionTrace& t, int layer, int head, const ShownOptions& o,
                     std::vector<char>* hidden_key, bool cache_head) {
  if (layer < 0 || layer >= t.layers())
    throw UsageError("layer " + std::to_string(layer) + " is out of range (the trace has " +
                     std::to_string(t.layers()) + " layers, numbered from 0)");
  Matrix w;
  if (!o.aggregate.empty()) {
    w = head_aggregate(o.aggregate).combine(t, layer);
  } else {
    if (head < 0 || head >= t.heads())
      throw UsageError("head " + std::to_string(head) + " is out of range (the trace has " +
                       std::to_string(t.heads()) + " heads, numbered from 0)");
    w = *t.head_weights(layer, head, cache_head);
  }
  const SinkOptions sinks = sink_options(o);
  if (hidden_key) {
    hidden_key->assign(static_cast<size_t>(w.cols()), 0);
    if (sinks.any()) {
      const std::vector<bool> hidden = sink_keys(t.tokens, o.hide_first, o.hide_special);
      for (size_t k = 0; k < hidden.size() && k < hidden_key->size(); ++k)
        (*hidden_key)[k] = hidden[k] ? 1 : 0;
    }
  }
  return sinks.any() ? apply_sink_options(w, t.tokens, sinks) : w;
}

SinkOptions sink_options(const ShownOptions& o) {
  SinkOptions s;
  s.hide_first = o.hide_first;
  s.hide_special = o.hide_special;
  return s;
}

std::string shown_options_note(const ShownOptions& o) {
  std::string note;
  if (o.hide_first || o.hide_special) note += kDot + sink_options_title(sink_options(o));
  if (o.log_scale) note += std::string(kDot) + "log colours (floor " + number(o.log_floor) + ")";
  return note;
}

std::string shown_title(const AttentionTrace& t, int layer, int head, const ShownOptions& o) {
  std::string title;
  // Layers and heads count from 0, as in the CLI, JSON, sessions and figures (and Hugging Face).
  const std::string l = std::to_string(layer), heads = std::to_string(t.heads());
  if (o.aggregate.empty())
    title = "layer " + l + kDot + "head " + std::to_string(head);
  else if (o.aggregate == "mean" || o.aggregate == "max")
    title = "layer " + l + kDot + o.aggregate + " of " + heads + " heads";
  else if (o.aggregate == "layers-mean")
    title = "mean of all " + std::to_string(t.layers()) + " layers \xC3\x97 " + heads + " heads";
  else if (o.aggregate == "rollout")
    title = "rollout of layers 0\xE2\x80\x93" + l +
            " (0.5\xC2\xB7"
            "A + 0.5\xC2\xB7I)";
  else
    title = head_aggregate(o.aggregate).title(t, layer);
  // A value-weighted trace says so wherever its weights are drawn
  // (core/analysis/value_weighting.h).
  return title + weighting_title(t) + shown_options_note(o);
}

std::vector<ColorTick> colorbar_ticks(const ColorScale& scale, int max_ticks) {
  std::vector<ColorTick> ticks;
  for (const RoundTick& t : round_ticks(scale.vmin, scale.vmax, max_ticks, scale.log)) {
    const float v = static_cast<float>(t.value);
    ticks.push_back({v, scale.position(v), t.label});
  }
  return ticks;
}

std::vector<std::string> wrap_title(const std::string& title, float width,
                                    const std::function<float(const std::string&)>& measure) {
  // Pieces that must stay whole: the parts between " · ", each ending with its "·" when more
  // follows. A part too wide for a line alone is split at its spaces (words and numbers stay
  // whole).
  std::vector<std::string> pieces;
  for (size_t at = 0; at <= title.size();) {
    const size_t dot = title.find(kDot, at);
    const bool last = dot == std::string::npos;
    std::string part = title.substr(at, last ? std::string::npos : dot - at);
    if (!last) part += " \xC2\xB7";  // "·" ends the line it closes
    if (measure(part) <= width) {
      pieces.push_back(part);
    } else {
      for (size_t w = 0; w < part.size();) {
        const size_t space = part.find(' ', w);
        pieces.push_back(
            part.substr(w, space == std::string::npos ? std::string::npos : space - w));
        w = space == std::string::npos ? part.size() : space + 1;
      }
    }
    if (last) break;
    at = dot + std::strlen(kDot);
  }
  // Greedy lines of pieces joined by a space (so the lines joined by spaces give the title back).
  std::vector<std::string> lines;
  for (const std::string& piece : pieces) {
    if (!lines.empty() && measure(lines.back() + " " + piece) <= width)
      lines.back() += " " + piece;
    else
      lines.push_back(piece);
  }
  return lines;
}

ShownMatrix make_shown_matrix(const AttentionTrace& trace, int layer, int head,
                              const ShownOptions& options, int colormap, bool fixed_range,
                              const std::vector<int>& selected_queries) {
  ShownMatrix s;
  s.layer = layer;
  s.head = head;
  s.options = options;
  s.weights = shown_weights(trace, layer, head, options, &s.hidden_key);
  for (int q : selected_queries)
    if (q >= 0 && q < s.weights.rows()) s.queries.push_back(q);
  std::sort(s.queries.begin(), s.queries.end());
  s.queries.erase(std::unique(s.queries.begin(), s.queries.end()), s.queries.end());
  if (s.queries.size() >= 2) {
    const RowVector row =
        combine_rows(s.weights, s.queries, options.query_sum ? RowCombine::sum : RowCombine::mean);
    s.combined.assign(row.data(), row.data() + row.size());
  } else {
    s.queries.clear();
  }
  s.scale = make_color_scale(s.weights, colormap, fixed_range, options);
  s.title = shown_title(trace, layer, head, options);
  if (!s.queries.empty())
    s.title += std::string(kDot) + (options.query_sum ? "sum" : "mean") + " of " +
               std::to_string(s.queries.size()) + " queries";
  return s;
}

double shown_matrix_cost(const AttentionTrace& t, const ShownOptions& o) {
  const double cells = static_cast<double>(t.queries()) * static_cast<double>(t.keys());
  double heads = 1.0;  // how many heads the matrix reads
  if (o.aggregate == "layers-mean" || o.aggregate == "rollout")
    heads = static_cast<double>(t.layers()) * t.heads();
  else if (!o.aggregate.empty())
    heads = t.heads();
  // A recomputed head costs a dot product of head_dim per cell (and its softmax): say 32.
  return cells * heads * (t.recomputed ? 32.0 : 1.0);
}

std::shared_ptr<const ShownMatrix> ShownMatrixCache::get(
    const std::shared_ptr<const AttentionTrace>& trace, int layer, int head,
    const ShownOptions& options, int colormap, bool fixed_range,
    const std::vector<int>& selected_queries) {
  if (!trace || trace->layers() == 0) return nullptr;
  if (building_) {
    std::shared_ptr<const ShownMatrix> built;
    std::string error;  // layer/head beyond this trace (a new model has fewer): nothing to draw
    if (task_.take(built, error)) {
      shown_ = std::move(built);
      building_ = false;
    }
  }
  Request r{trace, layer, head, colormap, fixed_range, options, selected_queries};
  if (has_request_ && r == requested_) return shown_;
  requested_ = r;
  has_request_ = true;
  auto build = [r]() -> std::shared_ptr<const ShownMatrix> {
    auto s = std::make_shared<ShownMatrix>(make_shown_matrix(*r.trace, r.layer, r.head, r.options,
                                                             r.colormap, r.fixed_range, r.queries));
    s->trace = r.trace;
    return s;
  };
  if (shown_matrix_cost(*trace, options) >= kShownMatrixAsyncCost) {
    task_.start(std::move(build));
    building_ = true;
    return shown_;
  }
  task_.discard();  // a costly build still running is for older inputs
  building_ = false;
  try {
    shown_ = build();
  } catch (const std::exception&) {
    shown_ = nullptr;  // layer/head beyond this trace (a new model has fewer): nothing to draw
  }
  return shown_;
}

}  // namespace attnscope

#include "core/model/intervention.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/text/unicode.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

// A whole non-negative decimal index, or UsageError quoting `part` and saying what it is.
int parse_index(std::string_view s, const std::string& part, const char* what) {
  int value = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < 0)
    throw UsageError("'" + unicode::printable_utf8(part) + "': " + what +
                     " must be a whole number >= 0");
  return value;
}

std::vector<std::string> split_commas(const std::string& text, const char* what) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? comma : comma - start);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty()) throw UsageError(std::string("an empty item in the ") + what + " list");
    parts.push_back(std::move(part));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

HeadRef parse_head(std::string_view s, const std::string& part) {
  const std::size_t dot = s.find('.');
  if (dot == std::string_view::npos)
    throw UsageError("'" + unicode::printable_utf8(part) +
                     "': a head is LAYER.HEAD, e.g. 3.2 (indices from 0)");
  return {parse_index(s.substr(0, dot), part, "the layer"),
          parse_index(s.substr(dot + 1), part, "the head")};
}

}  // namespace

int Interventions::first_layer(int layers) const {
  int first = layers;
  for (const HeadRef& h : ablate) first = std::min(first, h.layer);
  for (const EdgeKnockout& k : knockout) first = std::min(first, k.layer);
  return std::max(first, 0);
}

bool Interventions::ablates(int layer, int head) const {
  return std::find(ablate.begin(), ablate.end(), HeadRef{layer, head}) != ablate.end();
}

std::vector<HeadRef> parse_head_list(const std::string& text) {
  std::vector<HeadRef> heads;
  for (const std::string& part : split_commas(text, "head"))
    heads.push_back(parse_head(part, part));
  return heads;
}

std::vector<EdgeKnockout> parse_knockouts(const std::string& text) {
  std::vector<EdgeKnockout> out;
  for (const std::string& part : split_commas(text, "knockout")) {
    const std::size_t colon = part.find(':'), arrow = part.find('>');
    if (colon == std::string::npos || arrow == std::string::npos || arrow < colon)
      throw UsageError("'" + unicode::printable_utf8(part) +
                       "': a knockout is LAYER[.HEAD]:QUERY>KEY, e.g. 2:5>1 or 2.3:5>1");
    const std::string_view s = part;
    const std::string_view where = s.substr(0, colon);
    EdgeKnockout k;
    if (where.find('.') != std::string_view::npos) {
      const HeadRef h = parse_head(where, part);
      k.layer = h.layer;
      k.head = h.head;
    } else {
      k.layer = parse_index(where, part, "the layer");
    }
    k.query = parse_index(s.substr(colon + 1, arrow - colon - 1), part, "the query");
    k.key = parse_index(s.substr(arrow + 1), part, "the key");
    out.push_back(k);
  }
  return out;
}

const char* ablation_mode_name(AblationMode mode) {
  return mode == AblationMode::kMean ? "mean" : "zero";
}

void check_interventions(const Interventions& iv, int layers, int heads, int tokens) {
  auto range = [](const char* what, int value, int count, const std::string& item) {
    if (value >= count)
      throw UsageError(item + ": " + what + " " + std::to_string(value) + " is out of range (0-" +
                       std::to_string(count - 1) + ")");
  };
  for (const HeadRef& h : iv.ablate) {
    const std::string item = "--ablate " + std::to_string(h.layer) + "." + std::to_string(h.head);
    range("layer", h.layer, layers, item);
    range("head", h.head, heads, item);
  }
  for (const EdgeKnockout& k : iv.knockout) {
    // Appended piece by piece: "lit" + std::string trips GCC 12's false -Wstringop-overflow.
    std::string item = "--knockout ";
    item.append(std::to_string(k.layer));
    if (k.head >= 0) item.append(".").append(std::to_string(k.head));
    item.append(":").append(std::to_string(k.query)).append(">").append(std::to_string(k.key));
    range("layer", k.layer, layers, item);
    if (k.head >= 0) range("head", k.head, heads, item);
    range("query", k.query, tokens, item);
    range("key", k.key, tokens, item);
  }
}

std::vector<double> log_softmax(const RowVector& logits) {
  std::vector<double> out(static_cast<std::size_t>(logits.size()));
  if (out.empty()) return out;
  const double mx = logits.maxCoeff();
  double sum = 0.0;
  for (Eigen::Index i = 0; i < logits.size(); ++i) sum += std::exp(logits[i] - mx);
  const double log_sum = mx + std::log(sum);
  for (Eigen::Index i = 0; i < logits.size(); ++i)
    out[static_cast<std::size_t>(i)] = logits[i] - log_sum;
  return out;
}

std::vector<TokenProbability> top_tokens(const Probe& probe, const RowVector& logits, int n) {
  const std::vector<double> lp = log_softmax(logits);
  std::vector<int> order(lp.size());
  std::iota(order.begin(), order.end(), 0);
  n = std::clamp(n, 0, static_cast<int>(order.size()));
  std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int a, int b) {
    return lp[static_cast<std::size_t>(a)] > lp[static_cast<std::size_t>(b)] ||
           (lp[static_cast<std::size_t>(a)] == lp[static_cast<std::size_t>(b)] && a < b);
  });
  std::vector<TokenProbability> out;
  for (int i = 0; i < n; ++i) {
    const int id = order[static_cast<std::size_t>(i)];
    const double l = lp[static_cast<std::size_t>(id)];
    out.push_back({id, probe.token_text(id), l, std::exp(l)});
  }
  return out;
}

std::string format_head_list(const std::vector<HeadRef>& heads) {
  std::string out;
  for (const HeadRef& h : heads) {
    if (!out.empty()) out += ',';
    out += std::to_string(h.layer);
    out += '.';
    out += std::to_string(h.head);
  }
  return out;
}

std::string format_knockouts(const std::vector<EdgeKnockout>& knockouts) {
  std::string out;
  for (const EdgeKnockout& k : knockouts) {
    if (!out.empty()) out += ',';
    out += std::to_string(k.layer);
    if (k.head >= 0) {
      out += '.';
      out += std::to_string(k.head);
    }
    out += ':';
    out += std::to_string(k.query);
    out += '>';
    out += std::to_string(k.key);
  }
  return out;
}

Matrix Probe::head_effects(int target, const std::function<void(double)>& progress,
                           const std::function<bool()>& cancelled) {
  const int L = layers(), H = heads(), last = static_cast<int>(tokens().size()) - 1;
  Matrix effect = Matrix::Constant(L, H, std::numeric_limits<float>::quiet_NaN());
  int done = 0;
  for (int l = L - 1; l >= 0; --l) {
    for (int h = 0; h < H; ++h) {
      if (cancelled && cancelled()) return effect;
      effect(l, h) = static_cast<float>(head_effect(target, last, {l, h}));
      if (progress) progress(static_cast<double>(++done) / (L * H));
    }
  }
  return effect;
}

const Intervenable* intervenable(const Model& model) {
  return dynamic_cast<const Intervenable*>(&model);
}

}  // namespace attnscope

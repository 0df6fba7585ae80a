#include "core/session/session.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/analysis/head_summary.h"
#include "core/model/intervention.h"
#include "core/trace/aggregate.h"
#include "core/util/atomic_file.h"
#include "core/util/json_file.h"

namespace attnscope {

namespace {

using nlohmann::json;

// What a value is, for "expected …, found …": its type and, when short, the value itself.
std::string describe(const json& v) {
  std::string type = v.is_boolean()          ? "a boolean"
                     : v.is_number_integer() ? "an integer"
                     : v.is_number()         ? "a number"
                     : v.is_string()         ? "a string"
                     : v.is_array()          ? "an array"
                     : v.is_object()         ? "an object"
                                             : "null";
  if (v.is_array() || v.is_object()) return type + " of " + std::to_string(v.size());
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return type + " " + text;
}

// Reads keys of one object with the key's full path in every error.
class Reader {
 public:
  Reader(const json& object, std::string file, std::string prefix)
      : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const std::string& found) const {
    throw SessionError("session '" + file_ + "': key \"" + prefix_ + key + "\": expected " +
                       expected + ", found " + found);
  }
  const json* find(const std::string& key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  void get(const std::string& key, bool& out) const {
    if (const json* v = find(key)) {
      if (!v->is_boolean()) fail(key, "true or false", describe(*v));
      out = v->get<bool>();
    }
  }
  void get(const std::string& key, int& out, int lo, int hi) const {
    if (const json* v = find(key)) {
      const std::string expected =
          "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
      if (!v->is_number_integer()) fail(key, expected, describe(*v));
      const auto x = v->get<long long>();
      if (x < lo || x > hi) fail(key, expected, describe(*v));
      out = static_cast<int>(x);
    }
  }
  void get(const std::string& key, std::int64_t& out, std::int64_t lo, std::int64_t hi) const {
    if (const json* v = find(key)) {
      const std::string expected =
          "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
      if (!v->is_number_integer()) fail(key, expected, describe(*v));
      // A number above INT64_MAX is stored unsigned; it is out of range either way.
      if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
        fail(key, expected, describe(*v));
      const auto x = v->get<std::int64_t>();
      if (x < lo || x > hi) fail(key, expected, describe(*v));
      out = x;
    }
  }
  // A head summary key of core/analysis/head_summary.h, or "" (none).
  // A string in a syntax `parse` checks (it throws UsageError naming the bad part).
  template <class Parse>
  void get_parsed(const std::string& key, std::string& out, Parse parse) const {
    get(key, out, 1 << 16);
    if (out.empty()) return;
    try {
      parse(out);
    } catch (const std::exception& e) {
      fail(key, "a list as on the command line", describe(json(out)) + " (" + e.what() + ")");
    }
  }
  void get_summary_key(const std::string& key, std::string& out) const {
    get(key, out, 64);
    if (out.empty()) return;
    std::string known = "\"\" (none)";
    for (const HeadSummaryKey& k : head_summary_keys()) {
      if (k.name == out) return;
      known += " or \"" + k.name + "\"";
    }
    fail(key, known, describe(json(out)));
  }
  void get(const std::string& key, float& out, float lo, float hi) const {
    if (const json* v = find(key)) {
      char range[64];
      std::snprintf(range, sizeof range, "a number from %g to %g", lo, hi);
      if (!v->is_number()) fail(key, range, describe(*v));
      const double x = v->get<double>();
      if (!std::isfinite(x) || x < lo || x > hi) fail(key, range, describe(*v));
      out = static_cast<float>(x);
    }
  }
  void get(const std::string& key, std::string& out, std::size_t max_bytes) const {
    if (const json* v = find(key)) {
      if (!v->is_string())
        fail(key, "a string of at most " + std::to_string(max_bytes) + " bytes", describe(*v));
      const auto& s = v->get_ref<const std::string&>();
      if (s.size() > max_bytes)
        fail(key, "a string of at most " + std::to_string(max_bytes) + " bytes",
             "one of " + std::to_string(s.size()) + " bytes");
      if (s.find('\0') != std::string::npos) fail(key, "text", "a NUL character");
      out = s;
    }
  }
  void get_choice(const std::string& key, std::string& out,
                  std::initializer_list<const char*> choices) const {
    if (const json* v = find(key)) {
      std::string expected;
      for (const char* c : choices) expected += (expected.empty() ? "" : " or ") + json(c).dump();
      if (!v->is_string()) fail(key, expected, describe(*v));
      for (const char* c : choices)
        if (v->get_ref<const std::string&>() == c) {
          out = c;
          return;
        }
      fail(key, expected, describe(*v));
    }
  }
  // An array of distinct strings, each one of `choices`.
  void get_choices(const std::string& key, std::vector<std::string>& out,
                   std::initializer_list<const char*> choices) const {
    if (const json* v = find(key)) {
      std::string expected;
      for (const char* c : choices) expected += (expected.empty() ? "" : ", ") + json(c).dump();
      expected = "an array of distinct names among " + expected;
      if (!v->is_array() || v->size() > choices.size()) fail(key, expected, describe(*v));
      out.clear();
      for (const json& x : *v) {
        const bool known = x.is_string() && std::any_of(choices.begin(), choices.end(),
                                                        [&](const char* c) { return x == c; });
        if (!known || std::find(out.begin(), out.end(), x.get<std::string>()) != out.end())
          fail(key, expected, "an element " + describe(x));
        out.push_back(x.get<std::string>());
      }
    }
  }
  // An array of at most `max_count` integers from 0 to `max_value` (indices).
  void get_indices(const std::string& key, std::vector<int>& out, std::size_t max_count,
                   int max_value) const {
    if (const json* v = find(key)) {
      const std::string expected = "an array of at most " + std::to_string(max_count) +
                                   " integers from 0 to " + std::to_string(max_value);
      if (!v->is_array() || v->size() > max_count) fail(key, expected, describe(*v));
      out.clear();
      for (const json& x : *v) {
        if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > max_value)
          fail(key, expected, "an element " + describe(x));
        out.push_back(static_cast<int>(x.get<long long>()));
      }
    }
  }
  // A nested object (absent: nullopt-like empty object).
  Reader object(const std::string& key) const {
    static const json empty = json::object();
    const json* v = find(key);
    if (!v) return Reader(empty, file_, prefix_ + key + ".");
    if (!v->is_object()) fail(key, "an object", describe(*v));
    return Reader(*v, file_, prefix_ + key + ".");
  }
  const json& raw() const { return object_; }
  const std::string& file() const { return file_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const json& object_;
  std::string file_, prefix_;
};

}  // namespace

std::string session_to_json(const Session& s) {
  json texts = json::array();
  for (const SessionText& t : s.texts) {
    json o = {{"text", t.text}};
    if (!t.target.empty()) o["target"] = t.target;
    if (!t.label.empty()) o["label"] = t.label;
    if (t.selected_token >= 0) o["selected_token"] = t.selected_token;
    if (!t.selected_queries.empty()) o["selected_queries"] = t.selected_queries;
    if (!t.knockout.empty()) o["knockout"] = t.knockout;
    o["generation"] = {{"tokens", t.generate_tokens},
                       {"temperature", t.temperature},
                       {"top_k", t.top_k},
                       {"seed", t.seed}};
    texts.push_back(o);
  }
  const LessonOptions& l = s.lesson;
  json doc = {{"format", kSessionFormat},
              {"model", s.model},
              {"backend", s.backend},
              {"lesson",
               {{"beta", l.beta},
                {"mask_self", l.mask_self},
                {"scale", l.scale},
                {"causal", l.causal},
                {"positional", l.positional},
                {"heads", l.heads},
                {"mask_unknown", l.mask_unknown},
                {"head_design", head_design_name(l.head_design)}}},
              {"texts", texts},
              {"show_second", s.show_second},
              {"view",
               {{"mode", s.mode},
                {"layer", s.layer},
                {"head", s.head},
                {"active_slot", s.active_slot},
                {"lesson_step", s.lesson_step},
                {"lesson_unscaled", s.lesson_unscaled},
                {"lesson_predict", s.lesson_predict},
                {"panel", s.panel},
                {"aggregate", s.aggregate},
                {"hide_first", s.hide_first},
                {"hide_special", s.hide_special},
                {"query_combine", s.query_combine},
                {"weighting", s.weighting},
                {"overlay", s.overlay},
                {"overlay_heads", s.overlay_heads},
                {"model_sort", s.model_sort},
                {"model_filter", s.model_filter},
                {"model_filter_min", s.model_filter_min},
                {"ablate", s.ablate},
                {"ablate_mode", s.ablate_mode},
                {"model_marks", s.model_marks},
                {"target", s.target},
                {"top_k", s.top_k},
                {"focus_view", s.focus_view},
                {"focus_slot", s.focus_slot},
                {"tabs", s.tabs}}},
              {"display",
               {{"theme", s.theme},
                {"colormap", s.colormap},
                {"fixed_range", s.fixed_range},
                {"font_scale", s.font_scale},
                {"left_panel", s.left_panel},
                {"log_scale", s.log_scale},
                {"log_floor", s.log_floor}}}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Session parse_session(const std::string& document, const std::string& file) {
  const std::string where = "session '" + file + "'";
  if (document.size() > kSessionMaxBytes)
    throw SessionError(where + ": expected at most " + std::to_string(kSessionMaxBytes) +
                       " bytes, found " + std::to_string(document.size()));
  if (json_nesting_depth(document) > kSessionMaxDepth)
    throw SessionError(where + ": expected JSON nested at most " +
                       std::to_string(kSessionMaxDepth) + " levels deep, found deeper nesting");
  json doc;
  try {
    doc = json::parse(document);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number overflow
    throw SessionError(where + ": not JSON: " + json_problem(e));  // short, one line
  }
  if (!doc.is_object())
    throw SessionError(where + ": expected a JSON object, found " + describe(doc));
  Reader top(doc, file, "");
  const json* format = top.find("format");
  if (!format) top.fail("format", "\"" + std::string(kSessionFormat) + "\"", "no such key");
  if (!format->is_string() || *format != kSessionFormat)
    top.fail("format", "\"" + std::string(kSessionFormat) + "\"", describe(*format));

  Session s;
  top.get("model", s.model, 4096);
  if (s.model.empty()) top.fail("model", "a model spec (lesson, a folder or a repo id)", "\"\"");
  // Every backend select_backend knows (parse_backend_choice): the app writes the one it runs on.
  top.get_choice("backend", s.backend, {"auto", "cpu", "cuda", "opengl"});

  Reader lesson = top.object("lesson");
  LessonOptions& l = s.lesson;
  lesson.get("beta", l.beta, 0.0f, 1000.0f);
  lesson.get("mask_self", l.mask_self);
  lesson.get("scale", l.scale);
  lesson.get("causal", l.causal);
  lesson.get("positional", l.positional);
  lesson.get("heads", l.heads, 1, 128);
  if (128 % l.heads != 0)
    lesson.fail("heads", "a divisor of 128 (1, 2, 4, 8, 16, 32, 64 or 128)",
                "an integer " + std::to_string(l.heads));
  lesson.get("mask_unknown", l.mask_unknown);
  std::string design = head_design_name(l.head_design);
  lesson.get_choice("head_design", design, {"roles", "random"});
  l.head_design = parse_head_design(design);

  const json* texts = top.find("texts");
  s.has_texts = texts != nullptr;
  if (texts) {
    if (!texts->is_array() || texts->size() > kSessionSlots)
      top.fail("texts", "an array of at most 2 objects", describe(*texts));
    for (std::size_t i = 0; i < texts->size(); ++i) {
      const std::string key = "texts[" + std::to_string(i) + "]";
      if (!(*texts)[i].is_object()) top.fail(key, "an object", describe((*texts)[i]));
      Reader t((*texts)[i], file, key + ".");
      t.get("text", s.texts[i].text, kSessionMaxTextBytes);
      t.get("target", s.texts[i].target, kSessionMaxTextBytes);
      t.get("label", s.texts[i].label, 256);
      t.get("selected_token", s.texts[i].selected_token, -1, 1 << 20);
      t.get_indices("selected_queries", s.texts[i].selected_queries, kSessionMaxSelectedQueries,
                    1 << 20);
      t.get_parsed("knockout", s.texts[i].knockout, parse_knockouts);
      Reader g = t.object("generation");
      g.get("tokens", s.texts[i].generate_tokens, 1, kSessionMaxGenerateTokens);
      g.get("temperature", s.texts[i].temperature, 0.0f, kSessionMaxTemperature);
      g.get("top_k", s.texts[i].top_k, 0, kSessionMaxTopK);
      g.get("seed", s.texts[i].seed, 0, kSessionMaxSeed);
    }
  }
  top.get("show_second", s.show_second);

  Reader view = top.object("view");
  view.get_choice("mode", s.mode, {"explore", "lesson"});
  view.get("layer", s.layer, 0, 4095);
  view.get("head", s.head, 0, 4095);
  view.get("active_slot", s.active_slot, 0, kSessionSlots - 1);
  view.get("lesson_step", s.lesson_step, 1, kLessonSteps);
  view.get("lesson_unscaled", s.lesson_unscaled);
  view.get("lesson_predict", s.lesson_predict);
  view.get_choice("panel", s.panel, {"sentences", "model"});
  view.get("aggregate", s.aggregate, 64);
  if (!s.aggregate.empty()) {
    std::string known = "\"\" (one head)";
    bool found = false;
    for (const HeadAggregate& a : head_aggregates()) {
      known += " or \"" + a.name + "\"";
      found |= a.name == s.aggregate;
    }
    if (!found) view.fail("aggregate", known, describe(json(s.aggregate)));
  }
  view.get("hide_first", s.hide_first);
  view.get("hide_special", s.hide_special);
  view.get_choice("query_combine", s.query_combine, {"mean", "sum"});
  view.get_choice("weighting", s.weighting, {"raw", "value-norm"});
  view.get("overlay", s.overlay);
  view.get_indices("overlay_heads", s.overlay_heads, 4096, 4095);
  if (const json* sort = view.find("model_sort"); sort && (*sort == "effect" || *sort == "dla")) {
    s.model_sort = sort->get<std::string>();
  } else {
    view.get_summary_key("model_sort", s.model_sort);
  }
  view.get_parsed("ablate", s.ablate, parse_head_list);
  view.get_choice("ablate_mode", s.ablate_mode, {"zero", "mean"});
  view.get_choice("model_marks", s.model_marks, {"", "effect", "dla"});
  view.get("target", s.target, -1, 1 << 30);
  view.get_summary_key("model_filter", s.model_filter);
  view.get("model_filter_min", s.model_filter_min, -1e6f, 1e6f);
  view.get("top_k", s.top_k, 1, kSessionMaxArcsTopK);
  view.get_choice("focus_view", s.focus_view,
                  {"", "heatmap", "arcs", "lines", "meaning", "formula", "lens", "model"});
  view.get("focus_slot", s.focus_slot, 0, kSessionSlots - 1);
  // Every view name (app/ui/layout.h): `--views` may put any of them in the tab regions.
  view.get_choices("tabs", s.tabs,
                   {"heatmap", "arcs", "lines", "meaning", "formula", "lens", "model"});

  Reader display = top.object("display");
  display.get_choice("theme", s.theme, {"dark", "light"});
  display.get("colormap", s.colormap, 64);
  display.get("fixed_range", s.fixed_range);
  display.get("font_scale", s.font_scale, 0.5f, 2.5f);
  display.get("left_panel", s.left_panel);
  display.get("log_scale", s.log_scale);
  display.get("log_floor", s.log_floor, 1e-9f, 0.5f);
  return s;
}

Session read_session(const std::filesystem::path& path) {
  std::error_code ec;
  const std::string where = "session '" + path.string() + "'";
  if (!std::filesystem::is_regular_file(path, ec))
    throw SessionError(where + ": " +
                       (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw SessionError(where + ": " + ec.message());
  if (size > kSessionMaxBytes)
    throw SessionError(where + ": expected at most " + std::to_string(kSessionMaxBytes) +
                       " bytes, found " + std::to_string(size));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SessionError(where + ": cannot be read");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_session(buffer.str(), path.string());
}

void write_session(const std::filesystem::path& path, const Session& session) {
  write_file_atomically(path, session_to_json(session));
}

}  // namespace attnscope

// The streaming reader of attnscope-trace/1 JSON. nlohmann's SAX parser (iterative, so deep
// nesting cannot overflow the stack) feeds events to TraceSax: the "attention" value (and the
// optional "value_norms") goes straight into floats while its nested levels are checked for a
// regular shape; every other top-level key becomes a small JSON value. Memory grows only with
// what the file really holds.
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/trace/decoder_io.h"
#include "core/trace/trace_reader.h"
#include "core/util/file_read.h"

namespace attnscope {

// Per-matrix overhead (a Matrix and its allocation, ~64 bytes) is bounded by bounding the count
// of matrices: a safetensors trace of 20 million one-token layers (80 MB) took 4.6 GB. Real models
// have at most ~128 layers and ~128 heads.
void check_trace_counts(size_t layers, size_t heads, const std::string& name) {
  if (layers <= kMaxTraceLayers && heads <= kMaxTraceHeads && layers * heads <= kMaxTraceMatrices)
    return;
  throw TraceError(name + ": key 'attention': " + std::to_string(layers) + " layers x " +
                   std::to_string(heads) + " heads is more than a trace may hold (at most " +
                   std::to_string(kMaxTraceLayers) + " layers, " + std::to_string(kMaxTraceHeads) +
                   " heads and " + std::to_string(kMaxTraceMatrices) + " matrices)");
}

namespace {

using json = nlohmann::json;

constexpr size_t kMaxDepth = kMaxTraceJsonDepth;
// JSON values kept outside "attention" (tokens, model, …): 65,536 tokens of 6 keys each fit many
// times over, and at roughly 100 bytes a value in memory the header stays under ~100 MB.
constexpr size_t kMaxKeptValues = 1u << 20;

// The top-level keys read_trace_header reads; every other key is skipped as it streams past,
// never materialised (a 100 MB unknown key full of {} took 3 GB as a JSON document).
bool known_key(const std::string& k) {
  for (const char* known : {"format", "model", "backend", "text", "tokens", "pieces",
                            "truncated_at_byte", "selection", "weighting", "decoder", "source"})
    if (k == known) return true;
  return false;
}

// A key whose value is numbers in regularly nested arrays, streamed into floats: the top-level
// "attention" and "value_norms", and the "decoder" object's "attention" and "cross_attention".
struct NestedNumbers {
  const char* key;     // "attention", "decoder.cross_attention": the path messages name
  const char* layout;  // "[layer][head][query][key]"
  size_t levels;       // 4: matrices, kept one by one in `matrices`; 3: flat in `values`
  static constexpr size_t kUnknown = static_cast<size_t>(-1);
  // The length of each level; kUnknown for a level no array of which closed yet.
  std::vector<size_t> shape;
  std::vector<size_t> counts;  // elements seen so far at each open level
  bool seen = false;
  // levels 4: each [query][key] matrix in file order as soon as it closed, `values` holding the
  // numbers of the one being read; levels 3: all the numbers in file order.
  std::vector<Matrix> matrices;
  std::vector<float> values;
};

class TraceSax final : public nlohmann::json_sax<json> {
 public:
  explicit TraceSax(std::string name) : name_(std::move(name)) {}

  // Every top-level key but the streamed numbers ("decoder" without its two matrices' keys).
  std::map<std::string, json> keys;
  // Memory stays near the size of the attention itself: one matrix's numbers are buffered.
  static constexpr size_t kUnknown = NestedNumbers::kUnknown;
  NestedNumbers attention{"attention", "[layer][head][query][key]", 4, {}, {}, false, {}, {}};
  NestedNumbers norms{"value_norms", "[layer][head][key]", 3, {}, {}, false, {}, {}};
  NestedNumbers decoder_self{
      "decoder.attention", "[layer][head][query][key]", 4, {}, {}, false, {}, {}};
  NestedNumbers decoder_cross{"decoder.cross_attention",
                              "[layer][head][decoder query][encoder key]",
                              4,
                              {},
                              {},
                              false,
                              {},
                              {}};

  bool null() override { return skipped_scalar() || value(json(nullptr), "null"); }
  bool boolean(bool v) override { return skipped_scalar() || value(json(v), "a boolean"); }
  bool number_integer(number_integer_t v) override {
    return skipped_scalar() || attention_number(static_cast<double>(v)) || value(json(v), "");
  }
  bool number_unsigned(number_unsigned_t v) override {
    return skipped_scalar() || attention_number(static_cast<double>(v)) || value(json(v), "");
  }
  bool number_float(number_float_t v, const string_t&) override {
    return skipped_scalar() || attention_number(v) || value(json(v), "");
  }
  bool string(string_t& v) override {
    return skipped_scalar() || value(json(std::move(v)), "a string");
  }
  bool binary(binary_t&) override { return fail_here("binary data"); }

  bool start_object(std::size_t) override {
    if (skipping_) return skip_open();
    if (depth_ == 0) {
      ++depth_;
      return true;
    }
    if (in_array_) return fail_here("an object");
    return open(json::object());
  }
  bool key(string_t& k) override {
    if (skipping_) return true;
    if (depth_ == 1) {
      if (k == attention.key || k == norms.key) {
        NestedNumbers& a = k == attention.key ? attention : norms;
        if (a.seen) throw TraceError(name_ + ": key '" + k + "' appears twice");
        a.seen = true;
        in_array_ = &a;
      } else if (!known_key(k)) {
        current_key_ = k;
        skipping_ = true;  // readers ignore keys they do not know: its value streams past
      } else {
        current_key_ = k;
        if (keys.count(k)) throw TraceError(name_ + ": key '" + k + "' appears twice");
      }
      return true;
    }
    if (depth_ == 2 && stack_.size() == 1 && current_key_ == "decoder" &&
        (k == "attention" || k == "cross_attention")) {
      NestedNumbers& a = k == "attention" ? decoder_self : decoder_cross;
      if (a.seen) throw TraceError(name_ + ": key '" + a.key + "' appears twice");
      a.seen = true;
      in_array_ = &a;
      return true;
    }
    pending_key_ = k;
    return true;
  }
  bool end_object() override {
    if (skipping_) return skip_close();
    if (stack_.empty()) {  // the top-level object
      depth_ = 0;
      return true;
    }
    return close();
  }
  bool start_array(std::size_t) override {
    if (skipping_) return skip_open();
    if (depth_ == 0) return top_level("an array");
    if (in_array_) return attention_open();
    return open(json::array());
  }
  bool end_array() override {
    if (skipping_) return skip_close();
    if (in_array_) return attention_close();
    return close();
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    if (const size_t colon = what.rfind(": "); colon != std::string::npos)
      what = what.substr(colon + 2);
    const std::string where = in_array_ ? " in key '" + element_path() + "'" : "";
    throw TraceError(name_ + ": not valid JSON at byte " + std::to_string(position) + where +
                     " (near '" + last_token.substr(0, 40) + "'): " + what);
  }

 private:
  [[noreturn]] bool top_level(const std::string& found) {
    throw TraceError(name_ + ": expected a JSON object (attnscope-trace/1) at the top, found " +
                     found);
  }
  // The element about to be added at the innermost open level.
  std::string element_path() const {
    std::string p = attention_path();
    if (!in_array_->counts.empty())
      p.append("[").append(std::to_string(in_array_->counts.back())).append("]");
    return p;
  }
  // The innermost open array.
  std::string attention_path() const {
    std::string p = in_array_->key;
    const std::vector<size_t>& counts = in_array_->counts;
    // append, not operator+: GCC 12 gives a false -Wrestrict on "[" + std::to_string(…).
    for (size_t d = 0; d + 1 < counts.size(); ++d)
      p.append("[").append(std::to_string(counts[d] - 1)).append("]");
    return p;
  }
  [[noreturn]] bool fail_here(const std::string& found) {
    if (depth_ == 0) top_level(found);
    const std::string key = in_array_ ? element_path() : stack_path();
    std::string expected = "a JSON value";
    if (in_array_)
      expected = std::string("numbers in ") + std::to_string(in_array_->levels) +
                 " nested arrays " + in_array_->layout;
    throw TraceError(name_ + ": key '" + key + "': expected " + expected + ", found " + found);
  }

  // The kept key being read: "decoder.tokens" inside the decoder object, else the top-level key.
  std::string stack_path() const {
    if (current_key_ == "decoder" && stack_.size() == 1 && !pending_key_.empty())
      return current_key_ + "." + pending_key_;
    return current_key_;
  }
  // An unknown key's value: only its nesting is counted (the parser checks it is valid JSON).
  bool skipped_scalar() {
    if (!skipping_) return false;
    if (skip_depth_ == 0) skipping_ = false;  // the whole value was this scalar
    return true;
  }
  bool skip_open() {
    if (++skip_depth_ > kMaxDepth) nested_too_deep();  // bounded like the keys that are kept
    return true;
  }
  [[noreturn]] void nested_too_deep() {
    throw TraceError(name_ + ": key '" + current_key_ + "': nested deeper than " +
                     std::to_string(kMaxDepth) + " levels");
  }
  bool skip_close() {
    if (--skip_depth_ == 0) skipping_ = false;
    return true;
  }
  void count_kept() {
    if (++kept_ > kMaxKeptValues)
      throw TraceError(name_ + ": key '" + current_key_ + "': more than " +
                       std::to_string(kMaxKeptValues) +
                       " JSON values outside 'attention' (a trace's tokens and model need far "
                       "fewer)");
  }

  // A value anywhere but in attention.
  bool value(json v, const std::string& kind) {
    if (depth_ == 0) top_level(kind.empty() ? "a number" : kind);
    if (in_array_) {
      if (v.is_null() && in_array_->counts.size() == in_array_->levels) {
        throw TraceError(name_ + ": key '" + element_path() +
                         "': expected a number, found null (NaN or infinity)");
      }
      return fail_here(kind);
    }
    count_kept();
    if (stack_.empty()) {
      keys[current_key_] = std::move(v);
      return true;
    }
    return add(std::move(v)) != nullptr;
  }
  json* add(json v) {
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[pending_key_];
    slot = std::move(v);
    return &slot;
  }
  bool open(json container) {
    if (stack_.size() >= kMaxDepth) nested_too_deep();
    count_kept();
    ++depth_;
    if (stack_.empty()) {
      json& slot = keys[current_key_];
      slot = std::move(container);
      stack_.push_back(&slot);
    } else {
      stack_.push_back(add(std::move(container)));
    }
    return true;
  }
  bool close() {
    --depth_;
    stack_.pop_back();
    return true;
  }

  // attention: four nested arrays (value_norms: three); each level's length must match the first
  // array of that level.
  bool attention_open() {
    std::vector<size_t>& counts = in_array_->counts;
    if (!counts.empty()) counts.back()++;
    if (counts.size() == 1 && counts[0] > kMaxTraceLayers)
      count_error(counts[0], 1);  // throws, before the layers cost memory
    if (counts.size() == 2 && counts[1] > kMaxTraceHeads) count_error(1, counts[1]);
    if (counts.size() == in_array_->levels) {
      static const char* const kNth[] = {"a first", "a second", "a third", "a fourth", "a fifth"};
      fail_here(std::string(kNth[in_array_->levels]) + " nested array");
    }
    counts.push_back(0);
    return true;
  }
  [[noreturn]] void count_error(size_t layers, size_t heads) {
    if (in_array_ == &attention) check_trace_counts(layers, heads, name_);
    throw TraceError(name_ + ": key '" + in_array_->key + "': " + std::to_string(layers) +
                     " layers x " + std::to_string(heads) +
                     " heads is more than a trace may hold (at most " +
                     std::to_string(kMaxTraceLayers) + " layers and " +
                     std::to_string(kMaxTraceHeads) + " heads)");
  }
  bool attention_number(double v) {
    if (!in_array_) return false;
    std::vector<size_t>& counts = in_array_->counts;
    if (counts.size() != in_array_->levels) {
      if (counts.empty()) fail_here("a number");
      fail_here("a number where an array belongs");
    }
    counts.back()++;
    in_array_->values.push_back(static_cast<float>(v));
    return true;
  }
  bool attention_close() {
    std::vector<size_t>& counts = in_array_->counts;
    std::vector<size_t>& shape = in_array_->shape;
    const bool weights = in_array_->levels == 4;
    const size_t level = counts.size() - 1, found = counts.back();
    static const char* const kWeights[4] = {"layers", "heads", "rows (one per query token)",
                                            "numbers (one per key token)"};
    static const char* const kNorms[3] = {"layers", "heads", "numbers (one per key token)"};
    if (shape.size() < in_array_->levels)
      shape.assign(in_array_->levels, kUnknown);  // inner levels close first
    if (shape[level] == kUnknown) {
      shape[level] = found;
    } else if (shape[level] != found) {
      throw TraceError(name_ + ": key '" + attention_path() + "': expected " +
                       std::to_string(shape[level]) + " " +
                       (weights ? kWeights[level] : kNorms[level]) +
                       " (as the first one has), found " + std::to_string(found));
    }
    counts.pop_back();
    if (weights && level == 2) {  // a matrix closed: its rows all had shape[3] numbers
      const auto rows = static_cast<Eigen::Index>(found),
                 cols = static_cast<Eigen::Index>(found == 0 ? 0 : shape[3]);
      std::vector<Matrix>& matrices = in_array_->matrices;
      if (matrices.size() >= kMaxTraceMatrices)
        count_error(shape[0] == kUnknown ? counts[0] : shape[0], counts[1]);
      matrices.emplace_back(Eigen::Map<const Matrix>(in_array_->values.data(), rows, cols));
      in_array_->values.clear();
    }
    if (counts.empty()) in_array_ = nullptr;
    return true;
  }

  std::string name_;
  size_t depth_ = 0;  // object/array depth outside attention
  std::string current_key_, pending_key_;
  std::vector<json*> stack_;
  NestedNumbers* in_array_ = nullptr;  // attention or norms while its value streams in
  bool skipping_ = false;              // inside the value of a key no reader reads
  size_t skip_depth_ = 0;              // its open arrays and objects
  size_t kept_ = 0;                    // JSON values kept in `keys`
};

[[noreturn]] void bad(const std::string& name, const std::string& key, const std::string& expected,
                      const json& found) {
  // Never dump() an array or object: its serializer recurses, and a value nested 100,000 levels
  // deep (a safetensors trace's metadata) overflows the stack while this message is built.
  std::string shown;
  if (found.is_null())
    shown = "nothing";
  else if (found.is_array())
    shown = "an array of " + std::to_string(found.size()) + " values";
  else if (found.is_object())
    shown = "an object with " + std::to_string(found.size()) + " keys";
  else
    shown = found.dump(-1, ' ', false, json::error_handler_t::replace);
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  throw TraceError(name + ": key '" + key + "': expected " + expected + ", found " + shown);
}

int get_int(const json& obj, const std::string& key, const std::string& path,
            const std::string& name, bool required = true, int fallback = 0) {
  if (!obj.contains(key)) {
    if (!required) return fallback;
    bad(name, path + key, "an integer", json());
  }
  const json& v = obj[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < -1 || v.get<std::int64_t>() > (1 << 30))
    bad(name, path + key, "an integer", v);
  return v.get<int>();
}

std::string get_string(const json& obj, const std::string& key, const std::string& path,
                       const std::string& name, bool required = true) {
  if (!obj.contains(key)) {
    if (!required) return {};
    bad(name, path + key, "a string", json());
  }
  if (!obj[key].is_string()) bad(name, path + key, "a string", obj[key]);
  return obj[key].get<std::string>();
}

}  // namespace

// Shared with the safetensors reader, which keeps the same keys as JSON text in its metadata.
void read_trace_header(const std::map<std::string, json>& keys, const std::string& name,
                       AttentionTrace& trace, std::vector<int>* selected_layers) {
  auto find = [&](const std::string& k) -> const json* {
    auto it = keys.find(k);
    return it == keys.end() ? nullptr : &it->second;
  };
  const json* format = find("format");
  if (!format || *format != "attnscope-trace/1")
    bad(name, "format", "\"attnscope-trace/1\"", format ? *format : json());
  const json* model = find("model");
  if (!model || !model->is_object()) bad(name, "model", "an object", model ? *model : json());
  trace.model.name = get_string(*model, "name", "model.", name, false);
  trace.model.kind = get_string(*model, "kind", "model.", name, false);
  trace.model.layers = get_int(*model, "layers", "model.", name);
  trace.model.heads = get_int(*model, "heads", "model.", name);
  // An encoder–decoder's decoder (checked against "decoder" by validate_decoder).
  trace.model.decoder_layers = get_int(*model, "decoder_layers", "model.", name, false, 0);
  trace.model.decoder_heads = get_int(*model, "decoder_heads", "model.", name, false, 0);
  if (model->contains("options") && (*model)["options"].is_object())
    trace.model.options = (*model)["options"];
  if (const json* b = find("backend"); b && b->is_string()) trace.backend = b->get<std::string>();
  const json* text = find("text");
  if (text && !text->is_string()) bad(name, "text", "a string", *text);
  if (text) trace.text = text->get<std::string>();
  const json* tokens = find("tokens");
  if (!tokens || !tokens->is_array()) bad(name, "tokens", "an array", tokens ? *tokens : json());
  trace.tokens.reserve(tokens->size());
  for (size_t i = 0; i < tokens->size(); ++i) {
    const json& t = (*tokens)[i];
    const std::string path = "tokens[" + std::to_string(i) + "].";
    if (!t.is_object()) bad(name, path.substr(0, path.size() - 1), "a token object", t);
    Token tok;
    tok.text = get_string(t, "text", path, name);
    tok.id = get_int(t, "id", path, name, false, -1);
    tok.start = get_int(t, "start", path, name, false, -1);
    tok.end = get_int(t, "end", path, name, false, -1);
    tok.special = t.contains("special") && t["special"] == true;
    tok.unknown = t.contains("unknown") && t["unknown"] == true;
    trace.tokens.push_back(std::move(tok));
  }
  // How the pieces encode text (labels decode them); a trace from before the key: a guess.
  const json* pieces = find("pieces");
  if (!pieces) {
    trace.model.pieces = guess_piece_encoding(trace.tokens);
  } else if (const auto e = pieces->is_string() ? parse_piece_encoding(pieces->get<std::string>())
                                                : std::nullopt) {
    trace.model.pieces = *e;
  } else {
    bad(name, "pieces", "\"plain\", \"byte_level\" or \"sentencepiece\"", *pieces);
  }
  if (const json* cut = find("truncated_at_byte"); cut) {
    if (!cut->is_number_integer() || cut->get<std::int64_t>() < 0 ||
        cut->get<std::uint64_t>() > trace.text.size())
      bad(name, "truncated_at_byte", "a byte offset inside the text", *cut);
    trace.truncated_at_byte = cut->get<int>();
  }
  // Where the weights came from (GGUF models): {"format", "file_type"}, both strings.
  if (const json* src = find("source"); src) {
    if (!src->is_object() || !src->contains("format") || !(*src)["format"].is_string() ||
        (src->contains("file_type") && !(*src)["file_type"].is_string()))
      bad(name, "source", "an object {\"format\": string, \"file_type\": string}", *src);
    trace.model.source.format = (*src)["format"].get<std::string>();
    if (src->contains("file_type"))
      trace.model.source.file_type = (*src)["file_type"].get<std::string>();
  }
  // How "attention" is weighted; absent means raw.
  if (const json* w = find("weighting"); w) {
    if (!w->is_string() || (*w != "raw" && *w != "value-norm"))
      bad(name, "weighting", "\"raw\" or \"value-norm\"", *w);
    trace.weighting = w->get<std::string>();
  }
  if (const json* sel = find("selection"); sel && selected_layers) {
    for (const char* part : {"layers", "heads"}) {
      const int declared = std::string(part) == "layers" ? trace.model.layers : trace.model.heads;
      if (!sel->is_object() || !sel->contains(part) || !(*sel)[part].is_array())
        bad(name, std::string("selection.") + part, "an array of indices", *sel);
      for (const json& i : (*sel)[part])
        if (!i.is_number_integer() || i.get<std::int64_t>() < 0 ||
            i.get<std::int64_t>() >= declared)
          bad(name, std::string("selection.") + part,
              "indices below model." + std::string(part) + " (" + std::to_string(declared) + ")",
              i);
    }
    // What the file holds is the selection: the views see that many layers and heads.
    trace.model.layers = static_cast<int>((*sel)["layers"].size());
    trace.model.heads = static_cast<int>((*sel)["heads"].size());
    for (const json& i : (*sel)["layers"]) selected_layers->push_back(i.get<int>());
  }
}

// value_norms [layers][heads][n] from `count` floats of that shape (layers and heads as the
// attention has them).
void fill_value_norms(AttentionTrace& trace, const float* flat, size_t count,
                      const std::vector<size_t>& shape, const std::string& name) {
  const size_t layers = trace.attention.size(),
               heads = trace.attention.empty() ? 0 : trace.attention[0].size(),
               n = trace.tokens.size();
  if (shape.size() != 3 || shape[0] != layers || shape[1] != heads || shape[2] != n ||
      count != layers * heads * n) {
    std::string found;
    for (size_t d : shape) found += (found.empty() ? "" : " x ") + std::to_string(d);
    throw TraceError(name + ": key 'value_norms': expected " + std::to_string(layers) +
                     " layers x " + std::to_string(heads) + " heads x " + std::to_string(n) +
                     " keys (as 'attention' has), found " + (found.empty() ? "none" : found));
  }
  trace.value_norms.assign(layers, std::vector<RowVector>(heads));
  for (size_t l = 0; l < layers; ++l)
    for (size_t h = 0; h < heads; ++h)
      trace.value_norms[l][h] =
          Eigen::Map<const RowVector>(flat + (l * heads + h) * n, static_cast<Eigen::Index>(n));
}

// Moves the flat weights into trace.attention ([layers][heads] of n x n matrices).
void fill_attention(AttentionTrace& trace, const float* flat, size_t count,
                    const std::vector<size_t>& shape, const std::string& name) {
  if (shape.size() != 4)
    throw TraceError(name +
                     ": key 'attention': expected 4 nested arrays [layer][head][query][key], "
                     "found " +
                     std::to_string(shape.size()) + " levels");
  const size_t n = trace.tokens.size();
  if (shape[2] != n || shape[3] != n)
    throw TraceError(name + ": key 'attention': expected " + std::to_string(n) + "x" +
                     std::to_string(n) + " matrices (one row and column per token; 'tokens' has " +
                     std::to_string(n) + "), found " + std::to_string(shape[2]) + "x" +
                     std::to_string(shape[3]));
  const size_t block = n * n;
  if (shape[0] * shape[1] * block != count)
    throw TraceError(name + ": key 'attention': its arrays are not all the same shape");
  trace.attention.assign(shape[0], std::vector<Matrix>(shape[1]));
  for (size_t l = 0; l < shape[0]; ++l)
    for (size_t h = 0; h < shape[1]; ++h)
      trace.attention[l][h] =
          Eigen::Map<const Matrix>(flat + (l * shape[1] + h) * block, static_cast<Eigen::Index>(n),
                                   static_cast<Eigen::Index>(n));
}

AttentionTrace read_trace_json(std::istream& in, const std::string& name) {
  TraceSax sax(name);
  try {
    json::sax_parse(in, &sax, nlohmann::detail::input_format_t::json, true);
  } catch (const TraceError&) {
    throw;
  } catch (const std::exception& e) {
    throw TraceError(name + ": " + e.what());
  }
  AttentionTrace trace;
  std::vector<int> selected;
  read_trace_header(sax.keys, name, trace, &selected);
  std::shared_ptr<DecoderTrace> decoder;
  if (const auto it = sax.keys.find("decoder"); it != sax.keys.end()) {
    decoder = std::make_shared<DecoderTrace>();
    read_decoder_header(it->second, name, trace, *decoder);  // before the shapes refer to it
  }
  if (!sax.attention.seen)
    throw TraceError(name +
                     ": key 'attention': expected 4 nested arrays, "
                     "found nothing");
  const std::vector<size_t>& shape = sax.attention.shape;
  // A level no array of which closed lies below an empty one: attention: [] or [[]].
  for (size_t d : shape)
    if (d == TraceSax::kUnknown || d == 0)
      throw TraceError(name +
                       ": key 'attention': expected at least one layer, head and token, "
                       "found an empty array");
  const size_t n = trace.tokens.size();
  if (shape[2] != n || shape[3] != n)
    fill_attention(trace, nullptr, 0, shape, name);  // throws the shape error
  std::vector<Matrix>& matrices = sax.attention.matrices;
  if (matrices.size() != shape[0] * shape[1])
    throw TraceError(name + ": key 'attention': its arrays are not all the same shape");
  trace.attention.assign(shape[0], std::vector<Matrix>(shape[1]));
  for (size_t k = 0; k < matrices.size(); ++k)
    trace.attention[k / shape[1]][k % shape[1]] = std::move(matrices[k]);
  if (sax.norms.seen) {
    std::vector<size_t> norm_shape = sax.norms.shape;
    for (size_t& d : norm_shape)
      if (d == TraceSax::kUnknown) d = 0;  // below an empty array: nothing there
    fill_value_norms(trace, sax.norms.values.data(), sax.norms.values.size(), norm_shape, name);
  }
  if (decoder) {
    for (NestedNumbers* part : {&sax.decoder_self, &sax.decoder_cross}) {
      if (!part->seen)
        throw TraceError(name + ": key '" + part->key + "': expected 4 nested arrays " +
                         part->layout + ", found nothing");
      std::vector<size_t> part_shape = part->shape;
      for (size_t& d : part_shape)
        if (d == TraceSax::kUnknown) d = 0;  // below an empty array: nothing there
      fill_decoder_matrices(
          part->key, std::move(part->matrices), part_shape, name,
          part == &sax.decoder_self ? decoder->attention : decoder->cross_attention);
    }
    trace.decoder = std::move(decoder);
    trace.model.capabilities.cross_attention = true;
  }
  validate_trace(trace, name);
  return trace;
}

AttentionTrace read_trace_file(const std::filesystem::path& path) {
  // Asked before any stream opens the path: opening a FIFO waits for a writer forever, and a
  // device never ends. Every way a trace is read (view, render/heads --trace, a session's trace:
  // model, a dropped file) comes through here.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw TraceError(path.string() + ": is a folder, expected a trace file (.json, .safetensors)");
  if (const std::string problem = regular_file_problem(path); !problem.empty())
    throw TraceError(path.string() + ": " + problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path.string() + ": cannot open the file");
  // JSON starts with '{' (after any whitespace); a safetensors file with its 8-byte length.
  char first = 0;
  while (in.get(first) && (first == ' ' || first == '\n' || first == '\r' || first == '\t')) {
  }
  if (!in) throw TraceError(path.string() + ": the file is empty");
  if (first == '{' || first == '[' || first == '"') {
    in.seekg(0);
    return read_trace_json(in, path.string());
  }
  in.close();
  return read_trace_safetensors(path);
}

}  // namespace attnscope

// The decoder side of an encoder–decoder trace, read back (decoder_io.h): header, matrices and
// the checks. Messages name the key path, as the encoder's do: "decoder.cross_attention[1][0][3]".
#include <cmath>

#include "core/trace/decoder_io.h"
#include "core/trace/trace_reader.h"

namespace attnscope {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& name, const std::string& key, const std::string& what) {
  throw TraceError(name + ": key '" + key + "': " + what);
}

// What a JSON value is, in words, for messages (never the value itself: it may be huge).
std::string shown(const json& v) {
  if (v.is_null()) return "nothing";
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " values";
  if (v.is_object()) return "an object with " + std::to_string(v.size()) + " keys";
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

int int_in(const json& obj, const char* key, const std::string& path, const std::string& name,
           int fallback) {
  if (!obj.contains(key)) return fallback;
  const json& v = obj[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < -1 || v.get<std::int64_t>() > (1 << 30))
    fail(name, path + key, "expected an integer, found " + shown(v));
  return v.get<int>();
}

Token read_token(const json& t, const std::string& path, const std::string& name) {
  if (!t.is_object()) fail(name, path, "expected a token object, found " + shown(t));
  Token tok;
  if (!t.contains("text") || !t["text"].is_string())
    fail(name, path + ".text", "expected a string, found " + shown(t.value("text", json())));
  tok.text = t["text"].get<std::string>();
  tok.id = int_in(t, "id", path + ".", name, -1);
  tok.start = int_in(t, "start", path + ".", name, -1);
  tok.end = int_in(t, "end", path + ".", name, -1);
  tok.special = t.contains("special") && t["special"] == true;
  tok.unknown = t.contains("unknown") && t["unknown"] == true;
  tok.generated = t.contains("generated") && t["generated"] == true;
  return tok;
}

std::vector<Prediction> read_predictions(const json& row, const std::string& path,
                                         const std::string& name) {
  if (!row.is_array()) fail(name, path, "expected an array of predictions, found " + shown(row));
  std::vector<Prediction> out;
  for (size_t k = 0; k < row.size(); ++k) {
    const json& p = row[k];
    const std::string at = path + "[" + std::to_string(k) + "]";
    if (!p.is_object() || !p.contains("probability") || !p["probability"].is_number())
      fail(name, at, "expected {\"id\", \"text\", \"probability\"}, found " + shown(p));
    Prediction pred;
    pred.id = int_in(p, "id", at + ".", name, -1);
    if (p.contains("text") && p["text"].is_string()) pred.text = p["text"].get<std::string>();
    pred.probability = p["probability"].get<float>();
    if (!std::isfinite(pred.probability) || pred.probability < 0.0f ||
        pred.probability > 1.0f + 1e-4f)
      fail(name, at + ".probability", "expected a probability in [0, 1], found " + shown(p));
    out.push_back(std::move(pred));
  }
  return out;
}

// decoder.selection: indices below the model's decoder_layers / decoder_heads; what the file holds
// is the selection, so the counts become its sizes.
void read_selection(const json& sel, const std::string& name, AttentionTrace& trace) {
  for (const char* part : {"layers", "heads"}) {
    const bool layers = std::string(part) == "layers";
    const int declared = layers ? trace.model.decoder_layers : trace.model.decoder_heads;
    const std::string key = std::string("decoder.selection.") + part;
    if (!sel.is_object() || !sel.contains(part) || !sel[part].is_array())
      fail(name, key, "expected an array of indices, found " + shown(sel.value(part, json())));
    for (const json& i : sel[part])
      if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() >= declared)
        fail(name, key,
             "expected indices below model.decoder_" + std::string(part) + " (" +
                 std::to_string(declared) + "), found " + shown(i));
    (layers ? trace.model.decoder_layers : trace.model.decoder_heads) =
        static_cast<int>(sel[part].size());
  }
}

// One matrix's values: finite weights in [0, 1], rows that sum to 1 (a fully masked row: all 0),
// and for causal self-attention nothing above the diagonal.
void check_matrix(const Matrix& w, bool causal, const std::string& key, const std::string& name) {
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    double sum = 0.0;
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      const float v = w(i, j);
      const std::string at = key + "[" + std::to_string(i) + "][" + std::to_string(j) + "]";
      if (!std::isfinite(v) || v < 0.0f || v > 1.0f + 1e-4f)
        fail(name, at,
             "expected a weight in [0, 1], found " +
                 (std::isfinite(v) ? std::to_string(v)
                                   : std::string(std::isnan(v) ? "NaN" : "infinity")));
      if (causal && j > i && v != 0.0f)
        fail(name, at,
             "expected 0 above the diagonal (the decoder's self-attention is causal: query " +
                 std::to_string(i) + " cannot see the later token " + std::to_string(j) +
                 "), found " + std::to_string(v));
      sum += v;
    }
    if (sum != 0.0 && std::abs(sum - 1.0) > kRowSumTolerance)
      fail(name, key + "[" + std::to_string(i) + "]",
           "expected a row that sums to 1 (within " + std::to_string(kRowSumTolerance) +
               "), found a sum of " + std::to_string(sum));
  }
}

void check_part(const std::vector<std::vector<Matrix>>& part, const std::string& key,
                Eigen::Index rows, Eigen::Index cols, const std::string& cols_are, bool causal,
                const AttentionTrace& trace, const std::string& name) {
  const DecoderTrace& d = *trace.decoder;
  if (static_cast<int>(part.size()) != trace.model.decoder_layers)
    fail(name, key,
         "expected " + std::to_string(trace.model.decoder_layers) +
             " layers (model.decoder_layers), found " + std::to_string(part.size()));
  for (size_t l = 0; l < part.size(); ++l) {
    const std::string lkey = key + "[" + std::to_string(l) + "]";
    if (static_cast<int>(part[l].size()) != trace.model.decoder_heads)
      fail(name, lkey,
           "expected " + std::to_string(trace.model.decoder_heads) +
               " heads (model.decoder_heads), found " + std::to_string(part[l].size()));
    for (size_t h = 0; h < part[l].size(); ++h) {
      const Matrix& w = part[l][h];
      const std::string hkey = lkey + "[" + std::to_string(h) + "]";
      if (w.rows() != rows || w.cols() != cols)
        fail(name, hkey,
             "expected a " + std::to_string(rows) + "x" + std::to_string(cols) +
                 " matrix (a row per decoder token, a column per " + cols_are + "; " +
                 std::to_string(d.tokens.size()) + " decoder and " +
                 std::to_string(trace.tokens.size()) + " encoder tokens), found " +
                 std::to_string(w.rows()) + "x" + std::to_string(w.cols()));
      check_matrix(w, causal, hkey, name);
    }
  }
}

}  // namespace

void read_decoder_header(const json& decoder, const std::string& name, AttentionTrace& trace,
                         DecoderTrace& out) {
  if (!decoder.is_object()) fail(name, "decoder", "expected an object, found " + shown(decoder));
  if (trace.tokens.empty())
    fail(name, "tokens",
         "expected the encoder's tokens (the source sentence) beside 'decoder', found none");
  if (trace.model.decoder_layers <= 0 || trace.model.decoder_heads <= 0)
    fail(name, "model",
         "expected decoder_layers and decoder_heads (at least 1) beside 'decoder', found " +
             std::to_string(trace.model.decoder_layers) + " and " +
             std::to_string(trace.model.decoder_heads));
  if (!decoder.contains("tokens") || !decoder["tokens"].is_array())
    fail(name, "decoder.tokens",
         "expected an array, found " + shown(decoder.value("tokens", json())));
  const json& tokens = decoder["tokens"];
  for (size_t i = 0; i < tokens.size(); ++i)
    out.tokens.push_back(read_token(tokens[i], "decoder.tokens[" + std::to_string(i) + "]", name));
  if (decoder.contains("selection")) read_selection(decoder["selection"], name, trace);
  if (decoder.contains("predictions")) {
    const json& all = decoder["predictions"];
    if (!all.is_array() || all.size() > out.tokens.size())
      fail(name, "decoder.predictions",
           "expected an array of at most one list per decoder token (" +
               std::to_string(out.tokens.size()) + "), found " + shown(all));
    for (size_t i = 0; i < all.size(); ++i)
      out.predictions.push_back(
          read_predictions(all[i], "decoder.predictions[" + std::to_string(i) + "]", name));
  }
}

void fill_decoder_matrices(const std::string& key, std::vector<Matrix> matrices,
                           const std::vector<size_t>& shape, const std::string& name,
                           std::vector<std::vector<Matrix>>& out) {
  if (shape.size() != 4)
    fail(name, key,
         "expected 4 nested arrays [layer][head][query][key], found " +
             std::to_string(shape.size()) + " levels");
  check_trace_counts(shape[0], shape[1], name);
  if (matrices.size() != shape[0] * shape[1])
    fail(name, key, "its arrays are not all the same shape");
  out.assign(shape[0], std::vector<Matrix>(shape[1]));
  for (size_t k = 0; k < matrices.size(); ++k)
    out[k / shape[1]][k % shape[1]] = std::move(matrices[k]);
}

void validate_decoder(const AttentionTrace& trace, const std::string& name) {
  const DecoderTrace& d = *trace.decoder;
  const auto t = static_cast<Eigen::Index>(d.tokens.size());
  const auto s = static_cast<Eigen::Index>(trace.tokens.size());
  if (s == 0)
    fail(name, "tokens",
         "expected the encoder's tokens (the source sentence) beside 'decoder', found none");
  if (t == 0)
    fail(name, "decoder.tokens",
         "expected at least one token (the decoder start token first), found none");
  check_part(d.attention, "decoder.attention", t, t, "decoder token", true, trace, name);
  check_part(d.cross_attention, "decoder.cross_attention", t, s, "encoder token", false, trace,
             name);
  for (size_t i = 0; i < d.tokens.size(); ++i) {
    const Token& tok = d.tokens[i];
    if (!(tok.start == -1 && tok.end == -1) && !(tok.start >= 0 && tok.start <= tok.end))
      fail(name, "decoder.tokens[" + std::to_string(i) + "]",
           "expected 0 <= start <= end or -1, -1, found " + std::to_string(tok.start) + ", " +
               std::to_string(tok.end));
  }
  if (d.predictions.size() > d.tokens.size())
    fail(name, "decoder.predictions",
         "expected at most one list per decoder token (" + std::to_string(d.tokens.size()) +
             "), found " + std::to_string(d.predictions.size()));
}

}  // namespace attnscope

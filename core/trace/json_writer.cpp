#include "core/trace/json_writer.h"

// ordered_json keeps the keys in the order of the contract ("format" first), which people read.

namespace attnscope {

namespace {
nlohmann::ordered_json token_json(const Token& t) {
  nlohmann::ordered_json j = {
      {"id", t.id}, {"text", t.text}, {"start", t.start}, {"end", t.end}, {"special", t.special}};
  if (t.unknown) j["unknown"] = true;
  if (t.generated) j["generated"] = true;
  return j;
}

nlohmann::ordered_json predictions_json(const std::vector<Prediction>& predictions) {
  nlohmann::ordered_json preds = nlohmann::ordered_json::array();
  for (const Prediction& p : predictions)
    preds.push_back({{"id", p.id}, {"text", p.text}, {"probability", p.probability}});
  return preds;
}
}  // namespace

nlohmann::ordered_json tokens_to_json(const Tokens& tokens, bool include_special) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const Token& t : tokens)
    if (include_special || !t.special) arr.push_back(token_json(t));
  return arr;
}

nlohmann::ordered_json trace_to_json(const AttentionTrace& trace) {
  nlohmann::ordered_json model = {{"name", trace.model.name},
                                  {"kind", trace.model.kind},
                                  {"layers", trace.layers()},
                                  {"heads", trace.heads()}};
  if (trace.model.kv_heads > 0) model["kv_heads"] = trace.model.kv_heads;
  if (!trace.model.options.empty()) model["options"] = trace.model.options;
  nlohmann::ordered_json attention = nlohmann::ordered_json::array();
  for (const auto& layer : trace.attention) {
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const Matrix& w : layer) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (Eigen::Index i = 0; i < w.rows(); ++i) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array();
        for (Eigen::Index j = 0; j < w.cols(); ++j) row.push_back(w(i, j));
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    attention.push_back(std::move(heads));
  }
  nlohmann::ordered_json doc = {{"format", "attnscope-trace/1"},
                                {"model", model},
                                {"backend", trace.backend},
                                {"text", trace.text},
                                {"tokens", tokens_to_json(trace.tokens, true)},
                                {"attention", std::move(attention)}};
  if (trace.truncated_at_byte >= 0) doc["truncated_at_byte"] = trace.truncated_at_byte;
  if (!trace.predictions.empty()) doc["predictions"] = predictions_json(trace.predictions);
  // A generated token carries the distribution it was chosen from.
  for (std::size_t i = 0; i < trace.token_predictions.size() && i < trace.tokens.size(); ++i)
    if (!trace.token_predictions[i].empty())
      doc["tokens"][i]["predictions"] = predictions_json(trace.token_predictions[i]);
  return doc;
}

void write_trace_json(const AttentionTrace& trace, std::ostream& out) {
  // Invalid UTF-8 in user text must not throw while writing: replace it.
  out << trace_to_json(trace).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
      << '\n';
}

}  // namespace attnscope

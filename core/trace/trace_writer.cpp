// The registration list of trace formats, and the JSON fragments several of them share.
#include "core/trace/trace_writer.h"

#include <nlohmann/json.hpp>

#include "core/trace/json_writer.h"
#include "core/util/error.h"

namespace attnscope {

const std::vector<TraceWriter>& trace_writers() {
  static const std::vector<TraceWriter> all = {make_json_writer(), make_npy_writer(),
                                               make_csv_writer(), make_safetensors_writer()};
  return all;
}

const TraceWriter& trace_writer(const std::string& format) {
  std::string known;
  for (const TraceWriter& w : trace_writers()) {
    if (w.format == format) return w;
    known += (known.empty() ? "" : ", ") + w.format;
  }
  throw UsageError("unknown export format '" + format + "' (known: " + known + ")");
}

namespace {
std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}
}  // namespace

std::string model_json(const AttentionTrace& trace) {
  nlohmann::ordered_json model = {{"name", trace.model.name},
                                  {"kind", trace.model.kind},
                                  {"layers", trace.layers()},
                                  {"heads", trace.heads()}};
  if (trace.model.kv_heads > 0) model["kv_heads"] = trace.model.kv_heads;
  if (trace.decoder) {  // an encoder–decoder: layers/heads above are the encoder's
    model["decoder_layers"] = trace.decoder->layers();
    model["decoder_heads"] = trace.decoder->heads();
  }
  if (!trace.model.options.empty()) model["options"] = trace.model.options;
  return dump(model);
}

std::string source_json(const ModelSource& source) {
  return dump(nlohmann::ordered_json{{"format", source.format}, {"file_type", source.file_type}});
}

std::string tokens_json(const Tokens& tokens) {
  return dump(tokens_to_json(tokens, true));
}

std::string json_string(const std::string& s) {
  return dump(nlohmann::ordered_json(s));
}

std::string selection_json(const TraceSlice& slice) {
  return dump(nlohmann::ordered_json{{"layers", slice.layers}, {"heads", slice.heads}});
}

}  // namespace attnscope

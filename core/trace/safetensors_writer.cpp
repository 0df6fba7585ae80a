// safetensors: one F32 tensor "attention" [layers, heads, n, n] (and "value_norms" [layers, heads,
// n] when the model gave them); the model, backend, text, tokens, selection and weighting as
// __metadata__ strings (safetensors allows only string values there, so the structured ones hold
// JSON text, as the JSON trace writes them).
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/trace/trace_writer.h"

namespace attnscope {

namespace {
void write_safetensors(const TraceSlice& slice, ExportTarget& target) {
  const AttentionTrace& trace = *slice.trace;
  const std::uint64_t n = static_cast<std::uint64_t>(slice.tokens());
  const std::uint64_t count = slice.layers.size() * slice.heads.size() * n * n;
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "attnscope-trace/1"},
                            {"model", model_json(trace)},
                            {"backend", trace.backend},
                            {"text", trace.text},
                            {"tokens", tokens_json(trace.tokens)},
                            {"selection", selection_json(slice)}};
  if (trace.model.pieces != PieceEncoding::kPlain)
    header["__metadata__"]["pieces"] = piece_encoding_name(trace.model.pieces);
  if (trace.truncated_at_byte >= 0)
    header["__metadata__"]["truncated_at_byte"] = std::to_string(trace.truncated_at_byte);
  if (trace.weighting != "raw") header["__metadata__"]["weighting"] = trace.weighting;
  header["attention"] = {{"dtype", "F32"},
                         {"shape", {slice.layers.size(), slice.heads.size(), n, n}},
                         {"data_offsets", {0, count * sizeof(float)}}};
  const bool norms = !trace.value_norms.empty();
  const std::uint64_t norm_count = slice.layers.size() * slice.heads.size() * n;
  if (norms)
    header["value_norms"] = {
        {"dtype", "F32"},
        {"shape", {slice.layers.size(), slice.heads.size(), n}},
        {"data_offsets", {count * sizeof(float), (count + norm_count) * sizeof(float)}}};
  std::string text = header.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  const std::uint64_t len = text.size();
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(len >> (8 * i));
  target.out.write(reinterpret_cast<const char*>(prefix), 8);
  target.out << text;
  for (size_t l = 0; l < slice.layers.size(); ++l)
    for (size_t h = 0; h < slice.heads.size(); ++h) {
      const std::shared_ptr<const Matrix> held =
          slice.matrix(static_cast<int>(l), static_cast<int>(h));
      const Matrix& w = *held;
      target.out.write(reinterpret_cast<const char*>(w.data()),
                       static_cast<std::streamsize>(w.size() * sizeof(float)));
    }
  if (norms)
    for (int l : slice.layers)
      for (int h : slice.heads) {
        const RowVector& v = trace.value_norms[static_cast<size_t>(l)][static_cast<size_t>(h)];
        target.out.write(reinterpret_cast<const char*>(v.data()),
                         static_cast<std::streamsize>(v.size() * sizeof(float)));
      }
}
}  // namespace

TraceWriter make_safetensors_writer() {
  return {"safetensors",
          "F32 tensor \"attention\" [layers, heads, n, n], tokens and model as __metadata__",
          write_safetensors, nullptr, false};
}

}  // namespace attnscope

// safetensors: one F32 tensor "attention" [layers, heads, n, n] (and "value_norms" [layers, heads,
// n] when the model gave them); the model, backend, text, tokens, selection and weighting as
// __metadata__ strings (safetensors allows only string values there, so the structured ones hold
// JSON text, as the JSON trace writes them). An encoder–decoder's trace adds the F32 tensors
// "decoder.attention" [layers, heads, t, t] and "decoder.cross_attention" [layers, heads, t, n]
// (t decoder tokens, n encoder tokens) and a "decoder" metadata string: the JSON object
// {"tokens", "selection" (when partial), "predictions" (when present)} of the JSON trace's
// "decoder" without its matrices.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/trace/trace_writer.h"

namespace attnscope {

namespace {
// The decoder's tensors after the encoder's (at byte `offset`), and its metadata.
void add_decoder_header(const TraceSlice& slice, std::uint64_t offset,
                        nlohmann::ordered_json& header) {
  const DecoderTrace& d = *slice.trace->decoder;
  nlohmann::ordered_json meta = {{"tokens", nlohmann::ordered_json::parse(tokens_json(d.tokens))}};
  if (slice.partial())
    meta["selection"] = {{"layers", slice.decoder_layers}, {"heads", slice.decoder_heads}};
  if (!d.predictions.empty()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const std::vector<Prediction>& row : d.predictions) {
      nlohmann::ordered_json preds = nlohmann::ordered_json::array();
      for (const Prediction& p : row)
        preds.push_back({{"id", p.id}, {"text", p.text}, {"probability", p.probability}});
      all.push_back(std::move(preds));
    }
    meta["predictions"] = std::move(all);
  }
  header["__metadata__"]["decoder"] =
      meta.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  // The shapes the matrices have (a valid trace's: t x t and t x n).
  const bool any = !slice.decoder_layers.empty() && !slice.decoder_heads.empty();
  const std::uint64_t t =
      any ? static_cast<std::uint64_t>(slice.decoder_attention(0, 0).rows()) : d.tokens.size();
  const std::uint64_t n = any ? static_cast<std::uint64_t>(slice.cross_attention(0, 0).cols())
                              : static_cast<std::uint64_t>(slice.tokens());
  const std::uint64_t matrices = slice.decoder_layers.size() * slice.decoder_heads.size();
  const std::uint64_t self_bytes = matrices * t * t * sizeof(float);
  header["decoder.attention"] = {
      {"dtype", "F32"},
      {"shape", {slice.decoder_layers.size(), slice.decoder_heads.size(), t, t}},
      {"data_offsets", {offset, offset + self_bytes}}};
  header["decoder.cross_attention"] = {
      {"dtype", "F32"},
      {"shape", {slice.decoder_layers.size(), slice.decoder_heads.size(), t, n}},
      {"data_offsets", {offset + self_bytes, offset + self_bytes + matrices * t * n * 4}}};
}

void write_decoder_data(const TraceSlice& slice, std::ostream& out) {
  for (const bool cross : {false, true})
    for (size_t l = 0; l < slice.decoder_layers.size(); ++l)
      for (size_t h = 0; h < slice.decoder_heads.size(); ++h) {
        const int li = static_cast<int>(l), hi = static_cast<int>(h);
        const Matrix& w = cross ? slice.cross_attention(li, hi) : slice.decoder_attention(li, hi);
        out.write(reinterpret_cast<const char*>(w.data()),
                  static_cast<std::streamsize>(w.size() * sizeof(float)));
      }
}

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
  if (!trace.model.source.empty())
    header["__metadata__"]["source"] = source_json(trace.model.source);
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
  if (trace.decoder)
    add_decoder_header(slice, (count + (norms ? norm_count : 0)) * sizeof(float), header);
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
  if (trace.decoder) write_decoder_data(slice, target.out);
}
}  // namespace

TraceWriter make_safetensors_writer() {
  return {"safetensors",
          "F32 tensor \"attention\" [layers, heads, n, n], tokens and model as __metadata__; "
          "an encoder-decoder adds \"decoder.attention\" [layers, heads, t, t] and "
          "\"decoder.cross_attention\" [layers, heads, t, n]",
          write_safetensors, nullptr, false};
}

}  // namespace attnscope

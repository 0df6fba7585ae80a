// NumPy .npy (format version 1.0): attention as float32 [layers, heads, n, n], little-endian
// ('<f4'), C order; the tokens and model go to a JSON sidecar, attention.npy ->
// attention.tokens.json, since .npy holds one array and nothing else.
#include <bit>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/trace/trace_writer.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
static_assert(std::endian::native == std::endian::little,
              "the .npy and safetensors writers write the host's floats as little-endian");

// The .npy header of a float32 C-order array of `shape`, with the preamble.
void write_npy_header(const std::vector<size_t>& shape, std::ostream& out) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t d = 0; d < shape.size(); ++d)
    header += (d > 0 ? ", " : "") + std::to_string(shape[d]);
  header += "), }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces and ended by '\n' so
  // that the data starts at a multiple of 64 bytes, as numpy itself writes it.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 65535) throw Error("npy header too long");
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  const unsigned char preamble[10] = {0x93,
                                      'N',
                                      'U',
                                      'M',
                                      'P',
                                      'Y',
                                      1,
                                      0,
                                      static_cast<unsigned char>(len & 0xff),
                                      static_cast<unsigned char>(len >> 8)};
  out.write(reinterpret_cast<const char*>(preamble), sizeof preamble);
  out << header;
}

// An encoder–decoder's decoder self-attention [layers, heads, t, t] or cross-attention [layers,
// heads, t, n] of the slice's decoder layers and heads, as one .npy.
void write_decoder_npy(const TraceSlice& slice, bool cross, std::ostream& out) {
  const size_t t = slice.trace->decoder->tokens.size();
  const size_t cols = cross ? static_cast<size_t>(slice.tokens()) : t;
  write_npy_header({slice.decoder_layers.size(), slice.decoder_heads.size(), t, cols}, out);
  for (size_t l = 0; l < slice.decoder_layers.size(); ++l)
    for (size_t h = 0; h < slice.decoder_heads.size(); ++h) {
      const int li = static_cast<int>(l), hi = static_cast<int>(h);
      const Matrix& w = cross ? slice.cross_attention(li, hi) : slice.decoder_attention(li, hi);
      out.write(reinterpret_cast<const char*>(w.data()),
                static_cast<std::streamsize>(w.size() * sizeof(float)));
    }
}

void write_npy(const TraceSlice& slice, ExportTarget& target) {
  const int n = slice.tokens();
  const auto un = static_cast<size_t>(n);
  write_npy_header({slice.layers.size(), slice.heads.size(), un, un}, target.out);
  for (size_t l = 0; l < slice.layers.size(); ++l)
    for (size_t h = 0; h < slice.heads.size(); ++h) {
      const std::shared_ptr<const Matrix> held =
          slice.matrix(static_cast<int>(l), static_cast<int>(h));
      const Matrix& w = *held;
      // Row-major storage is already the [n, n] C-order block.
      target.out.write(reinterpret_cast<const char*>(w.data()),
                       static_cast<std::streamsize>(w.size() * sizeof(float)));
    }

  const AttentionTrace& trace = *slice.trace;
  if (trace.decoder) {
    target.sidecar(".decoder_attention.npy",
                   [&](std::ostream& out) { write_decoder_npy(slice, false, out); });
    target.sidecar(".cross_attention.npy",
                   [&](std::ostream& out) { write_decoder_npy(slice, true, out); });
  }
  target.sidecar(".tokens.json", [&](std::ostream& out) {
    out << "{\"format\":\"attnscope-trace/1 tokens\",\"model\":" << model_json(trace);
    if (!trace.model.source.empty()) out << ",\"source\":" << source_json(trace.model.source);
    out << ",\"backend\":" << json_string(trace.backend) << ",\"text\":" << json_string(trace.text)
        << ",\"tokens\":" << tokens_json(trace.tokens)
        << ",\"selection\":" << selection_json(slice);
    if (trace.weighting != "raw") out << ",\"weighting\":" << json_string(trace.weighting);
    if (trace.decoder)  // the decoder's tokens and which of its layers and heads the sidecars hold
      out << ",\"decoder\":{\"tokens\":" << tokens_json(trace.decoder->tokens)
          << ",\"layers\":" << nlohmann::json(slice.decoder_layers).dump()
          << ",\"heads\":" << nlohmann::json(slice.decoder_heads).dump() << '}';
    out << ",\"shape\":[" << slice.layers.size() << ',' << slice.heads.size() << ',' << n << ','
        << n << "]}\n";
  });
}
}  // namespace

TraceWriter make_npy_writer() {
  return {"npy",
          "NumPy float32 [layers, heads, n, n]; tokens in FILE.tokens.json beside it (FILE "
          "without .npy); an encoder-decoder adds FILE.decoder_attention.npy [layers, heads, t, t] "
          "and FILE.cross_attention.npy [layers, heads, t, n]",
          write_npy, nullptr, true};
}

}  // namespace attnscope

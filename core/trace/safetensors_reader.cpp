// Reading the safetensors trace of `export --format safetensors`: the header is validated by
// SafetensorsFile (offsets inside the file, dtype x shape = byte length) before any data is
// touched, so a declared shape can never make us allocate more than the file holds.
#include <cstdint>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/model/hf/safetensors.h"
#include "core/trace/decoder_io.h"
#include "core/trace/trace_reader.h"

namespace attnscope {

void read_trace_header(const std::map<std::string, nlohmann::json>& keys, const std::string& name,
                       AttentionTrace& trace, std::vector<int>* selected_layers);
void fill_attention(AttentionTrace& trace, const float* flat, size_t count,
                    const std::vector<size_t>& shape, const std::string& name);
void fill_value_norms(AttentionTrace& trace, const float* flat, size_t count,
                      const std::vector<size_t>& shape, const std::string& name);

namespace {
// "decoder.attention" / "decoder.cross_attention" [layers, heads, rows, cols] into out[l][h]
// (shapes against the tokens are validate_decoder's; the offsets were checked by SafetensorsFile,
// so the data is what the file holds).
void read_decoder_tensor(const SafetensorsFile& file, const std::string& part,
                         const std::string& name, std::vector<std::vector<Matrix>>& out) {
  const std::string key = "decoder." + part;
  if (!file.has(key)) throw TraceError(name + ": key '" + key + "': expected a tensor, found none");
  const TensorInfo& info = file.tensors().at(key);
  if (info.shape.size() != 4)
    throw TraceError(name + ": key '" + key + "': expected shape [layers, heads, rows, cols], " +
                     "found " + std::to_string(info.shape.size()) + " dimensions");
  const std::vector<size_t> shape(info.shape.begin(), info.shape.end());
  check_trace_counts(shape[0], shape[1], name);  // before a Matrix is made per layer and head
  const Matrix all = [&] {
    try {
      return file.matrix(key);
    } catch (const Error& e) {
      throw TraceError(e.what());
    }
  }();
  const auto rows = static_cast<Eigen::Index>(shape[2]), cols = static_cast<Eigen::Index>(shape[3]);
  std::vector<Matrix> matrices(shape[0] * shape[1]);
  for (size_t k = 0; k < matrices.size(); ++k)
    matrices[k] = Eigen::Map<const Matrix>(all.data() + k * rows * cols, rows, cols);
  fill_decoder_matrices(key, std::move(matrices), shape, name, out);
}
}  // namespace

AttentionTrace read_trace_safetensors(const std::filesystem::path& path) {
  const std::string name = path.string();
  SafetensorsFile file = [&] {
    try {
      return SafetensorsFile::open(path);
    } catch (const Error& e) {
      throw TraceError(std::string(e.what()) +
                       " (expected an attnscope-trace/1 JSON or safetensors trace)");
    }
  }();
  // The metadata holds the JSON trace's keys: plain strings as they are, the rest as JSON text.
  std::map<std::string, nlohmann::json> keys;
  for (const auto& [key, value] : file.metadata()) {
    // The keys read_trace_header reads, as json_reader.cpp's known_key lists them.
    if (key != "model" && key != "tokens" && key != "truncated_at_byte" && key != "selection" &&
        key != "format" && key != "backend" && key != "text" && key != "pieces" &&
        key != "weighting" && key != "decoder" && key != "source")
      continue;  // readers ignore keys they do not know: never parsed
    if (key == "format" || key == "backend" || key == "text" || key == "pieces" ||
        key == "weighting") {
      keys[key] = value;
      continue;
    }
    // Nesting bounded as in the JSON reader: a deeper value would be copied and compared by
    // recursive code later. (A copy of the key: clang 14 cannot capture a structured binding.)
    const std::string& field = key;
    const auto bounded = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxTraceJsonDepth)
        throw TraceError(name + ": key '__metadata__." + field + "': nested deeper than " +
                         std::to_string(kMaxTraceJsonDepth) + " levels");
      return true;
    };
    try {
      keys[key] = nlohmann::json::parse(value, bounded);
    } catch (const nlohmann::json::exception&) {
      throw TraceError(name + ": key '__metadata__." + key + "': expected JSON text, found '" +
                       value.substr(0, 40) + "'");
    }
  }
  AttentionTrace trace;
  std::vector<int> selected;
  read_trace_header(keys, name, trace, &selected);
  std::shared_ptr<DecoderTrace> decoder;
  if (keys.count("decoder")) {
    decoder = std::make_shared<DecoderTrace>();
    read_decoder_header(keys.at("decoder"), name, trace, *decoder);
  }
  if (!file.has("attention"))
    throw TraceError(name + ": key 'attention': expected a tensor, found none");
  const TensorInfo& info = file.tensors().at("attention");
  if (info.shape.size() != 4)
    throw TraceError(name + ": key 'attention': expected shape [layers, heads, n, n], found " +
                     std::to_string(info.shape.size()) + " dimensions");
  std::vector<size_t> shape(info.shape.begin(), info.shape.end());
  check_trace_counts(shape[0], shape[1], name);  // before a Matrix is made per layer and head
  const size_t n = trace.tokens.size();
  if (info.dtype == "F32" && shape[2] == n && shape[3] == n) {
    // F32 (what attnscope writes): each matrix read straight from the file into its Matrix, so
    // memory stays at the size of the attention (the offsets were checked by SafetensorsFile).
    std::ifstream in(path, std::ios::binary);
    unsigned char prefix[8] = {};
    in.read(reinterpret_cast<char*>(prefix), 8);
    std::uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | prefix[i];
    in.seekg(static_cast<std::streamoff>(8 + header_len + info.begin));
    trace.attention.assign(shape[0], std::vector<Matrix>(shape[1]));
    for (auto& layer : trace.attention)
      for (Matrix& w : layer) {
        w.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
        in.read(reinterpret_cast<char*>(w.data()),
                static_cast<std::streamsize>(w.size() * sizeof(float)));
      }
    if (!in) throw TraceError(name + ": key 'attention': the file ends inside the tensor");
  } else {
    const Matrix all = [&] {
      try {
        return file.matrix("attention");
      } catch (const Error& e) {
        throw TraceError(e.what());
      }
    }();
    fill_attention(trace, all.data(), static_cast<size_t>(all.size()), shape, name);
  }
  // Optional: each key's ‖v_j·W_O,h‖ [layers, heads, n] (the offsets were checked by
  // SafetensorsFile, so its size is what the file holds).
  if (file.has("value_norms")) {
    const TensorInfo& norms = file.tensors().at("value_norms");
    const std::vector<size_t> norm_shape(norms.shape.begin(), norms.shape.end());
    if (norm_shape.size() != 3) fill_value_norms(trace, nullptr, 0, norm_shape, name);  // throws
    const Matrix flat = [&] {
      try {
        return file.matrix("value_norms");
      } catch (const Error& e) {
        throw TraceError(e.what());
      }
    }();
    fill_value_norms(trace, flat.data(), static_cast<size_t>(flat.size()), norm_shape, name);
  }
  if (decoder) {
    read_decoder_tensor(file, "attention", name, decoder->attention);
    read_decoder_tensor(file, "cross_attention", name, decoder->cross_attention);
    trace.decoder = std::move(decoder);
    trace.model.capabilities.cross_attention = true;
  }
  validate_trace(trace, name);
  return trace;
}

}  // namespace attnscope

#pragma once
// Reading a trace back (`attnscope view FILE`): an attnscope-trace/1 JSON or the safetensors trace
// that `export --format safetensors` writes. A trace file is untrusted input: the JSON is parsed
// as a stream (the attention goes straight into floats, never into a JSON document), nothing is
// allocated from a size the file declares, and the result is validated completely before anyone
// sees it: shapes against the tokens and the model, finite weights in [0, 1], rows that sum to 1.
#include <filesystem>
#include <istream>
#include <string>

#include "core/trace/trace.h"
#include "core/util/error.h"

namespace attnscope {

// "FILE: key 'attention[0][1][3]': expected 12 numbers (one per token), found 11".
struct TraceError : Error {
  using Error::Error;
};

inline constexpr double kRowSumTolerance = 1e-3;
// What a trace file may hold (real models have at most ~128 layers and ~128 heads): each matrix
// costs memory of its own whatever its size, so the count is bounded, not only the bytes. Nested
// JSON (a header key, a safetensors metadata value) is refused beyond kMaxTraceJsonDepth levels.
inline constexpr std::size_t kMaxTraceLayers = 1024, kMaxTraceHeads = 1024,
                             kMaxTraceMatrices = 1u << 16;
inline constexpr int kMaxTraceJsonDepth = 64;
// Throws TraceError when `layers` x `heads` exceeds the bounds above.
void check_trace_counts(std::size_t layers, std::size_t heads, const std::string& name);

// Chooses the reader by the file's first bytes ('{' JSON, else safetensors). Throws TraceError.
AttentionTrace read_trace_file(const std::filesystem::path& path);
// `name` is used in messages.
AttentionTrace read_trace_json(std::istream& in, const std::string& name);
AttentionTrace read_trace_safetensors(const std::filesystem::path& path);

// The checks every reader ends with (and a test can run on any trace). Throws TraceError.
void validate_trace(const AttentionTrace& trace, const std::string& name);

}  // namespace attnscope

// Fuzz target: the trace readers of `attnscope view FILE` (core/trace/trace_reader.h). The first
// byte picks the JSON stream reader or the safetensors reader; a trace that reads must pass the
// row check every consumer relies on (finite, in [0, 1], rows summing to 1).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "core/trace/trace_check.h"
#include "core/trace/trace_reader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attnscope;
  // The readers bound nesting themselves (kMaxTraceJsonDepth, in JSON and in safetensors
  // metadata) and counts of layers and heads (check_trace_counts); inputs are bounded here so each
  // run stays quick: a trace past 4 MB finds nothing a smaller one cannot.
  if (size == 0 || size > (4u << 20)) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    AttentionTrace trace;
    if (data[0] % 2 == 0) {
      std::istringstream in{std::string(rest)};
      trace = read_trace_json(in, "fuzz.json");
    } else {
      const auto path = fuzz::scratch_dir() / "trace.safetensors";
      fuzz::write_file(path, rest);
      trace = read_trace_safetensors(path);
    }
    try {
      check_attention_rows(trace, /*zero_rows_allowed=*/true);
    } catch (const ModelError&) {
      std::abort();  // the reader let through rows no view may see
    }
  } catch (const TraceError&) {
  } catch (const ModelError&) {
  }
  return 0;
}

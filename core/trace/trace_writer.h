#pragma once
// The trace exporters of `attnscope export --format F`: each streams a TraceSlice straight from the
// matrices to its output, so peak memory stays near the size of the trace itself (the old JSON
// writer built a document of ~2.4 GB for GPT-2 at 1024 tokens). A new format is one new file
// (core/trace/<format>_writer.cpp) plus a line in trace_writer.cpp.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/trace/trace_slice.h"

namespace attnscope {

// Where a writer puts its output: the main stream, and files beside it (npy's tokens sidecar).
struct ExportTarget {
  std::ostream& out;
  // Writes the file named like the main output with its extension replaced by `suffix`
  // (attention.npy -> attention.tokens.json). Throws Error when there is no main file (stdout).
  std::function<void(const std::string& suffix, const std::function<void(std::ostream&)>&)> sidecar;
};

struct TraceWriter {
  std::string format;       // "json", "npy", …: the --format value and the usual file extension
  std::string description;  // one line for --help
  std::function<void(const TraceSlice&, ExportTarget&)> write;
  // Throws UsageError when the slice does not fit the format (csv: one matrix only); called before
  // any file is opened. May be empty.
  std::function<void(const TraceSlice&)> check;
  bool writes_sidecar = false;  // needs a real output file (not stdout) to put the sidecar beside
};

// Every format, json first (the default).
const std::vector<TraceWriter>& trace_writers();
const TraceWriter& trace_writer(const std::string& format);  // throws UsageError

// Registered writers (one file each).
TraceWriter make_json_writer();
TraceWriter make_npy_writer();
TraceWriter make_csv_writer();
TraceWriter make_safetensors_writer();

// Shared by the writers: the model, text and token information as compact JSON, exactly as the
// JSON trace writes those keys (invalid UTF-8 replaced, never thrown).
std::string model_json(const AttentionTrace& trace);
std::string tokens_json(const Tokens& tokens);
// The trace's "source" object ({"format": "gguf", "file_type": "Q4_K_M"}); written only when the
// model has one (ModelSource::empty).
std::string source_json(const ModelSource& source);
std::string json_string(const std::string& s);
// The selection as {"layers":[…],"heads":[…]}.
std::string selection_json(const TraceSlice& slice);

}  // namespace attnscope

#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

#include "core/trace/trace.h"
#include "core/trace/trace_slice.h"

namespace attnscope {

// The `attnscope-trace/1` document of shared/DESIGN.md, streamed: the attention is written number
// by number from the matrices, never held as a JSON document (see trace_writer.h). The bytes are
// those nlohmann::json's dump() gives for the same document. A partial slice adds
// "selection": {"layers": […], "heads": […]} (the model's own indices of what "attention" holds).
void write_trace_json(const TraceSlice& slice, std::ostream& out);
void write_trace_json(const AttentionTrace& trace, std::ostream& out);

nlohmann::ordered_json tokens_to_json(const Tokens& tokens, bool include_special);

// Writes `value` as nlohmann::json writes a float it stores (as a double: shortest round trip,
// "1.0" for whole numbers, null for NaN and infinities) into `buf`; returns the end.
char* format_json_number(float value, char* buf);

}  // namespace attnscope

#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

#include "core/trace/trace.h"

namespace attnscope {

// The `attnscope-trace/1` document of shared/DESIGN.md.
nlohmann::ordered_json trace_to_json(const AttentionTrace& trace);
nlohmann::ordered_json tokens_to_json(const Tokens& tokens, bool include_special);
void write_trace_json(const AttentionTrace& trace, std::ostream& out);

}  // namespace attnscope

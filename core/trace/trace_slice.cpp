#include "core/trace/trace_slice.h"

#include <algorithm>
#include <charconv>

#include "core/util/error.h"

namespace attnscope {

namespace {
std::vector<int> all_indices(int count) {
  std::vector<int> v(static_cast<size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) v[i] = i;
  return v;
}

int parse_index(const std::string& part, const std::string& text, int count,
                const std::string& what) {
  int value = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty())
    throw UsageError(what + ": '" + part + "' is not an index or a range like 2-3");
  if (value < 0 || value >= count)
    throw UsageError(what + ": " + std::to_string(value) + " is out of range (the trace has " +
                     std::to_string(count) + ", numbered 0.." + std::to_string(count - 1) + ")");
  return value;
}
}  // namespace

bool TraceSlice::partial() const {
  if (layers != all_indices(trace->layers()) || heads != all_indices(trace->heads())) return true;
  return trace->decoder && (decoder_layers != all_indices(trace->decoder->layers()) ||
                            decoder_heads != all_indices(trace->decoder->heads()));
}

TraceSlice whole_trace(const AttentionTrace& trace) {
  TraceSlice s{&trace, all_indices(trace.layers()), all_indices(trace.heads()), {}, {}};
  if (trace.decoder) {
    s.decoder_layers = all_indices(trace.decoder->layers());
    s.decoder_heads = all_indices(trace.decoder->heads());
  }
  return s;
}

std::vector<int> parse_index_list(const std::string& spec, int count, const std::string& what) {
  if (spec.empty()) return all_indices(count);
  std::vector<int> out;
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t comma = spec.find(',', begin);
    if (comma == std::string::npos) comma = spec.size();
    const std::string part = spec.substr(begin, comma - begin);
    const size_t dash = part.find('-', 1);
    int first = 0, last = 0;
    if (dash == std::string::npos) {
      first = last = parse_index(part, part, count, what);
    } else {
      first = parse_index(part, part.substr(0, dash), count, what);
      last = parse_index(part, part.substr(dash + 1), count, what);
      if (last < first) throw UsageError(what + ": the range '" + part + "' runs backwards");
    }
    for (int i = first; i <= last; ++i)
      if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    begin = comma + 1;
  }
  return out;
}

TraceSlice select_trace(const AttentionTrace& trace, const std::string& layers,
                        const std::string& heads) {
  TraceSlice s{&trace,
               parse_index_list(layers, trace.layers(), "--layers"),
               parse_index_list(heads, trace.heads(), "--heads"),
               {},
               {}};
  if (trace.decoder) {
    // The same indices on the decoder's side, checked against its own counts.
    s.decoder_layers =
        parse_index_list(layers, trace.decoder->layers(), "--layers (of the decoder)");
    s.decoder_heads = parse_index_list(heads, trace.decoder->heads(), "--heads (of the decoder)");
  }
  return s;
}

}  // namespace attnscope

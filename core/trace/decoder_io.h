#pragma once
// Reading an encoder–decoder trace's decoder side back (core/trace/trace_reader.h): the JSON
// trace's "decoder" object, or the safetensors trace's "decoder" metadata and tensors. Internal to
// the readers; the rigour is theirs: shapes against the decoder's and the encoder's tokens, causal
// self-attention, rows that sum to 1, messages that name the key path.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/trace/trace.h"

namespace attnscope {

// The decoder's tokens, selection and predictions from `decoder` (the JSON object without its
// matrices); checks them against the trace's header (encoder tokens present, model's
// decoder_layers/decoder_heads declared). Throws TraceError.
void read_decoder_header(const nlohmann::json& decoder, const std::string& name,
                         AttentionTrace& trace, DecoderTrace& out);

// Moves `matrices` ([layers*heads] in file order; `shape` is [layers, heads, rows, cols] as the
// file nests them) into out[layer][head]. `key` is the path messages name ("decoder.attention").
// Throws TraceError for a shape that is not 4 levels or whose count does not match.
void fill_decoder_matrices(const std::string& key, std::vector<Matrix> matrices,
                           const std::vector<size_t>& shape, const std::string& name,
                           std::vector<std::vector<Matrix>>& out);

// The checks validate_trace runs on trace.decoder (when set). Throws TraceError.
void validate_decoder(const AttentionTrace& trace, const std::string& name);

}  // namespace attnscope

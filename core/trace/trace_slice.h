#pragma once
// A part of a trace chosen for export: some layers and heads (`export --layers 0,2-3 --heads 1`).
// Writers read the attention through a slice, so a selection never copies the matrices.
#include <string>
#include <vector>

#include "core/trace/trace.h"

namespace attnscope {

struct TraceSlice {
  const AttentionTrace* trace = nullptr;
  std::vector<int> layers;  // indices into trace->attention, in output order
  std::vector<int> heads;   // indices into trace->attention[layer]
  // An encoder–decoder's trace (trace->decoder): the decoder's layers and heads written, for its
  // self-attention and cross-attention alike. A selection names the same indices on both sides
  // (`--layers 1` is layer 1 of the encoder and of the decoder); a side without that index is
  // refused. Empty for other traces.
  std::vector<int> decoder_layers;
  std::vector<int> decoder_heads;
  // True when the selection is not the whole trace (the JSON then records it under "selection").
  bool partial() const;
  int tokens() const { return static_cast<int>(trace->tokens.size()); }
  // One head's weights, stored or recomputed now (writers go head by head: a long trace never
  // holds every matrix). Hold the pointer while reading.
  std::shared_ptr<const Matrix> matrix(int layer_pos, int head_pos) const {
    return trace->head_weights(layers[layer_pos], heads[head_pos], /*cache=*/false);
  }
  // The decoder's matrices of the slice: [targets x targets] and [targets x sources].
  const Matrix& decoder_attention(int layer_pos, int head_pos) const {
    return trace->decoder->attention[static_cast<size_t>(decoder_layers[layer_pos])]
                                    [static_cast<size_t>(decoder_heads[head_pos])];
  }
  const Matrix& cross_attention(int layer_pos, int head_pos) const {
    return trace->decoder->cross_attention[static_cast<size_t>(decoder_layers[layer_pos])]
                                          [static_cast<size_t>(decoder_heads[head_pos])];
  }
};

// Every layer and head of `trace`.
TraceSlice whole_trace(const AttentionTrace& trace);

// Parses a selection such as "0,2-3" (0-based, ranges inclusive, in the order given, duplicates
// dropped) against `count` items; an empty spec selects all. Throws UsageError naming `what`
// ("--layers") and the offending part.
std::vector<int> parse_index_list(const std::string& spec, int count, const std::string& what);

// The slice of `trace` chosen by two such specs (for an encoder–decoder, on both sides).
TraceSlice select_trace(const AttentionTrace& trace, const std::string& layers,
                        const std::string& heads);

}  // namespace attnscope

#pragma once
// Encoder–decoder traces (trace->decoder: BART, Marian, T5): which attention the heatmap and the
// arcs show ("Encoder self-attention | Decoder self-attention | Cross-attention"), the decoder's
// own layer and head, both sentences, and the translation's timeline with each generated token's
// top predictions. The encoder's attention stays with the usual views; the decoder's two kinds
// are drawn here: a [rows x columns] heatmap labelled with each side's tokens, and arcs between
// two rows of tokens (cross: the source sentence above, the target below). Nothing here asks the
// model's kind: only whether the trace has a decoder.
#include <string>

#include "app/views/view_context.h"

namespace attnscope {

enum class Seq2SeqPart { kEncoder = 0, kDecoder = 1, kCross = 2 };

struct Seq2SeqView {
  Seq2SeqPart part = Seq2SeqPart::kCross;
  int layer = 0, head = 0;  // the decoder's (its counts may differ from the encoder's)
  int target = -1;          // the decoder position chosen on the timeline (-1: none)

  // The trace of `ctx` has a decoder side to show.
  static bool applies(const ViewContext& ctx) { return ctx.trace && ctx.trace->decoder; }
  // The heatmap and the arcs show the decoder's matrices (not the encoder's) now.
  bool shows_decoder(const ViewContext& ctx) const {
    return applies(ctx) && part != Seq2SeqPart::kEncoder;
  }
  // "Cross-attention: target queries × source keys · decoder layer 1, head 0".
  std::string title(const ViewContext& ctx) const;

  // The part selector and, for the decoder's parts, its layer and head (one line each).
  void DrawSelector(ViewContext& ctx);
  // Both sentences, and the decoder's tokens as a timeline (hover: the top predictions).
  void DrawSentences(ViewContext& ctx, float width);
  void DrawHeatmap(ViewContext& ctx, ImVec2 size);
  void DrawArcs(ViewContext& ctx, ImVec2 size);

 private:
  void clamp(const DecoderTrace& d);
};

}  // namespace attnscope

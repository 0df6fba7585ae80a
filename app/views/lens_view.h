#pragma once
// The logit lens of the focused token (issue 27): one row per layer — the embedding output, then
// the residual stream after each block — read through the final norm and the unembedding as if
// the model stopped there; each row's top tokens shaded by probability. Decoders only; the
// numbers come from the worker (app/probe_jobs.h), computed per focus like everything else.
#include "app/views/view_context.h"

namespace attnscope {

struct LensView {
  void Draw(ViewContext& ctx);
};

}  // namespace attnscope

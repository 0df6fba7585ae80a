// The checks a trace passes before a view may draw it (trace_reader.h).
#include <cmath>

#include "core/analysis/value_weighting.h"
#include "core/trace/decoder_io.h"
#include "core/trace/trace_reader.h"

namespace attnscope {

void validate_trace(const AttentionTrace& trace, const std::string& name) {
  auto fail = [&](const std::string& key, const std::string& what) {
    throw TraceError(name + ": key '" + key + "': " + what);
  };
  const int n = static_cast<int>(trace.tokens.size());
  if (n == 0 && trace.decoder)
    fail("tokens",
         "expected the encoder's tokens (the source sentence) beside 'decoder', found none");
  if (n == 0) fail("tokens", "expected at least one token, found none");
  // A file's trace holds its matrices (readers never produce recomputed attention).
  if (trace.attention.empty()) fail("attention", "expected at least one layer, found none");
  const size_t heads = trace.attention[0].size();
  if (heads == 0) fail("attention[0]", "expected at least one head, found none");
  for (size_t l = 0; l < trace.attention.size(); ++l) {
    const std::string lkey = "attention[" + std::to_string(l) + "]";
    if (trace.attention[l].size() != heads)
      fail(lkey, "expected " + std::to_string(heads) + " heads (as layer 0 has), found " +
                     std::to_string(trace.attention[l].size()));
    for (size_t h = 0; h < heads; ++h) {
      const Matrix& w = trace.attention[l][h];
      const std::string key = lkey + "[" + std::to_string(h) + "]";
      if (w.rows() != n || w.cols() != n)
        fail(key, "expected a " + std::to_string(n) + "x" + std::to_string(n) +
                      " matrix (one row and column per token), found " + std::to_string(w.rows()) +
                      "x" + std::to_string(w.cols()));
      for (int i = 0; i < n; ++i) {
        double sum = 0.0;
        for (int j = 0; j < n; ++j) {
          const float v = w(i, j);
          if (!std::isfinite(v) || v < 0.0f || v > 1.0f + 1e-4f)  // check_attention_rows' bounds
            fail(key + "[" + std::to_string(i) + "][" + std::to_string(j) + "]",
                 "expected a weight in [0, 1], found " +
                     (std::isfinite(v) ? std::to_string(v)
                                       : std::string(std::isnan(v) ? "NaN" : "infinity")));
          sum += v;
        }
        // A fully masked row is all zeros (attention_forward's rule); any other row sums to 1.
        if (sum != 0.0 && std::abs(sum - 1.0) > kRowSumTolerance)
          fail(key + "[" + std::to_string(i) + "]", "expected a row that sums to 1 (within " +
                                                        std::to_string(kRowSumTolerance) +
                                                        "), found a sum of " + std::to_string(sum));
      }
    }
  }
  if (trace.model.layers != trace.layers() || trace.model.heads != trace.heads())
    fail("model", "declares " + std::to_string(trace.model.layers) + " layers x " +
                      std::to_string(trace.model.heads) + " heads, but the attention holds " +
                      std::to_string(trace.layers()) + " x " + std::to_string(trace.heads()));
  if (trace.weighting != "raw" && trace.weighting != "value-norm")
    fail("weighting", "expected \"raw\" or \"value-norm\", found \"" + trace.weighting + "\"");
  try {
    check_value_norms(trace, name);  // [layers][heads] of n finite norms >= 0, when present
  } catch (const TraceError&) {
    throw;
  } catch (const Error& e) {
    throw TraceError(e.what());
  }
  if (trace.decoder) validate_decoder(trace, name);
  for (size_t i = 0; i < trace.tokens.size(); ++i) {
    const Token& t = trace.tokens[i];
    const bool none = t.start == -1 && t.end == -1;
    const bool inside =
        t.start >= 0 && t.start <= t.end && t.end <= static_cast<int>(trace.text.size());
    if (!none && !inside)
      fail("tokens[" + std::to_string(i) + "]",
           "expected start <= end inside the text (" + std::to_string(trace.text.size()) +
               " bytes) or -1, -1, found " + std::to_string(t.start) + ", " +
               std::to_string(t.end));
  }
}

}  // namespace attnscope

// CSV: one attention matrix (one layer and head), the token labels as the header row and as the
// first column (RFC 4180 quoting), the weights as the shortest decimals that read back as the same
// float.
#include <charconv>

#include "core/trace/trace_writer.h"
#include "core/util/error.h"

namespace attnscope {

namespace {
// Labels are always quoted: tokens hold spaces, commas, quotes and line breaks.
std::string csv_field(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

void check_csv(const TraceSlice& slice) {
  // An encoder–decoder's trace has three kinds of matrices (encoder, decoder and cross-attention,
  // with their own layer counts): one csv cannot say which, and writing the encoder's alone would
  // drop the translation silently.
  if (slice.trace->decoder)
    throw UsageError(
        "csv holds one matrix, and this encoder-decoder trace has three kinds (encoder, decoder "
        "and cross-attention): export it as json or safetensors (everything), or npy (the "
        "encoder's attention in FILE.npy, FILE.decoder_attention.npy and "
        "FILE.cross_attention.npy beside it)");
  if (slice.layers.size() != 1 || slice.heads.size() != 1)
    throw UsageError(
        "csv holds one matrix: choose one layer and one head, e.g. --layers 0 "
        "--heads 0 (selected: " +
        std::to_string(slice.layers.size()) + " layers x " + std::to_string(slice.heads.size()) +
        " heads)");
}

void write_csv(const TraceSlice& slice, ExportTarget& target) {
  check_csv(slice);
  const Tokens& tokens = slice.trace->tokens;
  const std::shared_ptr<const Matrix> held = slice.matrix(0, 0);
  const Matrix& w = *held;
  std::ostream& out = target.out;
  out << csv_field("query \\ key");
  // Headers are the tokens' labels (the text each stands for, as every view shows it), uncut.
  constexpr int kWhole = 1 << 20;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    out << ',' << csv_field(token_label(*slice.trace, i, kWhole));
  out << "\r\n";
  std::string row;
  char number[32];
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    row = csv_field(token_label(*slice.trace, static_cast<std::size_t>(i), kWhole));
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      auto res = std::to_chars(number, number + sizeof number, w(i, j));
      row.push_back(',');
      row.append(number, res.ptr);
    }
    row += "\r\n";
    out << row;
  }
}
}  // namespace

TraceWriter make_csv_writer() {
  return {"csv",
          "one matrix (one layer and head) with token labels on both sides (not for "
          "encoder-decoder traces: use npy, json or safetensors)",
          write_csv, check_csv, false};
}

}  // namespace attnscope

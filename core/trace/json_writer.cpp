// The streaming JSON trace writer. Byte compatibility with the document the first writer built
// (an nlohmann::ordered_json dumped compactly) is part of the contract, so the small parts
// (model, tokens, predictions) still go through nlohmann, and numbers use nlohmann's own
// shortest-round-trip formatter, on the double a float widens to, as its serializer did.
#include "core/trace/json_writer.h"

#include <cmath>
#include <cstring>

#include "core/trace/trace_writer.h"

namespace attnscope {

namespace {
nlohmann::ordered_json token_json(const Token& t) {
  nlohmann::ordered_json j = {
      {"id", t.id}, {"text", t.text}, {"start", t.start}, {"end", t.end}, {"special", t.special}};
  if (t.unknown) j["unknown"] = true;
  if (t.generated) j["generated"] = true;
  return j;
}

nlohmann::ordered_json predictions_json(const std::vector<Prediction>& predictions) {
  nlohmann::ordered_json preds = nlohmann::ordered_json::array();
  for (const Prediction& p : predictions)
    preds.push_back({{"id", p.id}, {"text", p.text}, {"probability", p.probability}});
  return preds;
}

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// The tokens; a generated one carries the top next tokens it was chosen from ("predictions").
std::string tokens_with_predictions_json(const AttentionTrace& trace) {
  nlohmann::ordered_json arr = tokens_to_json(trace.tokens, true);
  for (std::size_t i = 0; i < trace.token_predictions.size() && i < arr.size(); ++i)
    if (!trace.token_predictions[i].empty())
      arr[i]["predictions"] = predictions_json(trace.token_predictions[i]);
  return dump(arr);
}

// Buffers a row's numbers before handing them to the stream: one write per row, not per number.
void write_matrix(const Matrix& w, std::ostream& out, std::string& buf) {
  out.put('[');
  char number[64];
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    buf.clear();
    if (i > 0) buf.push_back(',');
    buf.push_back('[');
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      if (j > 0) buf.push_back(',');
      buf.append(number, format_json_number(w(i, j), number));
    }
    buf.push_back(']');
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
  out.put(']');
}

// An encoder–decoder's "decoder" object: its tokens, then attention [layer][head][t][t] and
// cross_attention [layer][head][t][s] of the slice's decoder layers and heads, streamed as the
// encoder's are, and the top next tokens at each decoder position when the model gave them.
void write_decoder(const TraceSlice& slice, std::ostream& out, std::string& buf) {
  const DecoderTrace& d = *slice.trace->decoder;
  out << ",\"decoder\":{\"tokens\":" << dump(tokens_to_json(d.tokens, true));
  if (slice.partial())
    out << ",\"selection\":"
        << dump(nlohmann::ordered_json{{"layers", slice.decoder_layers},
                                       {"heads", slice.decoder_heads}});
  for (const bool cross : {false, true}) {
    out << (cross ? ",\"cross_attention\":[" : ",\"attention\":[");
    for (size_t l = 0; l < slice.decoder_layers.size(); ++l) {
      out << (l > 0 ? ",[" : "[");
      for (size_t h = 0; h < slice.decoder_heads.size(); ++h) {
        if (h > 0) out.put(',');
        const int li = static_cast<int>(l), hi = static_cast<int>(h);
        write_matrix(cross ? slice.cross_attention(li, hi) : slice.decoder_attention(li, hi), out,
                     buf);
      }
      out.put(']');
    }
    out.put(']');
  }
  if (!d.predictions.empty()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const std::vector<Prediction>& p : d.predictions) all.push_back(predictions_json(p));
    out << ",\"predictions\":" << dump(all);
  }
  out.put('}');
}

// value_norms[layer][head][key] of the slice's layers and heads, as "attention" holds them.
void write_value_norms(const TraceSlice& slice, std::ostream& out) {
  const AttentionTrace& trace = *slice.trace;
  char number[64];
  std::string buf = "[";
  for (size_t l = 0; l < slice.layers.size(); ++l) {
    buf += l > 0 ? ",[" : "[";
    for (size_t h = 0; h < slice.heads.size(); ++h) {
      const RowVector& n = trace.value_norms[static_cast<size_t>(slice.layers[l])]
                                            [static_cast<size_t>(slice.heads[h])];
      buf += h > 0 ? ",[" : "[";
      for (Eigen::Index j = 0; j < n.size(); ++j) {
        if (j > 0) buf.push_back(',');
        buf.append(number, format_json_number(n[j], number));
      }
      buf.push_back(']');
    }
    buf.push_back(']');
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    buf.clear();
  }
  out.put(']');
}
}  // namespace

char* format_json_number(float value, char* buf) {
  if (!std::isfinite(value)) {
    std::memcpy(buf, "null", 4);
    return buf + 4;
  }
  return nlohmann::detail::to_chars(buf, buf + 63, static_cast<double>(value));
}

nlohmann::ordered_json tokens_to_json(const Tokens& tokens, bool include_special) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const Token& t : tokens)
    if (include_special || !t.special) arr.push_back(token_json(t));
  return arr;
}

void write_trace_json(const TraceSlice& slice, std::ostream& out) {
  const AttentionTrace& trace = *slice.trace;
  out << "{\"format\":\"attnscope-trace/1\",\"model\":" << model_json(trace);
  // Where the weights came from (a GGUF file and its quantisation); absent for other models.
  if (!trace.model.source.empty()) out << ",\"source\":" << source_json(trace.model.source);
  out << ",\"backend\":" << json_string(trace.backend) << ",\"text\":" << json_string(trace.text)
      << ",\"tokens\":" << tokens_with_predictions_json(trace);
  // How the pieces encode text, for labels (core/text/token_label.h); absent when plain.
  if (trace.model.pieces != PieceEncoding::kPlain)
    out << ",\"pieces\":\"" << piece_encoding_name(trace.model.pieces) << '"';
  if (slice.partial()) out << ",\"selection\":" << selection_json(slice);
  // How "attention" is weighted (core/analysis/value_weighting.h); absent when raw.
  if (trace.weighting != "raw") out << ",\"weighting\":" << json_string(trace.weighting);
  out << ",\"attention\":[";
  std::string buf;
  for (size_t l = 0; l < slice.layers.size(); ++l) {
    out << (l > 0 ? ",[" : "[");
    for (size_t h = 0; h < slice.heads.size(); ++h) {
      if (h > 0) out.put(',');
      write_matrix(*slice.matrix(static_cast<int>(l), static_cast<int>(h)), out, buf);
    }
    out.put(']');
  }
  out.put(']');
  // Each key's ‖v_j·W_O,h‖ when the model gave them, so a stored raw trace can be value-weighted.
  if (!trace.value_norms.empty()) {
    out << ",\"value_norms\":";
    write_value_norms(slice, out);
  }
  if (trace.truncated_at_byte >= 0) out << ",\"truncated_at_byte\":" << trace.truncated_at_byte;
  if (!trace.predictions.empty())
    out << ",\"predictions\":" << dump(predictions_json(trace.predictions));
  if (trace.decoder) write_decoder(slice, out, buf);
  out << "}\n";
}

void write_trace_json(const AttentionTrace& trace, std::ostream& out) {
  write_trace_json(whole_trace(trace), out);
}

TraceWriter make_json_writer() {
  return {
      "json", "attnscope-trace/1 JSON (shared/DESIGN.md), the whole trace or a selection",
      [](const TraceSlice& slice, ExportTarget& target) { write_trace_json(slice, target.out); },
      nullptr, false};
}

}  // namespace attnscope

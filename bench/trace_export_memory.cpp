// Peak memory of exporting a GPT-2-small-shaped trace (12 layers x 12 heads x 1024 x 1024 floats,
// 604 MB of attention). Run one format per process under /usr/bin/time -v and read "Maximum
// resident set size":
//   /usr/bin/time -v build/bin/trace_export_memory json /tmp/t.json
//   /usr/bin/time -v build/bin/trace_export_memory legacy-json /tmp/t.json   (the old in-memory
//   nlohmann document, for comparison)
// Formats: json, npy, csv (layer 0, head 0), safetensors, legacy-json. Optional third argument:
// the token count (default 1024). `read FILE` reads a trace back instead (trace_reader.h):
//   /usr/bin/time -v build/bin/trace_export_memory read /tmp/t.json
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/trace/json_writer.h"
#include "core/trace/trace_reader.h"
#include "core/trace/trace_writer.h"

using namespace attnscope;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: trace_export_memory FORMAT OUT [TOKENS]\n");
    return 2;
  }
  const std::string format = argv[1], path = argv[2];
  if (format == "read") {
    const AttentionTrace t = read_trace_file(path);
    std::printf("%d layers x %d heads x %zu tokens\n", t.layers(), t.heads(), t.tokens.size());
    return 0;
  }
  const int n = argc > 3 ? std::stoi(argv[3]) : 1024, layers = 12, heads = 12;
  AttentionTrace t;
  t.model.name = "gpt2-shaped";
  t.model.kind = "gpt2";
  t.model.layers = layers;
  t.model.heads = heads;
  t.backend = "cpu";
  for (int i = 0; i < n; ++i) {
    t.tokens.push_back(
        {i, " tok" + std::to_string(i), static_cast<int>(t.text.size()), 0, false, false});
    t.text += " tok" + std::to_string(i);
    t.tokens.back().end = static_cast<int>(t.text.size());
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  t.attention.assign(layers, std::vector<Matrix>(heads));
  for (auto& layer : t.attention)
    for (Matrix& w : layer) {
      w.resize(n, n);
      for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = u(rng);
      w.array().colwise() /= w.array().rowwise().sum();
    }
  std::ofstream out(path, std::ios::binary);
  if (format == "legacy-json") {
    nlohmann::ordered_json attention = nlohmann::ordered_json::array();
    for (const auto& layer : t.attention) {
      nlohmann::ordered_json hs = nlohmann::ordered_json::array();
      for (const Matrix& w : layer) {
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (Eigen::Index i = 0; i < w.rows(); ++i) {
          nlohmann::ordered_json row = nlohmann::ordered_json::array();
          for (Eigen::Index j = 0; j < w.cols(); ++j) row.push_back(w(i, j));
          rows.push_back(std::move(row));
        }
        hs.push_back(std::move(rows));
      }
      attention.push_back(std::move(hs));
    }
    nlohmann::ordered_json doc = {{"format", "attnscope-trace/1"},
                                  {"tokens", tokens_to_json(t.tokens, true)},
                                  {"attention", std::move(attention)}};
    out << doc.dump() << '\n';
  } else {
    const TraceWriter& writer = trace_writer(format);
    const TraceSlice slice = format == "csv" ? select_trace(t, "0", "0") : whole_trace(t);
    ExportTarget target{
        out, [&](const std::string& suffix, const std::function<void(std::ostream&)>& fn) {
          std::ofstream side(path + suffix, std::ios::binary);
          fn(side);
        }};
    writer.write(slice, target);
  }
  out.flush();
  return out ? 0 : 1;
}

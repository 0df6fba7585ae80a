// Decoder benchmarks on model-sized random weights (bench/compare_pytorch.py --decoders drives it):
//
//   decoder_bench make smollm2-135m|llama-3.2-1b DIR [F32|BF16]  writes a random model folder
//   decoder_bench serve DIR      reads lines from stdin and prints milliseconds:
//                                  "N"      a trace of N tokens (every head's attention, top-10
//                                           predictions: what the app computes per keystroke)
//                                  "gen N"  ms per token over N greedy steps after a 32-token
//                                  prompt
//   decoder_bench rss DIR        peak resident memory after loading and a 64-token trace, beside
//                                the weight file's size
//   decoder_bench long DIR N [stored|compact] [no-summaries]
//                                a trace of N tokens kept as the app keeps it past the attention
//                                budget (compact: each layer's Q and K, heads recomputed on demand;
//                                the default) or with every head's matrix (stored): peak RSS,
//                                compute time, one head recomputed, summaries of every head
//
// The shapes are those of SmolLM2-135M and Llama-3.2-1B (tied embeddings, GQA, llama3 rope).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/head_summary.h"
#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/dtype.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/hf/hub_cache.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Shape {
  int layers, hidden, heads, kv_heads, ff, vocab;
  double theta;
};

Shape shape_named(const std::string& name) {
  if (name == "smollm2-135m") return {30, 576, 9, 3, 1536, 49152, 100000.0};
  if (name == "llama-3.2-1b") return {16, 2048, 32, 8, 8192, 128256, 500000.0};
  throw std::runtime_error("unknown shape '" + name + "' (smollm2-135m, llama-3.2-1b)");
}

// Writes the random model streaming, one tensor at a time (a 1B model never sits in memory).
void make_model(const std::string& shape_name, const fs::path& dir, const std::string& dtype) {
  const Shape s = shape_named(shape_name);
  const int dh = s.hidden / s.heads;
  fs::create_directories(dir);
  json config = {{"model_type", "llama"},
                 {"num_hidden_layers", s.layers},
                 {"hidden_size", s.hidden},
                 {"num_attention_heads", s.heads},
                 {"num_key_value_heads", s.kv_heads},
                 {"intermediate_size", s.ff},
                 {"vocab_size", s.vocab},
                 {"max_position_embeddings", 8192},
                 {"rms_norm_eps", 1e-5},
                 {"rope_theta", s.theta},
                 {"tie_word_embeddings", true},
                 {"hidden_act", "silu"}};
  if (shape_name == "llama-3.2-1b")
    config["rope_scaling"] = {{"rope_type", "llama3"},
                              {"factor", 32.0},
                              {"low_freq_factor", 1.0},
                              {"high_freq_factor", 4.0},
                              {"original_max_position_embeddings", 8192}};
  std::ofstream(dir / "config.json") << config.dump(2);
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> tensors = {
      {"model.embed_tokens.weight", {s.vocab, s.hidden}}, {"model.norm.weight", {s.hidden}}};
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    tensors.push_back({p + "input_layernorm.weight", {s.hidden}});
    tensors.push_back({p + "post_attention_layernorm.weight", {s.hidden}});
    tensors.push_back({p + "self_attn.q_proj.weight", {s.heads * dh, s.hidden}});
    tensors.push_back({p + "self_attn.k_proj.weight", {s.kv_heads * dh, s.hidden}});
    tensors.push_back({p + "self_attn.v_proj.weight", {s.kv_heads * dh, s.hidden}});
    tensors.push_back({p + "self_attn.o_proj.weight", {s.hidden, s.heads * dh}});
    tensors.push_back({p + "mlp.gate_proj.weight", {s.ff, s.hidden}});
    tensors.push_back({p + "mlp.up_proj.weight", {s.ff, s.hidden}});
    tensors.push_back({p + "mlp.down_proj.weight", {s.hidden, s.ff}});
  }
  const int bytes = dtype == "F32" ? 4 : 2;
  json header = json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, shape] : tensors) {
    std::uint64_t count = 1;
    for (auto d : shape) count *= d;
    header[name] = {
        {"dtype", dtype}, {"shape", shape}, {"data_offsets", {offset, offset + count * bytes}}};
    offset += count * bytes;
  }
  std::string h = header.dump();
  while (h.size() % 8) h.push_back(' ');
  std::ofstream out(dir / "model.safetensors", std::ios::binary);
  const std::uint64_t len = h.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << h;
  std::uint64_t state = 0x1234567;
  std::vector<char> buf;
  for (const auto& [name, shape] : tensors) {  // the order the offsets were given in
    (void)shape;
    const bool norm = name.find("norm") != std::string::npos;
    const std::uint64_t n = (header[name]["data_offsets"][1].get<std::uint64_t>() -
                             header[name]["data_offsets"][0].get<std::uint64_t>()) /
                            bytes;
    buf.resize(n * bytes);
    for (std::uint64_t i = 0; i < n; ++i) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      const float u = static_cast<float>(state >> 40) * 0x1.0p-24f - 0.5f;  // [-0.5, 0.5)
      const float v = norm ? 1.0f + 0.1f * u : 0.06f * u;
      if (bytes == 4) {
        std::memcpy(&buf[i * 4], &v, 4);
      } else {
        const std::uint16_t b = float_to_bf16(v);
        std::memcpy(&buf[i * 2], &b, 2);
      }
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
  if (!out) throw std::runtime_error("cannot write " + (dir / "model.safetensors").string());
}

DecoderNetwork load(const fs::path& dir) {
  const json config = read_model_config(dir);
  return DecoderNetwork::load(dir, llama_spec(config, dir / "config.json"));
}

std::vector<int> ids_of(int n, int vocab) {
  std::vector<int> ids(std::max(n, 1));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>((i * 7919 + 13) % vocab);
  return ids;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int serve(const fs::path& dir) {
  const DecoderNetwork net = load(dir);
  auto backend = make_cpu_backend();
  {  // prepare the weights before the first timed request
    KvCache warm;
    net.forward({1}, warm, *backend);
  }
  std::printf("ready %s\n", backend->description().c_str());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    const bool gen = line.rfind("gen ", 0) == 0;
    const int n = std::stoi(gen ? line.substr(4) : line);
    KvCache cache;
    double ms = 0;
    if (!gen) {
      const auto t0 = std::chrono::steady_clock::now();
      const DecoderOutputs out = net.forward(ids_of(n, net.spec().vocab), cache, *backend);
      const auto top = DecoderNetwork::top_predictions(out.logits, 0, 10);
      ms = ms_since(t0);
      if (top.empty()) return 1;
    } else {
      DecoderOutputs out = net.forward(ids_of(32, net.spec().vocab), cache, *backend);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        Eigen::Index next = 0;
        out.logits.row(0).maxCoeff(&next);
        out = net.forward({static_cast<int>(next)}, cache, *backend);
      }
      ms = ms_since(t0) / std::max(n, 1);
    }
    std::printf("%.4f\n", ms);
    std::fflush(stdout);
  }
  return 0;
}

int rss(const fs::path& dir) {
  const DecoderNetwork net = load(dir);
  auto backend = make_cpu_backend();
  KvCache cache;
  net.forward(ids_of(64, net.spec().vocab), cache, *backend);
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double file_mb = static_cast<double>(fs::file_size(dir / "model.safetensors")) / (1 << 20);
  const double peak_mb = static_cast<double>(u.ru_maxrss) / 1024.0;
  std::printf("weights %.0f MB, peak RSS %.0f MB (%.2fx the weights)\n", file_mb, peak_mb,
              peak_mb / file_mb);
  return 0;
}

// CPU seconds of the whole process (every thread) and of the calling thread: on a shared machine
// these say what the work costs where wall time says how busy the machine was.
double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// What the app holds for a long input: the trace of N tokens (compact past the budget, as
// DecoderModel::prompt_trace decides, or every matrix stored), then one head on demand (a view
// switching heads), the cached head again, and the head summaries of every head (the model
// view's captions, streamed head by head).
int long_trace(const fs::path& dir, int n, const std::string& mode, bool summaries) {
  if (mode != "compact" && mode != "stored") throw std::runtime_error("mode: compact or stored");
  const DecoderNetwork net = load(dir);
  const DecoderSpec& s = net.spec();
  auto backend = make_cpu_backend();
  {  // prepare the weights first, so the time is the trace's
    KvCache warm;
    net.forward({1}, warm, *backend);
  }
  const double after_load_mb = peak_rss_mb();
  DecoderRequest request;
  request.keep_attention = mode == "stored";
  request.keep_attention_inputs = mode == "compact";
  request.keep_vector_steps = keep_vector_steps(n, s.layers, s.heads, s.head_dim);
  AttentionTrace trace;
  KvCache cache;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_s();
  DecoderOutputs out = net.forward(ids_of(n, s.vocab), cache, *backend, request);
  const double forward_ms = ms_since(t0), forward_cpu_s = process_cpu_s() - cpu0;
  trace.attention = std::move(out.attention);
  trace.steps = std::move(out.steps);
  if (request.keep_attention_inputs)
    trace.recomputed = std::make_shared<const RecomputedAttention>(std::move(out.attention_inputs));
  const double after_trace_mb = peak_rss_mb();
  const double full_mb = 4.0 * n * n * s.layers * s.heads / (1 << 20);
  std::printf("shape: %d layers x %d heads (%d KV heads, head_dim %d), vocab %d, %d tokens, %s\n",
              s.layers, s.heads, s.kv_heads, s.head_dim, s.vocab, n, mode.c_str());
  std::printf("%s\n", backend->description().c_str());
  std::printf("forward (trace) %.0f ms wall, %.1f s CPU (all threads)\n", forward_ms,
              forward_cpu_s);
  std::printf("attention kept: %.0f MB (every n x n matrix would be %.0f MB)\n",
              static_cast<double>(trace.attention_bytes()) / (1 << 20), full_mb);
  std::printf("peak RSS after loading %.0f MB, after the trace %.0f MB\n", after_load_mb,
              after_trace_mb);
  std::vector<double> head_ms, head_cpu_ms;
  for (int i = 0; i < 5; ++i) {
    const int l = (i * 5) % s.layers, h = (i * 7) % s.heads;
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = thread_cpu_ms();
    const auto w = trace.head_weights(l, h);
    head_cpu_ms.push_back(thread_cpu_ms() - c1);  // one thread computes a head
    head_ms.push_back(ms_since(t1));
    if (w->rows() != n) return 1;
  }
  std::sort(head_ms.begin(), head_ms.end());
  std::sort(head_cpu_ms.begin(), head_cpu_ms.end());
  const auto t2 = std::chrono::steady_clock::now();
  const auto again = trace.head_weights((4 * 5) % s.layers, (4 * 7) % s.heads);
  const double cached_ms = ms_since(t2);
  std::printf(
      "one head on demand: median %.1f ms (min %.1f, max %.1f over 5 heads); asked "
      "again (cached) %.3f ms\n",
      head_ms[2], head_ms[0], head_ms[4], cached_ms);
  std::printf("one head on demand, CPU time of its thread: median %.1f ms (min %.1f, max %.1f)\n",
              head_cpu_ms[2], head_cpu_ms[0], head_cpu_ms[4]);
  if (!summaries) {
    std::printf("peak RSS at the end %.0f MB\n", peak_rss_mb());
    return 0;
  }
  const auto t3 = std::chrono::steady_clock::now();
  const double c3 = process_cpu_s();
  const auto all = summarize_trace(trace);
  const double summaries_ms = ms_since(t3), summaries_cpu_s = process_cpu_s() - c3;
  std::printf(
      "head summaries of all %d heads: %.0f ms wall, %.1f s CPU (first-token mass of "
      "layer 0 head 0: %.3f)\n",
      s.layers * s.heads, summaries_ms, summaries_cpu_s, all[0][0].first_token_mass);
  std::printf("peak RSS at the end %.0f MB\n", peak_rss_mb());
  return 0;
}

}  // namespace
}  // namespace attnscope

int main(int argc, char** argv) {
  try {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows in a log file
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "make" && argc >= 4)
      attnscope::make_model(argv[2], argv[3], argc > 4 ? argv[4] : "BF16");
    else if (mode == "serve" && argc == 3)
      return attnscope::serve(argv[2]);
    else if (mode == "rss" && argc == 3)
      return attnscope::rss(argv[2]);
    else if (mode == "long" && argc >= 4 && argc <= 6)
      return attnscope::long_trace(argv[2], std::stoi(argv[3]), argc >= 5 ? argv[4] : "compact",
                                   argc < 6 || std::string(argv[5]) != "no-summaries");
    else {
      std::fprintf(stderr,
                   "usage: decoder_bench make SHAPE DIR [F32|BF16] | serve DIR | rss DIR | "
                   "long DIR N [stored|compact] [no-summaries]\n");
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "decoder_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

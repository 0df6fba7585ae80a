// GGUF models (issue 26): each architecture of gguf_fixtures' manifest opens from its GGUF and runs
// the network attnscope's safetensors path runs on the same model as a Hugging Face folder
// (NAME.hf: the dequantised weights under Hugging Face's names, q/k un-permuted, Gemma's norms as
// HF stores them): the description (sizes, windows, scales, softcaps, RoPE frequencies) and every
// layer's and head's attention within 1e-5, the logits within 1e-4. Broken files: an architecture
// or tensor type attnscope does not read, a truncated file and a NaN scale, one line each.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/gguf/gguf_archs.h"
#include "core/model/gguf/gguf_model.h"
#include "core/model/hf/hf_families.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/registry.h"
#include "core/trace/json_writer.h"
#include "core/trace/trace_reader.h"
#include "core/util/error.h"
#include "tests/common/gguf_bytes.h"
#include "tests/common/shell.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kGguf = fs::path(ATTNSCOPE_FIXTURES) / "gguf";

json manifest() {
  std::ifstream in(kGguf / "manifest.json");
  return json::parse(in);
}

std::vector<std::string> fixture_names() {
  // Names only (the work is in the tests): the manifest is small and written at build time.
  std::vector<std::string> names;
  for (const json& m : manifest()) names.push_back(m["name"].get<std::string>());
  return names;
}

json fixture(const std::string& name) {
  for (const json& m : manifest())
    if (m["name"] == name) return m;
  ADD_FAILURE() << "no fixture " << name;
  return json();
}

DecoderNetwork hf_network(const fs::path& folder) {
  const json config = read_model_config(folder);
  return DecoderNetwork::load(folder, decoder_spec_of(config, folder / "config.json"));
}

// Ids spread over the vocabulary both files share (a deterministic pattern, no special meaning).
std::vector<int> ids_for(int vocab, int n) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<int>((7919LL * i + 13) % vocab));
  return ids;
}

class GgufFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufFixture, DescriptionMatchesTheHuggingFaceFolder) {
  const json m = fixture(GetParam());
  const GgufNetwork g = load_gguf_network(kGguf / m["gguf"].get<std::string>());
  const DecoderNetwork hf = hf_network(kGguf / m["hf"].get<std::string>());
  const DecoderSpec &a = g.network.spec(), &b = hf.spec();
  EXPECT_EQ(a.kind, m["kind"].get<std::string>());
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.layers, b.layers);
  EXPECT_EQ(a.hidden, b.hidden);
  EXPECT_EQ(a.heads, b.heads);
  EXPECT_EQ(a.kv_heads, b.kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.ff, b.ff);
  EXPECT_EQ(a.norm, b.norm);
  EXPECT_EQ(a.positions, b.positions);
  EXPECT_EQ(a.gated_mlp, b.gated_mlp);
  EXPECT_EQ(a.activation, b.activation);
  EXPECT_EQ(a.qk_norm, b.qk_norm);
  EXPECT_EQ(a.post_norms, b.post_norms);
  EXPECT_EQ(a.reports_kv_heads, b.reports_kv_heads);
  EXPECT_FLOAT_EQ(a.norm_eps, b.norm_eps);
  EXPECT_FLOAT_EQ(a.attention_scale, b.attention_scale);
  EXPECT_FLOAT_EQ(a.attention_softcap, b.attention_softcap);
  EXPECT_FLOAT_EQ(a.final_softcap, b.final_softcap);
  // Gemma's √hidden: the HF path rounds it to the weights' dtype (F32 here: the same number).
  EXPECT_FLOAT_EQ(a.embedding_scale, b.embedding_scale);
  // The GGUF stores Gemma's norms as 1 + w: offset 0 there, 1 on the HF path.
  EXPECT_FLOAT_EQ(a.norm_offset, a.kind.rfind("gemma", 0) == 0 ? 0.0f : b.norm_offset);
  ASSERT_EQ(a.layer.size(), b.layer.size());
  for (std::size_t l = 0; l < a.layer.size(); ++l) {
    EXPECT_EQ(a.layer[l].window, b.layer[l].window) << "layer " << l;
    EXPECT_EQ(a.layer[l].local_rope, b.layer[l].local_rope) << "layer " << l;
  }
  for (const auto& [ra, rb] :
       {std::pair{&a.rope, &b.rope}, std::pair{&a.rope_local, &b.rope_local}}) {
    ASSERT_EQ(ra->inv_freq.size(), rb->inv_freq.size());
    for (std::size_t i = 0; i < ra->inv_freq.size(); ++i)
      EXPECT_NEAR(ra->inv_freq[i], rb->inv_freq[i], 1e-6 * rb->inv_freq[i]) << "frequency " << i;
  }
  EXPECT_EQ(g.source.format, "gguf");
  EXPECT_EQ(g.source.file_type, m["file_type"].get<std::string>());
}

TEST_P(GgufFixture, AttentionEqualsTheSafetensorsPath) {
  const json m = fixture(GetParam());
  const GgufNetwork g = load_gguf_network(kGguf / m["gguf"].get<std::string>());
  const DecoderNetwork hf = hf_network(kGguf / m["hf"].get<std::string>());
  const int vocab = std::min(g.network.spec().vocab, hf.spec().vocab);
  ASSERT_GT(vocab, 100);
  const std::unique_ptr<Backend> cpu = make_cpu_backend(CpuPrecision::kFloat);
  DecoderRequest request;
  request.all_logits = true;
  // Longer than every fixture's sliding window, so the windows are exercised.
  const std::vector<int> ids = ids_for(vocab, 11);
  KvCache ca, cb;
  const DecoderOutputs a = g.network.forward(ids, ca, *cpu, request);
  const DecoderOutputs b = hf.forward(ids, cb, *cpu, request);
  ASSERT_EQ(a.attention.size(), b.attention.size());
  double worst = 0;
  for (std::size_t l = 0; l < a.attention.size(); ++l)
    for (std::size_t h = 0; h < a.attention[l].size(); ++h) {
      const Matrix& x = a.attention[l][h];
      const Matrix& y = b.attention[l][h];
      ASSERT_EQ(x.rows(), y.rows());
      ASSERT_EQ(x.cols(), y.cols());
      const double d = (x - y).cwiseAbs().maxCoeff();
      worst = std::max(worst, d);
      EXPECT_LE(d, 1e-5) << "layer " << l << " head " << h;
    }
  // Logits over the shared vocabulary (the GGUF's embedding may hold the tokenizer's extra rows).
  const double logits = (a.logits.leftCols(vocab) - b.logits.leftCols(vocab)).cwiseAbs().maxCoeff();
  const double scale = b.logits.cwiseAbs().maxCoeff();
  EXPECT_LE(logits, 1e-4 * std::max(1.0, scale));
  std::cout << GetParam() << ": attention max |diff| " << worst << ", logits max |diff| " << logits
            << "\n";
}

// The model as the app opens it (tokenizer from tokenizer.ggml.*): model.kind is the Hugging Face
// model_type, "source" names the GGUF's quantisation, and both survive a JSON round trip.
TEST_P(GgufFixture, TraceCarriesKindAndSource) {
  const json m = fixture(GetParam());
  const std::shared_ptr<const Model> model = open_gguf_model(kGguf / m["gguf"].get<std::string>());
  const std::unique_ptr<Backend> cpu = make_cpu_backend(CpuPrecision::kFloat);
  const AttentionTrace trace = model->run("The cat sat on the mat.", *cpu);
  std::stringstream out;
  write_trace_json(trace, out);
  const json j = json::parse(out.str());
  EXPECT_EQ(j["model"]["kind"], m["kind"]);
  EXPECT_EQ(j["model"]["layers"], m["layers"]);
  EXPECT_EQ(j["model"]["heads"], m["heads"]);
  EXPECT_EQ(j["source"], json({{"format", "gguf"}, {"file_type", m["file_type"]}}));
  EXPECT_EQ(j["predictions"].size(), 10u);
  EXPECT_GE(j["tokens"].size(), 3u);
  const AttentionTrace back = read_trace_json(out, "trace.json");
  EXPECT_EQ(back.model.source.format, "gguf");
  EXPECT_EQ(back.model.source.file_type, m["file_type"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GgufFixture, ::testing::ValuesIn(fixture_names()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-' || c == '.') c = '_';
                           return s;
                         });

// ---- broken files: one line each ---------------------------------------------------------------

std::string error_of(const fs::path& path) {
  try {
    load_gguf_network(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Files the tests write, in one folder removed when the program ends.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("gguf_model_test_" + std::to_string(getpid()));
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

fs::path temp_file(const std::string& name) {
  static const TempDir dir;
  fs::create_directories(dir.path);
  return dir.path / name;
}

// Valid bytes for `values` values of ggml type `type`: F32 small numbers, Q8_0 blocks of scale
// 1/64 (f16 0x2400) and small integers; anything else zeros. `nan_block`: that block's scale is
// an f16 NaN (0x7e00).
std::string valid_bytes(std::uint32_t type, std::uint64_t values, long nan_block = -1) {
  std::string data;
  if (type == 0) {
    for (std::uint64_t i = 0; i < values; ++i) {
      const float v = 0.01f * static_cast<float>(i % 7) - 0.03f;
      data += test::le(v);
    }
  } else if (type == 8) {
    for (std::uint64_t blk = 0; blk < values / 32; ++blk) {
      data += static_cast<long>(blk) == nan_block ? std::string("\x00\x7e", 2)
                                                  : std::string("\x00\x24", 2);
      for (int i = 0; i < 32; ++i) data += static_cast<char>(i % 5 - 2);
    }
  } else {
    data.assign(values / test::ggml_block(type).values * test::ggml_block(type).bytes, '\0');
  }
  return data;
}

// A minimal llama: one layer, hidden `hidden`, every matrix of ggml type `type` (F32 norms);
// `nan_tensor`'s block `nan_block` gets a NaN scale.
test::GgufBytes minimal_llama(const std::string& arch, std::uint32_t type, std::uint64_t hidden,
                              const std::string& nan_tensor = "", long nan_block = -1) {
  test::GgufBytes b;
  b.str("general.architecture", arch)
      .u32(arch + ".block_count", 1)
      .u32(arch + ".context_length", 64)
      .u32(arch + ".embedding_length", static_cast<std::uint32_t>(hidden))
      .u32(arch + ".feed_forward_length", static_cast<std::uint32_t>(hidden))
      .u32(arch + ".attention.head_count", 2)
      .f32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
  const std::uint64_t vocab = 8;
  b.tensor_data("token_embd.weight", {hidden, vocab}, type, valid_bytes(type, hidden * vocab));
  for (const char* t : {"output_norm.weight", "blk.0.attn_norm.weight", "blk.0.ffn_norm.weight"})
    b.tensor_data(t, {hidden}, 0, valid_bytes(0, hidden));
  for (const char* t :
       {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
    const std::string name = std::string("blk.0.") + t + ".weight";
    b.tensor_data(name, {hidden, hidden}, type,
                  valid_bytes(type, hidden * hidden, name == nan_tensor ? nan_block : -1));
  }
  return b;
}

TEST(GgufModel, AnUnsupportedArchitectureIsOneLineNamingIt) {
  const fs::path path = temp_file("mamba.gguf");
  minimal_llama("mamba", 0, 32).write(path);
  const std::string e = error_of(path);
  EXPECT_EQ(e, path.string() +
                   ": architecture 'mamba' is not supported (attnscope reads GGUF llama, qwen2, "
                   "qwen3, gemma2, gemma3, phi3, gpt2)");
}

TEST(GgufModel, AnUnsupportedTensorTypeIsOneLineNamingTensorAndType) {
  const fs::path path = temp_file("iq2.gguf");
  minimal_llama("llama", 16, 256).write(path);  // IQ2_XXS: a type ggml has and attnscope does not
  const std::string e = error_of(path);
  EXPECT_NE(e.find(path.string() + ": tensor 'token_embd.weight' has type IQ2_XXS"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(GgufModel, WorksOnTheMinimalFile) {
  const fs::path path = temp_file("ok.gguf");
  minimal_llama("llama", 0, 32).write(path);
  const GgufNetwork g = load_gguf_network(path);
  EXPECT_EQ(g.network.spec().kind, "llama");
  EXPECT_EQ(g.network.spec().vocab, 8);
  EXPECT_EQ(g.name, "ok");
  EXPECT_EQ(g.source.file_type, "F32");
}

TEST(GgufModel, ANaNScaleNamesTheTensorAndRow) {
  // Q8_0, hidden 64: two blocks a row; block 5 is the second of row 2.
  const test::GgufBytes b = minimal_llama("llama", 8, 64, "blk.0.attn_k.weight", 5);
  const fs::path path = temp_file("nan.gguf");
  b.write(path);
  const std::string e = error_of(path);
  EXPECT_EQ(e, path.string() +
                   ": tensor 'blk.0.attn_k.weight' contains NaN or infinite values (the first in "
                   "row 2)");
}

TEST(GgufModel, ATruncatedFileIsOneLine) {
  const fs::path src = kGguf / "qwen2.gguf";
  const fs::path path = temp_file("truncated.gguf");
  fs::copy_file(src, path, fs::copy_options::overwrite_existing);
  fs::resize_file(path, fs::file_size(src) - 1000);
  const std::string e = error_of(path);
  EXPECT_EQ(e.rfind(path.string() + ": ", 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// What the window does when a model fails to open (app/model_loader.h: the previous model stays):
// a truncated GGUF and one with a NaN scale fail through open_model with one line each, and the
// model opened before them still computes the same trace.
TEST(GgufModel, ABrokenGgufLeavesThePreviousModelWorking) {
  const json m = fixture("gemma2");
  const std::shared_ptr<const Model> model =
      open_model((kGguf / m["gguf"].get<std::string>()).string());
  const std::unique_ptr<Backend> cpu = make_cpu_backend(CpuPrecision::kFloat);
  const AttentionTrace before = model->run("The cat sat on the mat.", *cpu);
  const fs::path truncated = temp_file("truncated-model.gguf");
  fs::copy_file(kGguf / m["gguf"].get<std::string>(), truncated,
                fs::copy_options::overwrite_existing);
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  const fs::path nan = temp_file("nan-model.gguf");
  minimal_llama("llama", 8, 64, "blk.0.attn_q.weight", 0).write(nan);
  for (const fs::path& broken : {truncated, nan}) {
    try {
      open_model(broken.string());
      ADD_FAILURE() << broken << " opened";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(broken.string() + ": ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  const AttentionTrace after = model->run("The cat sat on the mat.", *cpu);
  ASSERT_EQ(after.attention.size(), before.attention.size());
  for (std::size_t l = 0; l < after.attention.size(); ++l)
    for (std::size_t h = 0; h < after.attention[l].size(); ++h)
      EXPECT_EQ(after.attention[l][h], before.attention[l][h]) << l << "." << h;
}

// An Ollama store made here ($OLLAMA_MODELS/manifests/registry.ollama.ai/library/NAME/TAG naming
// the model layer by digest, the file under blobs/sha256-<hex>) opens by NAME:TAG end to end, and
// exports what the file itself exports.
TEST(GgufModel, AnOllamaNameExportsLikeItsFile) {
  if (!fs::exists(test::app_exe())) GTEST_SKIP() << "the attnscope executable is not built";
  const json m = fixture("qwen3");
  const fs::path file = kGguf / m["gguf"].get<std::string>();
  const fs::path store = temp_file("ollama");
  fs::remove_all(store);
  const test::ShellRun sum = test::run_shell("sha256sum '" + file.string() + "'");
  ASSERT_EQ(sum.exit_code, 0);
  const std::string hex = sum.output.substr(0, 64);
  fs::create_directories(store / "blobs");
  fs::copy_file(file, store / "blobs" / ("sha256-" + hex));
  const fs::path manifest_dir = store / "manifests" / "registry.ollama.ai" / "library" / "tinyqwen";
  fs::create_directories(manifest_dir);
  const json manifest_json = {{"schemaVersion", 2},
                              {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
                              {"layers",
                               {{{"mediaType", "application/vnd.ollama.image.model"},
                                 {"digest", "sha256:" + hex},
                                 {"size", fs::file_size(file)}}}}};
  std::ofstream(manifest_dir / "q3") << manifest_json.dump();
  const std::string env = "HOME='" + store.string() + "' OLLAMA_MODELS='" + store.string() + "' ";
  const std::string exe = "'" + test::app_exe().string() + "'";
  const std::string text = " --text 'The cat sat on the mat.' -o - --backend cpu";
  const test::ShellRun by_name =
      test::run_shell(env + exe + " export --model tinyqwen:q3" + text + " 2>/dev/null");
  ASSERT_EQ(by_name.exit_code, 0) << by_name.output;
  const test::ShellRun by_file = test::run_shell(env + exe + " export --model '" + file.string() +
                                                 "'" + text + " 2>/dev/null");
  ASSERT_EQ(by_file.exit_code, 0) << by_file.output;
  const json a = json::parse(by_name.output), b = json::parse(by_file.output);
  EXPECT_EQ(a["model"]["kind"], "qwen3");
  EXPECT_EQ(a["source"], json({{"format", "gguf"}, {"file_type", m["file_type"]}}));
  EXPECT_EQ(a["tokens"], b["tokens"]);
  EXPECT_EQ(a["attention"], b["attention"]);
  EXPECT_EQ(a["predictions"], b["predictions"]);
}

}  // namespace
}  // namespace attnscope

// Hostile input (issue 15): files that are not what their names say, configs and weights crafted
// to overflow, and traces that must never hold NaN or unnormalised rows. Each test names the class
// it guards; each failed before its fix. Code that used to hang or allocate gigabytes runs in a
// child with a time and memory limit (bounded_child.h).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend/select.h"
#include "core/model/decoder/decoder_spec.h"
#include "core/model/hf/hub_cache.h"
#include "core/model/hf/safetensors.h"
#include "core/model/registry.h"
#include "core/text/tokenizer.h"
#include "core/trace/trace_check.h"
#include "core/util/error.h"
#include "core/util/file_read.h"
#include "tests/unit/bounded_child.h"
#include "tests/unit/hf_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using testing::run_bounded;
using testing::TempDir;

const fs::path kGpt2 = fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f32";

// A copy of the tiny GPT-2 fixture (weights linked, not copied) that a test may damage.
fs::path copy_gpt2(const fs::path& dir) {
  const fs::path out = dir / "gpt2";
  fs::create_directories(out);
  for (const char* f : {"config.json", "vocab.json", "merges.txt"})
    fs::copy_file(kGpt2 / f, out / f);
  fs::create_symlink(kGpt2 / "model.safetensors", out / "model.safetensors");
  return out;
}

void edit_config(const fs::path& folder, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json config = nlohmann::json::parse(testing::read_file(folder / "config.json"));
  edit(config);
  testing::write_file(folder / "config.json", config.dump());
}

std::string open_error(const std::string& spec) {
  try {
    open_model(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "(opened)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- Files that are not regular files --------------------------------------------------------

TEST(HostileFiles, FifoConfigIsRefusedInsteadOfWaitedOn) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  fs::remove(model / "config.json");
  ASSERT_EQ(::mkfifo((model / "config.json").c_str(), 0600), 0);
  const auto r = run_bounded([&] { open_model(model.string()); }, 10);
  ASSERT_FALSE(r.timed_out) << "blocked on the FIFO";
  ASSERT_TRUE(r.threw) << r.message;
  EXPECT_TRUE(contains(r.message, "config.json is a FIFO")) << r.message;
}

TEST(HostileFiles, FifoVocabularyIsRefusedInsteadOfWaitedOn) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  fs::remove(model / "vocab.json");
  ASSERT_EQ(::mkfifo((model / "vocab.json").c_str(), 0600), 0);
  const auto r = run_bounded([&] { load_tokenizer(model); }, 10);
  ASSERT_FALSE(r.timed_out) << "blocked on the FIFO";
  ASSERT_TRUE(r.threw) << r.message;  // the tokenizer loader skips what is not a regular file
  EXPECT_TRUE(contains(r.message, model.string())) << r.message;
}

TEST(HostileFiles, VocabularyLinkedToDevZeroIsRefusedWithinMemory) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  fs::remove(model / "vocab.json");
  fs::create_symlink("/dev/zero", model / "vocab.json");
  const auto r = run_bounded([&] { load_tokenizer(model); }, 10, 512);
  ASSERT_FALSE(r.timed_out || r.crashed) << r.message;
  ASSERT_TRUE(r.threw) << r.message;
  EXPECT_TRUE(contains(r.message, model.string())) << r.message;
  // The file reader on its own says what the path is.
  try {
    read_regular_file(model / "vocab.json", "vocabulary");
    FAIL() << "read /dev/zero";
  } catch (const FileError& e) {
    EXPECT_TRUE(contains(e.what(), "vocab.json is a character device, expected a regular file"))
        << e.what();
  }
}

TEST(HostileFiles, ConfigThatIsADirectorySaysSo) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  fs::remove(model / "config.json");
  fs::create_directory(model / "config.json");
  const std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "config.json is a directory")) << msg;
  EXPECT_FALSE(contains(msg, "basic_filebuf")) << msg;
}

TEST(HostileFiles, SymlinkLoopIsReportedAsALoopNotAsMissing) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  fs::remove(model / "config.json");
  fs::create_symlink("config.json", model / "config.json");
  std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "symlink loop")) << msg;
  EXPECT_FALSE(contains(msg, "missing")) << msg;

  fs::create_symlink("loop", tmp.path() / "loop");  // the model folder itself
  msg = open_error((tmp.path() / "loop").string());
  EXPECT_TRUE(contains(msg, "symlink loop")) << msg;
  EXPECT_FALSE(contains(msg, "does not exist")) << msg;
}

TEST(HostileFiles, UnreadableConfigIsNotReportedAsMissing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every file";
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  fs::permissions(model / "config.json", fs::perms::none);
  const std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "permission denied")) << msg;
  EXPECT_FALSE(contains(msg, "missing")) << msg;
}

TEST(HostileFiles, ReadRegularFileBoundsTheRead) {
  TempDir tmp;
  testing::write_file(tmp.path() / "big", std::string(5000, 'x'));
  EXPECT_EQ(read_regular_file(tmp.path() / "big", "file", 5000).size(), 5000u);
  try {
    read_regular_file(tmp.path() / "big", "file", 4999);
    FAIL() << "read past the limit";
  } catch (const FileError& e) {
    EXPECT_EQ(e.problem, FileProblem::kTooLarge);
    EXPECT_TRUE(contains(e.what(), "5000 bytes, larger than the 4999-byte limit")) << e.what();
  }
}

// --- JSON: messages name the file and key, and stay short -------------------------------------

TEST(HostileJson, WrongTypeNamesTheFileAndKey) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  edit_config(model, [](nlohmann::json& c) { c["activation_function"] = 5; });
  const std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "config.json: 'activation_function' must be a string, found 5")) << msg;
  EXPECT_FALSE(contains(msg, "json.exception")) << msg;
}

TEST(HostileJson, HugeBadTokenIsQuotedInAShortLine) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  testing::write_file(model / "config.json", "{\"n_layer\": " + std::string(2 << 20, '7') + "x}");
  const std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "config.json is not valid JSON")) << msg.substr(0, 300);
  EXPECT_LT(msg.size(), 400u) << msg.substr(0, 300);
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(HostileJson, BadTokenizerJsonNamesTheFile) {
  TempDir tmp;
  testing::write_file(tmp.path() / "tokenizer.json", "{\"model\": [" + std::string(100000, '['));
  try {
    load_tokenizer(tmp.path());
    FAIL();
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "tokenizer.json")) << msg.substr(0, 300);
    EXPECT_LT(msg.size(), 600u) << msg.substr(0, 300);
  }
}

// --- Config dimensions --------------------------------------------------------------------------

TEST(HostileConfig, HugeDimensionIsRefusedNamingTheKeyNotAnother) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  edit_config(model, [](nlohmann::json& c) {
    c["n_embd"] = 1 << 29;
    c["n_inner"] = nullptr;  // defaults to 4 * n_embd, which overflowed int
  });
  const std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "'n_embd' must be a positive integer up to")) << msg;
  EXPECT_TRUE(contains(msg, "found 536870912")) << msg;
  EXPECT_FALSE(contains(msg, "n_inner")) << msg;
}

TEST(HostileConfig, ConfigAskingForHugeTensorsFailsOnTheShapeWithinMemory) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  edit_config(model, [](nlohmann::json& c) {
    c["vocab_size"] = 1 << 24;
    c["n_positions"] = 1 << 24;
  });
  const auto r = run_bounded([&] { open_model(model.string()); }, 20, 1024);
  ASSERT_FALSE(r.timed_out || r.crashed) << r.message;
  EXPECT_TRUE(contains(r.message, "'wte.weight' has shape [")) << r.message;
  EXPECT_TRUE(contains(r.message, "expected [16777216 x")) << r.message;
  EXPECT_FALSE(contains(r.message, "bad_alloc")) << r.message;
}

// Found by fuzz_model_config once it reached the decoder families: a boolean key holding a number,
// an object or an array escaped as the JSON library's bare type_error.
TEST(HostileConfig, ABooleanKeyOfAnotherTypeIsNamed) {
  const nlohmann::json base = {{"hidden_size", 32},        {"num_hidden_layers", 2},
                               {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                               {"intermediate_size", 64},  {"vocab_size", 100}};
  using SpecFn = DecoderSpec (*)(const nlohmann::json&, const fs::path&);
  const std::vector<std::pair<std::string, SpecFn>> cases = {{"attention_bias", &llama_spec},
                                                             {"mlp_bias", &llama_spec},
                                                             {"attention_bias", &qwen3_spec},
                                                             {"use_sliding_window", &qwen2_spec}};
  for (const auto& [key, spec] : cases) {
    for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json::object(),
                                      nlohmann::json::array(), nlohmann::json("yes")}) {
      nlohmann::json config = base;
      config[key] = bad;
      try {
        (void)spec(config, "m/config.json");
        ADD_FAILURE() << key << " = " << bad.dump() << " was accepted";
      } catch (const ModelError& e) {
        EXPECT_TRUE(contains(e.what(), "m/config.json: '" + key + "' must be true or false"))
            << e.what();
      }
    }
  }
}

TEST(HostileConfig, NegativeLayerNormEpsilonIsRefused) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  edit_config(model, [](nlohmann::json& c) { c["layer_norm_epsilon"] = -1.0; });
  const std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "'layer_norm_epsilon' must be a positive finite number, found -1"))
      << msg;
}

TEST(HostileConfig, ShardedCheckpointWithAMissingShardNamesIt) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  fs::remove(model / "model.safetensors");
  testing::write_file(model / "model.safetensors.index.json",
                      R"({"weight_map": {"wte.weight": "model-00001-of-00002.safetensors"}})");
  const std::string msg = open_error(model.string());
  EXPECT_TRUE(contains(msg, "model-00001-of-00002.safetensors")) << msg;
}

TEST(HostileConfig, EmptyModelSpecIsAUsageErrorNotTheLessonModel) {
  EXPECT_THROW(open_model(""), UsageError);
}

// --- safetensors ---------------------------------------------------------------------------------

std::string safetensors_bytes(const nlohmann::json& header, const std::string& data) {
  std::string text = header.dump();
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);  // little-endian machines only, as the format
  return out + text + data;
}

TEST(HostileSafetensors, ZeroElementTensorReadsAsEmpty) {
  TempDir tmp;
  testing::write_file(
      tmp.path() / "z.safetensors",
      safetensors_bytes({{"z", {{"dtype", "F32"}, {"shape", {0, 4}}, {"data_offsets", {0, 0}}}}},
                        ""));
  const SafetensorsFile file = SafetensorsFile::open(tmp.path() / "z.safetensors");
  const Matrix m = file.matrix("z");
  EXPECT_EQ(m.rows(), 0);
  EXPECT_EQ(m.cols(), 4);
}

TEST(HostileSafetensors, ShapeEntryBeyondInt64IsRefusedAndNeverPrintedNegative) {
  TempDir tmp;
  const std::uint64_t huge = 1ull << 63;
  testing::write_file(
      tmp.path() / "h.safetensors",
      safetensors_bytes({{"h", {{"dtype", "F32"}, {"shape", {0, huge}}, {"data_offsets", {0, 0}}}}},
                        ""));
  try {
    SafetensorsFile::open(tmp.path() / "h.safetensors");
    FAIL() << "opened";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "tensor 'h': shape entry 9223372036854775808 is absurdly large"))
        << msg;
    EXPECT_FALSE(contains(msg, "-9223372036854775808")) << msg;
  }
}

// --- Traces: never NaN, never unnormalised -------------------------------------------------------

// The fixture's weights with one tensor multiplied by `factor` (finite: 1e30 fits in a float).
void scale_tensor(const fs::path& model, const std::string& name, float factor) {
  std::string bytes = testing::read_file(kGpt2 / "model.safetensors");
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
  const auto& info = header.at(name);
  ASSERT_EQ(info.at("dtype"), "F32");
  const std::size_t begin = 8 + n + info.at("data_offsets")[0].get<std::size_t>();
  const std::size_t end = 8 + n + info.at("data_offsets")[1].get<std::size_t>();
  for (std::size_t at = begin; at < end; at += 4) {
    float v;
    std::memcpy(&v, bytes.data() + at, 4);
    v = std::clamp(v * factor, -std::numeric_limits<float>::max(),
                   std::numeric_limits<float>::max());
    std::memcpy(bytes.data() + at, &v, 4);
  }
  fs::remove(model / "model.safetensors");
  testing::write_file(model / "model.safetensors", bytes);
}

TEST(HostileTrace, HugeFiniteWeightsGiveAnErrorNamingTheLayer) {
  TempDir tmp;
  const fs::path model = copy_gpt2(tmp.path());
  scale_tensor(model, "h.1.attn.c_attn.weight", 1e30f);
  const auto m = open_model(model.string());
  const SelectedBackend cpu = select_backend(BackendChoice::kCpu);
  const AttentionTrace trace = m->run("she sat by the bank of the river", *cpu.backend);
  try {
    check_attention_rows(trace);
    FAIL() << "a trace with non-finite or unnormalised rows passed";
  } catch (const ModelError& e) {
    EXPECT_TRUE(contains(e.what(), "layer 1 (head ")) << e.what();
  }
}

TEST(HostileTrace, RowsThatDoNotSumToOneAreRefused) {
  AttentionTrace trace;
  trace.model.name = "m";
  trace.model.kind = "gpt2";
  Matrix ok(2, 2), zero(2, 2), nan(2, 2);
  ok << 1, 0, 0.25f, 0.75f;
  zero << 1, 0, 0, 0;
  nan << 1, 0, std::nanf(""), 0.5f;
  trace.attention = {{ok}};
  EXPECT_NO_THROW(check_attention_rows(trace));
  trace.attention = {{ok}, {zero}};
  EXPECT_THROW(check_attention_rows(trace), ModelError);
  trace.attention = {{nan}};
  EXPECT_THROW(check_attention_rows(trace), ModelError);
  trace.model.kind = "lesson";  // its self mask can leave a query nothing to attend to
  trace.attention = {{zero}};
  EXPECT_NO_THROW(check_attention_rows(trace));
}

}  // namespace
}  // namespace attnscope

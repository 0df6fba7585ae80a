// Hostile input, round 2 (issue 23): model folders and the command line. Each test names the class
// it guards and failed before its fix: weights that are NaN or overflow (generate wrote them with
// exit 0), a symlink loop reported as missing weights, Qwen2's max_window_layers 0, a seed beyond
// 64 bits, error lines of megabytes, and a safetensors file whose unaligned data section changed
// the trace. The download classes are in download_test.cpp. Hostile files are written here, in a
// temporary folder, from the fixture models tools/make_fixture_models builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/registry.h"
#include "core/util/error.h"
#include "tests/common/shell.h"
#include "tests/unit/hf_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

const fs::path kFixtures = fs::path(ATTNSCOPE_FIXTURES);

fs::path attnscope_exe() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

struct CliRun {
  int exit_code = -1;
  std::string out, err;  // stdout, stderr
};

// `args` is shell syntax (single-quote paths with quoted()).
CliRun run_cli(const std::string& args) {
  TempDir tmp;
  const fs::path out = tmp.path() / "out", err = tmp.path() / "err";
  // Built with += (GCC 12 warns falsely on "'" + string + "'").
  std::string command = "'";
  command += attnscope_exe().string();
  command += "' ";
  command += args;
  command += " > '";
  command += out.string();
  command += "' 2> '";
  command += err.string();
  command += "'";
  const attnscope::test::ShellRun r = attnscope::test::run_shell(command);
  return {r.exit_code, read_file(out), read_file(err)};
}

std::string quoted(const fs::path& p) {
  std::string q = "'";
  q += p.string();
  q += "'";
  return q;
}

// The error lines attnscope printed, without the notes every run may print first (the backend
// it fell back to).
std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < err.size();) {
    const std::size_t end = std::min(err.find('\n', at), err.size());
    const std::string line = err.substr(at, end - at);
    if (line.rfind("attnscope: using the CPU", 0) != 0) lines.push_back(line);
    at = end + 1;
  }
  return lines;
}

// Exactly one error line, of readable length, holding `part`.
void expect_one_line_naming(const CliRun& r, const std::string& part) {
  const std::vector<std::string> lines = error_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err.substr(0, 2000);
  EXPECT_LE(lines[0].size(), 1100u) << lines[0].substr(0, 300);
  EXPECT_NE(lines[0].find(part), std::string::npos) << lines[0].substr(0, 2000);
}

class HostileModels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built";
  }
  // A copy of fixture `name` in tmp/<parent>/model (the same folder name for every copy, so
  // exported traces name the same model).
  fs::path copy_fixture(const std::string& name, const std::string& parent = "a") {
    const fs::path dir = tmp.path() / parent / "model";
    fs::create_directories(dir);
    for (const auto& entry : fs::directory_iterator(kFixtures / name))
      fs::copy_file(entry.path(), dir / entry.path().filename());
    return dir;
  }
  TempDir tmp;
};

// --- Safetensors editing: the header as JSON, the data section as bytes -----------------------

struct Safetensors {
  nlohmann::json header;
  std::string data;

  static Safetensors read(const fs::path& path) {
    const std::string bytes = read_file(path);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
  }
  // The header padded with spaces (as the format allows) to a length of 8k + `misalign` bytes.
  void write(const fs::path& path, int misalign = 0) const {
    std::string h = header.dump();
    h.append((8 - h.size() % 8) % 8 + static_cast<std::size_t>(misalign), ' ');
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((h.size() >> (8 * i)) & 0xff);
    write_file(path, out + h + data);
  }
  // Calls `edit` on each float of an F32 tensor.
  void edit_f32(const std::string& tensor, const std::function<float(float)>& edit) {
    const auto& offsets = header.at(tensor).at("data_offsets");
    ASSERT_EQ(header.at(tensor).at("dtype"), "F32");
    for (std::size_t at = offsets[0].get<std::size_t>(); at < offsets[1].get<std::size_t>();
         at += 4) {
      float v;
      std::memcpy(&v, data.data() + at, 4);
      v = edit(v);
      std::memcpy(data.data() + at, &v, 4);
    }
  }
  // Sets the 16-bit value at `index` of a BF16/F16 tensor.
  void set_u16(const std::string& tensor, std::size_t index, std::uint16_t bits) {
    const std::size_t at = header.at(tensor).at("data_offsets")[0].get<std::size_t>() + 2 * index;
    std::memcpy(data.data() + at, &bits, 2);
  }
};

// --- Class 2: wrong results and messages that do not name the problem -------------------------

TEST_F(HostileModels, GenerateRefusesOverflowingWeightsAsExportDoes) {
  // Layer 0's attention weights x 1e30: finite numbers whose products are not. generate wrote
  // all-zero rows and null probabilities with exit 0.
  const fs::path model = copy_fixture("gpt2-tiny-f32");
  Safetensors st = Safetensors::read(model / "model.safetensors");
  st.edit_f32("h.0.attn.c_attn.weight", [](float v) {
    return static_cast<float>(std::clamp(static_cast<double>(v) * 1e30, -3.4e38, 3.4e38));
  });
  st.write(model / "model.safetensors");
  const std::string args = " --backend cpu --text 'she sat by the bank' --model " + quoted(model);
  const CliRun exported = run_cli("export" + args);
  EXPECT_EQ(exported.exit_code, 1) << exported.err;
  const CliRun generated = run_cli("generate -n 3" + args);
  EXPECT_EQ(generated.exit_code, 1) << generated.err;
  expect_one_line_naming(generated, "layer 0 (head ");
  EXPECT_EQ(generated.out.find("attnscope-trace"), std::string::npos) << generated.out;
  // Rows of zeros are named for what they are, not as "the weights sum to 0.000000".
  for (const CliRun* r : {&exported, &generated}) {
    EXPECT_NE(r->err.find("the scores were NaN or infinite"), std::string::npos) << r->err;
    EXPECT_EQ(r->err.find("sum to"), std::string::npos) << r->err;
  }
}

TEST_F(HostileModels, NanWeightIsReportedAsNaNInItsTensorNotAsASumOfZero) {
  const fs::path model = copy_fixture("gpt2-tiny-f32");
  Safetensors st = Safetensors::read(model / "model.safetensors");
  int seen = 0;
  st.edit_f32("h.1.attn.c_attn.weight",
              [&](float v) { return ++seen == 7 ? std::numeric_limits<float>::quiet_NaN() : v; });
  st.write(model / "model.safetensors");
  for (const char* command : {"export", "generate -n 2"}) {
    const CliRun r =
        run_cli(std::string(command) + " --backend cpu --text 'she sat' --model " + quoted(model));
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    expect_one_line_naming(r, "tensor 'h.1.attn.c_attn.weight' contains NaN or infinite values");
    EXPECT_EQ(r.err.find("sum to"), std::string::npos) << r.err;
  }
}

TEST_F(HostileModels, InfiniteBf16WeightIsNamedWithItsPlace) {
  const fs::path model = copy_fixture("gpt2-tiny-bf16");
  Safetensors st = Safetensors::read(model / "model.safetensors");
  const int cols = st.header.at("h.0.mlp.c_fc.weight").at("shape")[1].get<int>();
  st.set_u16("h.0.mlp.c_fc.weight", static_cast<std::size_t>(cols) + 3, 0x7f80);  // +inf
  st.write(model / "model.safetensors");
  const CliRun r = run_cli("export --backend cpu --text hi --model " + quoted(model));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_line_naming(r,
                         "'h.0.mlp.c_fc.weight' contains NaN or infinite values (the first at "
                         "row 1, column 3)");
}

TEST_F(HostileModels, SymlinkLoopOfTheWeightsIsALoopNotMissingWeights) {
  const fs::path model = copy_fixture("gpt2-tiny-f32");
  fs::remove(model / "model.safetensors");
  fs::create_symlink("model.safetensors", model / "model.safetensors");
  try {
    open_model(model.string());
    FAIL() << "opened";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.safetensors is a symlink loop"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("has no model.safetensors"), std::string::npos) << msg;
  }
  // A shard of a sharded checkpoint, too.
  fs::remove(model / "model.safetensors");
  nlohmann::json index = {{"weight_map", {{"wte.weight", "model-00001-of-00001.safetensors"}}}};
  write_file(model / "model.safetensors.index.json", index.dump());
  fs::create_symlink("model-00001-of-00001.safetensors",
                     model / "model-00001-of-00001.safetensors");
  try {
    open_model(model.string());
    FAIL() << "opened";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("symlink loop"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("missing"), std::string::npos) << msg;
  }
}

// --- Class 3: what Hugging Face accepts, and numbers beyond their type -----------------------

// Attention of `trace` (the exported JSON): [layer][head][query][key].
double weight(const nlohmann::json& trace, int layer, int head, int query, int key) {
  return trace.at("attention")[layer][head][query][key].get<double>();
}

TEST_F(HostileModels, Qwen2MaxWindowLayersZeroMakesEveryLayerSlide) {
  // transformers' Qwen2Config: layer i slides when use_sliding_window and i >= max_window_layers.
  const fs::path model = copy_fixture("qwen2-tiny");
  auto export_with = [&](const nlohmann::json& max_window_layers) {
    nlohmann::json config = nlohmann::json::parse(read_file(model / "config.json"));
    config["use_sliding_window"] = true;
    config["sliding_window"] = 2;
    config["max_window_layers"] = max_window_layers;
    write_file(model / "config.json", config.dump());
    return run_cli("export --backend cpu --text 'she sat by the bank of the river' --model " +
                   quoted(model));
  };
  const CliRun zero = export_with(0);
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  const nlohmann::json all = nlohmann::json::parse(zero.out);
  const int layers = all.at("model").at("layers").get<int>();
  const int tokens = static_cast<int>(all.at("tokens").size());
  ASSERT_GE(tokens, 4);
  for (int l = 0; l < layers; ++l)  // query 3 sees keys 2 and 3 only, in every layer
    EXPECT_EQ(weight(all, l, 0, 3, 0), 0.0) << "layer " << l;

  const CliRun one = export_with(1);  // layer 0 full, the others sliding
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const nlohmann::json mixed = nlohmann::json::parse(one.out);
  EXPECT_GT(weight(mixed, 0, 0, 3, 0), 0.0);
  EXPECT_EQ(weight(mixed, 1, 0, 3, 0), 0.0);

  const CliRun negative = export_with(-1);
  EXPECT_EQ(negative.exit_code, 1);
  expect_one_line_naming(negative, "'max_window_layers' must be a non-negative integer");
}

TEST_F(HostileModels, SeedBeyond64BitsIsAUsageErrorNamingSeed) {
  const std::string args =
      "generate --backend cpu -n 1 --text hi --model " + quoted(kFixtures / "gpt2-tiny-f32");
  for (const char* seed : {"18446744073709551616", "-1", "99999999999999999999999", "1e3"}) {
    const CliRun r = run_cli(args + " --seed " + seed);
    EXPECT_EQ(r.exit_code, 2) << seed << ": " << r.err;
    expect_one_line_naming(r, "--seed");
    EXPECT_TRUE(r.out.empty()) << seed;
  }
  const CliRun largest = run_cli(args + " --seed 18446744073709551615 --temperature 1");
  EXPECT_EQ(largest.exit_code, 0) << largest.err;
}

// --- Class 4: every message one readable line --------------------------------------------------

TEST_F(HostileModels, HugeUnterminatedIndexGivesOneShortLine) {
  const fs::path model = copy_fixture("gpt2-tiny-f32");
  write_file(model / "model.safetensors.index.json",
             "{\"weight_map\": {\"wte.weight\": \"" + std::string(2 << 20, 'x'));
  const CliRun r = run_cli("export --backend cpu --text hi --model " + quoted(model));
  EXPECT_EQ(r.exit_code, 1);
  expect_one_line_naming(r, "model.safetensors.index.json is not valid JSON");
  EXPECT_LT(r.err.size(), 2000u);
}

TEST_F(HostileModels, LongIndexNamesAreQuotedShort) {
  const fs::path model = copy_fixture("gpt2-tiny-f32");
  const std::string shard(200, 's');  // a name a file may have, though none has it here
  write_file(model / "model.safetensors.index.json",
             nlohmann::json{{"weight_map", {{std::string(5000, 't'), shard}}}}.dump());
  try {
    open_model(model.string());
    FAIL() << "opened";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("is missing"), std::string::npos) << msg.substr(0, 400);
    EXPECT_LT(msg.size(), 600u) << msg.substr(0, 400);
  }
}

TEST_F(HostileModels, ThousandsOfCharactersInAModelNameGiveOneBoundedLine) {
  const CliRun r = run_cli("export --backend cpu --text hi --model " + std::string(3000, 'a'));
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 300);
  expect_one_line_naming(r, "is neither a folder nor a repo id");
  const CliRun path = run_cli("export --text hi --model /tmp/" + std::string(3000, 'b') + "/x");
  EXPECT_EQ(path.exit_code, 2) << path.err.substr(0, 300);
  expect_one_line_naming(path, "model folder '/tmp/bbb");
}

TEST_F(HostileModels, NewlinesInAMessageStayOnOneLine) {
  // A model path holding newlines: the message quotes it, on one line.
  const CliRun r = run_cli("export --text hi --model \"$(printf '/tmp/no\\nsuch\\rmodel\\n/x')\"");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_one_line_naming(r, "no such model");
  const CliRun usage = run_cli("export --text hi --backend \"$(printf 'a\\nb')\"");
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  expect_one_line_naming(usage, "--backend");
}

// --- Class 5: the same weights give the same trace, wherever the data section starts ---------

TEST_F(HostileModels, UnalignedDataSectionGivesTheSameTraceBitForBit) {
  // A header length of 8k + 1..7 leaves the tensors unaligned (each read through an aligned copy,
  // one heap allocation more): the trace differed from the aligned file's in its last bits, as the
  // CPU backend's tensors landed elsewhere and Eigen summed their rows in another order. Llama's
  // fixture is left out for time (its tokenizer takes a second to load); it failed the same way.
  const std::vector<std::pair<std::string, std::vector<int>>> cases = {
      {"gpt2-tiny-f32", {0, 1, 2, 3, 4, 5, 6, 7}},
      {"gpt2-tiny-bf16", {0, 1, 2}},
      {"bert-tiny-uncased-f32", {0, 1, 4}}};
  for (const auto& [name, misaligns] : cases) {
    std::string reference;
    for (const int misalign : misaligns) {
      const fs::path model = copy_fixture(name, name + std::to_string(misalign));
      Safetensors::read(model / "model.safetensors").write(model / "model.safetensors", misalign);
      const CliRun r = run_cli(
          "export --backend cpu --text 'she sat by the bank of the river' "
          "--model " +
          quoted(model));
      ASSERT_EQ(r.exit_code, 0) << name << " +" << misalign << ": " << r.err;
      if (misalign == 0)
        reference = r.out;
      else
        EXPECT_TRUE(r.out == reference) << name << ": header length 8k + " << misalign;
    }
  }
}

}  // namespace
}  // namespace attnscope

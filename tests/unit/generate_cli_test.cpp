// `attnscope export` and `attnscope generate` on the decoder fixture of every family: the
// trace contract (kind = model_type, kv_heads where the config has grouped-query attention,
// generated tokens with their predictions) and the exit codes of shared/DESIGN.md.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>
#include "tests/common/decoder_fixture_table.h"

namespace {

namespace fs = std::filesystem;

fs::path attnscope_exe() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

struct CliRun {
  int exit_code;
  std::string out;  // stdout only (stderr goes to the test log)
};

CliRun run(const std::string& args) {
  std::string cmd = "'";
  cmd.append(attnscope_exe().string()).append("' ").append(args);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class DecoderCli : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built";
    folder_ = fs::path(ATTNSCOPE_FIXTURES) / GetParam();
    if (!fs::exists(folder_ / "tokenizer.json") && !fs::exists(folder_ / "vocab.json"))
      GTEST_SKIP() << "no tokenizer files";
  }
  fs::path folder_;
};

TEST_P(DecoderCli, ExportAndGenerate) {
  const CliRun e = run("export --model '" + folder_.string() +
                       "' --text 'The cat sat on the mat.' --backend cpu");
  ASSERT_EQ(e.exit_code, 0) << e.out;
  const nlohmann::json t = nlohmann::json::parse(e.out);
  EXPECT_EQ(t["format"], "attnscope-trace/1");
  // GPT-2's and GPT-NeoX's traces have no KV heads: their configs have plain multi-head attention.
  EXPECT_EQ(t["model"].contains("kv_heads"),
            GetParam().rfind("gpt2", 0) != 0 && GetParam().rfind("pythia", 0) != 0);
  const std::size_t n = t["tokens"].size();
  EXPECT_EQ(t["attention"][0][0].size(), n);
  EXPECT_EQ(t["predictions"].size(), 10u);

  const CliRun g = run("generate --model '" + folder_.string() +
                       "' --text 'The cat sat on the mat.' -n 4 --temperature 0.8 --top-k 20 "
                       "--seed 3 --backend cpu -o -");
  ASSERT_EQ(g.exit_code, 0) << g.out;
  const nlohmann::json gt = nlohmann::json::parse(g.out);
  EXPECT_EQ(gt["model"]["kind"], t["model"]["kind"]);
  const std::size_t total = gt["tokens"].size();
  ASSERT_GT(total, n);
  ASSERT_LE(total, n + 4);
  for (std::size_t i = 0; i < total; ++i) {
    EXPECT_EQ(gt["tokens"][i].value("generated", false), i >= n) << i;
    EXPECT_EQ(gt["tokens"][i].contains("predictions"), i >= n) << i;
  }
  EXPECT_EQ(gt["tokens"][n]["predictions"].size(), 10u);
  EXPECT_EQ(gt["attention"][0][0].size(), total);
  EXPECT_EQ(gt["attention"][0][0][total - 1].size(), total);
  // The same seed gives the same continuation
  const CliRun again = run("generate --model '" + folder_.string() +
                           "' --text 'The cat sat on the mat.' -n 4 --temperature 0.8 --top-k 20 "
                           "--seed 3 --backend cpu");
  // (Token ids; the last bits of the floats may differ with how the threads split the work.)
  ASSERT_EQ(again.exit_code, 0);
  const nlohmann::json at = nlohmann::json::parse(again.out);
  ASSERT_EQ(at["tokens"].size(), total);
  for (std::size_t i = 0; i < total; ++i) EXPECT_EQ(at["tokens"][i]["id"], gt["tokens"][i]["id"]);
}

INSTANTIATE_TEST_SUITE_P(Families, DecoderCli,
                         ::testing::ValuesIn(attnscope::test::plus(
                             attnscope::test::family_fixtures(), {"gpt2-tiny-f32"})),
                         attnscope::test::FixtureTestName());

TEST(GenerateCli, BadOptionsAreUsageErrors) {
  if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built";
  EXPECT_EQ(run("generate --text hi --temperature -1 2>/dev/null").exit_code, 2);
  EXPECT_EQ(run("generate --text hi -n -3 2>/dev/null").exit_code, 2);
  // The lesson model has no next token to write.
  EXPECT_EQ(run("generate --model lesson --text 'a b' 2>/dev/null").exit_code, 2);
}

}  // namespace

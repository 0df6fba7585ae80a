// `attnscope tokenize` on folders that hold only tokenizer files (no config.json, no weights): the
// tokens as JSON, with --special adding what the post-processor adds, and a one-line error for a
// broken tokenizer file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;
const fs::path kNpm = fs::path(ATTNSCOPE_TEST_DATA) / "npm";

struct CliRun {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};

CliRun run(const std::string& args) {
  const fs::path exe = fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
  const fs::path err =
      fs::temp_directory_path() / ("attnscope_tok_err_" + std::to_string(getpid()));
  std::string cmd = "'";
  cmd.append(exe.string())
      .append("' ")
      .append(args)
      .append(" 2>'")
      .append(err.string())
      .append("'");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "", "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int status = pclose(p);
  std::ifstream in(err);
  std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, message};
}

class TokenizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(fs::read_symlink("/proc/self/exe").parent_path() / "attnscope")) {
      GTEST_SKIP() << "the app was not built";
    }
    ASSERT_TRUE(fs::exists(kNpm / "mistral" / "tokenizer.json"))
        << "run scripts/fetch_test_data.sh";
  }
};

TEST_F(TokenizeCli, FolderWithOnlyTokenizerFiles) {
  const std::string folder = (kNpm / "mistral").string();
  CliRun r = run("tokenize --model '" + folder + "' --text 'Hello world'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json tokens = nlohmann::json::parse(r.out)["tokens"];
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0]["id"], 22557);
  EXPECT_EQ(tokens[0]["text"], "\u2581Hello");
  EXPECT_EQ(tokens[1]["start"], 5);
  EXPECT_EQ(tokens[1]["end"], 11);
  r = run("tokenize --model '" + folder + "' --text 'Hello world' --special");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  tokens = nlohmann::json::parse(r.out)["tokens"];
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[0]["id"], 1);  // <s> from the template
  EXPECT_EQ(tokens[0]["special"], true);
  EXPECT_EQ(tokens[0]["start"], -1);
}

TEST_F(TokenizeCli, BrokenTokenizerFileIsAOneLineError) {
  const fs::path folder =
      fs::temp_directory_path() / ("attnscope_tok_cli_" + std::to_string(getpid()));
  fs::create_directories(folder);
  std::ofstream(folder / "tokenizer.json")
      << R"({"added_tokens": [{"id": -1, "content": "<s>"}], "model": {"type": "BPE", "vocab": {}, "merges": []}})";
  const CliRun r = run("tokenize --model '" + folder.string() + "' --text hi");
  fs::remove_all(folder);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("added_tokens[0]"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace

// `--weighting raw|value-norm` on export, render and heads (issue 27). The lesson model's
// value-norm export against the same weighting computed here from its raw export and its word
// vectors (W_O = I, v_j = the word vector); stored traces with and without value norms; bad values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/model/lesson/word_vectors.h"
#include "tests/common/shell.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path exe() {
  return test::app_exe();
}

test::ShellRun run(const std::string& args, bool with_stderr = false) {
  return test::run_app(args, with_stderr);
}

// One word the vectors do not know (id -1, norm 0) among ones they do.
const char* kText = "she sat on the bank of the zqxjv river";

class WeightingCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(exe())) GTEST_SKIP() << "the app was not built";
    dir_ = fs::temp_directory_path() / ("attnscope_weighting_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(WeightingCli, LessonExportMatchesTheWordVectorsNorms) {
  const auto raw = run(std::string("export --text '") + kText + "'");
  const auto weighted = run(std::string("export --text '") + kText + "' --weighting value-norm");
  ASSERT_EQ(raw.exit_code, 0);
  ASSERT_EQ(weighted.exit_code, 0);
  const json a = json::parse(raw.output), w = json::parse(weighted.output);
  EXPECT_FALSE(a.contains("weighting"));
  EXPECT_EQ(w["weighting"], "value-norm");
  ASSERT_TRUE(w.contains("value_norms"));

  // n_j = ‖word vector of token j‖ (0 for an unknown word), from the asset itself.
  const auto vectors = lesson_word_vectors();
  const json& tokens = a["tokens"];
  const std::size_t n = tokens.size();
  std::vector<double> norms(n, 0.0);
  bool unknown_seen = false;
  for (std::size_t j = 0; j < n; ++j) {
    const int id = tokens[j]["id"].get<int>();
    if (id >= 0) norms[j] = vectors->vectors.row(id).cast<double>().norm();
    unknown_seen |= id < 0;
    EXPECT_NEAR(w["value_norms"][0][0][j].get<double>(), norms[j], 1e-6);
  }
  EXPECT_TRUE(unknown_seen);
  double worst = 0;
  for (std::size_t h = 0; h < a["attention"][0].size(); ++h)
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j)
        sum += a["attention"][0][h][i][j].get<double>() * norms[j];
      double row = 0;
      for (std::size_t j = 0; j < n; ++j) {
        const double expected =
            sum > 0 ? a["attention"][0][h][i][j].get<double>() * norms[j] / sum : 0;
        const double got = w["attention"][0][h][i][j].get<double>();
        worst = std::max(worst, std::abs(got - expected));
        row += got;
      }
      if (sum > 0) {
        EXPECT_NEAR(row, 1.0, 1e-5);
      }
    }
  EXPECT_LE(worst, 1e-6);
}

TEST_F(WeightingCli, BadValueIsAOneLineUsageError) {
  for (const char* sub : {"export --text hi", "render -o x.svg", "heads --text hi"}) {
    const auto r = run(std::string(sub) + " --weighting values", true);
    EXPECT_EQ(r.exit_code, 2) << sub << ": " << r.output;
    EXPECT_TRUE(test::one_line_containing(r.output, "--weighting")) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

TEST_F(WeightingCli, RenderAndHeadsTakeIt) {
  const auto r = run("render --weighting value-norm -o " + path("f.svg"), true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(path("f.svg")));
  // The figure's title says what it shows.
  std::ifstream svg(path("f.svg"));
  const std::string figure((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(figure.find("weighted by \xE2\x80\x96value\xE2\x80\x96"), std::string::npos);
  ASSERT_EQ(run("render -o " + path("raw.svg")).exit_code, 0);
  std::ifstream raw_svg(path("raw.svg"));
  const std::string raw_figure((std::istreambuf_iterator<char>(raw_svg)),
                               std::istreambuf_iterator<char>());
  EXPECT_EQ(raw_figure.find("weighted by"), std::string::npos);
  const auto h = run(std::string("heads --text '") + kText + "' --weighting value-norm --json");
  ASSERT_EQ(h.exit_code, 0);
  EXPECT_EQ(json::parse(h.output)["weighting"], "value-norm");
  const auto plain = run(std::string("heads --text '") + kText + "' --json");
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_FALSE(json::parse(plain.output).contains("weighting"));
}

// A stored raw trace with value norms is weighted when read; one without them gets one clear line.
TEST_F(WeightingCli, StoredTraces) {
  const auto raw = run(std::string("export --text '") + kText + "'");
  ASSERT_EQ(raw.exit_code, 0);
  json doc = json::parse(raw.output);
  // Norms that differ between keys (the lesson's are all 1 or 0), so the weighting shows.
  const std::size_t n = doc["tokens"].size();
  for (std::size_t j = 0; j < n; ++j) doc["value_norms"][0][0][j] = 1.0 + static_cast<double>(j);
  std::ofstream(path("t.json")) << doc.dump();
  const auto plain = run("heads --trace " + path("t.json") + " --json");
  const auto weighted = run("heads --trace " + path("t.json") + " --json --weighting value-norm");
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(weighted.exit_code, 0);
  const json p = json::parse(plain.output), w = json::parse(weighted.output);
  EXPECT_EQ(w["weighting"], "value-norm");
  // Later keys weigh more: the mean distance of the head changes.
  EXPECT_NE(p["heads"][0]["distance"], w["heads"][0]["distance"]);
  const auto fig =
      run("render --trace " + path("t.json") + " --weighting value-norm -o " + path("t.svg"), true);
  EXPECT_EQ(fig.exit_code, 0) << fig.output;

  doc.erase("value_norms");
  std::ofstream(path("bare.json")) << doc.dump();
  for (const char* sub : {"heads", "render -o " /* figure */}) {
    std::string args = sub;
    if (args.rfind("render", 0) == 0) args += path("bare.svg");
    const auto r = run(args + " --trace " + path("bare.json") + " --weighting value-norm", true);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(test::one_line_containing(r.output, "value_norms")) << r.output;
    EXPECT_TRUE(test::one_line_containing(r.output, "bare.json")) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  // Raw is the default: the bare trace reads as before.
  EXPECT_EQ(run("heads --trace " + path("bare.json")).exit_code, 0);
}

TEST_F(WeightingCli, SafetensorsExportReadsBackWeighted) {
  const auto r = run(std::string("export --text '") + kText +
                     "' --weighting value-norm --format safetensors -o " + path("t.safetensors"));
  ASSERT_EQ(r.exit_code, 0);
  const auto h = run("heads --trace " + path("t.safetensors") + " --json");
  ASSERT_EQ(h.exit_code, 0);
  EXPECT_EQ(json::parse(h.output)["weighting"], "value-norm");
}

}  // namespace
}  // namespace attnscope

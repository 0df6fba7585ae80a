// `attnscope predict`, `lens` and `heads --effect` (issue 27) as a user runs them: the JSON
// contracts, the commands against each other and against `export`'s predictions (a different code
// path), and bad input as one line with exit code 2. The numbers themselves are checked against
// the float64 reference in intervention_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/common/shell.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string llama() {
  return (fs::path(ATTNSCOPE_FIXTURES) / "llama-tiny").string();
}

test::ShellRun run(const std::string& args, bool with_stderr = false) {
  return test::run_app(args, with_stderr);
}

json run_json(const std::string& args) {
  const test::ShellRun r = run(args);
  EXPECT_EQ(r.exit_code, 0) << args;
  return json::parse(r.output);
}

const std::string kText = "the cat sat on the mat and the cat";

TEST(PredictCli, CleanPredictionsFollowTheContractAndMatchExport) {
  const json p = run_json("predict -m " + llama() + " -t '" + kText + "'");
  EXPECT_EQ(p["format"], "attnscope-predict/1");
  EXPECT_EQ(p["model"]["kind"], "llama");
  EXPECT_GT(p["model"]["layers"].get<int>(), 0);
  EXPECT_GT(p["model"]["heads"].get<int>(), 0);
  EXPECT_EQ(p["text"], kText);
  const int n = static_cast<int>(p["tokens"].size());
  ASSERT_GT(n, 3);
  EXPECT_TRUE(p["tokens"][0].contains("id"));
  EXPECT_EQ(p["at"], n - 1);
  EXPECT_EQ(p["interventions"]["ablate"], json::array());
  EXPECT_EQ(p["interventions"]["knockout"], json::array());
  EXPECT_EQ(p["interventions"]["ablate_mode"], "zero");
  const json& top = p["predictions"];
  ASSERT_EQ(top.size(), 10u);
  double total = 0;
  for (std::size_t i = 0; i < top.size(); ++i) {
    EXPECT_NEAR(std::exp(top[i]["logprob"].get<double>()), top[i]["probability"].get<double>(),
                1e-9);
    if (i > 0) {
      EXPECT_LE(top[i]["probability"], top[i - 1]["probability"]);
    }
    total += top[i]["probability"].get<double>();
  }
  EXPECT_LE(total, 1.0 + 1e-9);
  // export's trace carries the same top predictions, computed by another path.
  const json trace = run_json("export -m " + llama() + " -t '" + kText + "'");
  ASSERT_EQ(trace["predictions"].size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(trace["predictions"][i]["id"], top[i]["id"]);
    EXPECT_NEAR(trace["predictions"][i]["probability"].get<double>(),
                top[i]["probability"].get<double>(), 1e-5);
  }
  EXPECT_EQ(run_json("predict -m " + llama() + " -t '" + kText + "' --top 3")["predictions"].size(),
            3u);
}

TEST(PredictCli, InterventionsAreRecordedAndChangeThePrediction) {
  const json clean = run_json("predict -m " + llama() + " -t '" + kText + "' --at 4");
  EXPECT_EQ(clean["at"], 4);
  const json p =
      run_json("predict -m " + llama() + " -t '" + kText +
               "' --at 4 --ablate 0.1,1.0 --ablate-mode mean --knockout '1:4>0,0.2:4>3'");
  EXPECT_EQ(p["interventions"]["ablate"], json::parse("[[0,1],[1,0]]"));
  EXPECT_EQ(p["interventions"]["ablate_mode"], "mean");
  EXPECT_EQ(p["interventions"]["knockout"], json::parse("[[1,null,4,0],[0,2,4,3]]"));
  // Another top 10, or the same ids with other log-probabilities.
  double change = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    const json &a = clean["predictions"][i], &b = p["predictions"][i];
    change =
        std::max(change, a["id"] != b["id"]
                             ? 1.0
                             : std::abs(a["logprob"].get<double>() - b["logprob"].get<double>()));
  }
  EXPECT_GT(change, 1e-6) << "switching heads off changed nothing";
  // A knockout of a key the query cannot see (a later one) changes nothing.
  const json same =
      run_json("predict -m " + llama() + " -t '" + kText + "' --at 4 --knockout '0:4>6'");
  for (std::size_t i = 0; i < 10; ++i)
    EXPECT_NEAR(same["predictions"][i]["logprob"].get<double>(),
                clean["predictions"][i]["logprob"].get<double>(), 1e-5);
}

TEST(LensCli, EveryBlockFromTheEmbeddingToThePrediction) {
  const json lens = run_json("lens -m " + llama() + " -t '" + kText + "' --top 5");
  EXPECT_EQ(lens["format"], "attnscope-lens/1");
  const int layers = lens["model"]["layers"];
  ASSERT_EQ(static_cast<int>(lens["layers"].size()), layers + 1);
  for (int b = -1; b < layers; ++b) {
    EXPECT_EQ(lens["layers"][b + 1]["after_block"], b);
    EXPECT_EQ(lens["layers"][b + 1]["top"].size(), 5u);
  }
  const json p = run_json("predict -m " + llama() + " -t '" + kText + "' --top 5");
  EXPECT_EQ(lens["at"], p["at"]);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(lens["layers"][layers]["top"][i]["id"], p["predictions"][i]["id"]);
    EXPECT_NEAR(lens["layers"][layers]["top"][i]["probability"].get<double>(),
                p["predictions"][i]["probability"].get<double>(), 1e-5);
  }
}

TEST(HeadsEffectCli, EffectIsTheAblatedPredictionsChangeAndSortsMostNegativeFirst) {
  const json h =
      run_json("heads -m " + llama() + " -t '" + kText + "' --effect --sort effect --json");
  const json p = run_json("predict -m " + llama() + " -t '" + kText + "' --top 1");
  ASSERT_TRUE(h.contains("effect_target"));
  EXPECT_EQ(h["effect_target"]["id"], p["predictions"][0]["id"]);
  EXPECT_NEAR(h["effect_target"]["logprob"].get<double>(),
              p["predictions"][0]["logprob"].get<double>(), 1e-5);
  const json& heads = h["heads"];
  ASSERT_EQ(static_cast<int>(heads.size()),
            h["model"]["layers"].get<int>() * h["model"]["heads"].get<int>());
  for (std::size_t i = 1; i < heads.size(); ++i)
    EXPECT_LE(heads[i - 1]["effect"].get<double>(), heads[i]["effect"].get<double>());
  for (const auto& row : heads) EXPECT_TRUE(row["dla"].is_number());
  // The first head's effect is what predict says with that head switched off.
  const int target = h["effect_target"]["id"];
  const std::string head = std::to_string(heads[0]["layer"].get<int>()) + "." +
                           std::to_string(heads[0]["head"].get<int>());
  const json ablated =
      run_json("predict -m " + llama() + " -t '" + kText + "' --top 64000 --ablate " + head);
  double logprob = NAN;
  for (const auto& q : ablated["predictions"])
    if (q["id"] == target) logprob = q["logprob"];
  EXPECT_NEAR(logprob - h["effect_target"]["logprob"].get<double>(),
              heads[0]["effect"].get<double>(), 1e-5);
  // A chosen target, and the table.
  const json t = run_json("heads -m " + llama() + " -t '" + kText + "' --effect --target 7 --json");
  EXPECT_EQ(t["effect_target"]["id"], 7);
  const test::ShellRun table = run("heads -m " + llama() + " -t '" + kText + "' --effect --top 3");
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.output.find("effect"), std::string::npos);
  EXPECT_NE(table.output.find("dla"), std::string::npos);
}

TEST(PredictCli, BadInputIsOneLineAndExitTwo) {
  // On the CPU: `auto` adds a line saying why it chose it.
  const std::string m = "-b cpu -m " + llama() + " -t '" + kText + "' ";
  const std::string bert = (fs::path(ATTNSCOPE_FIXTURES) / "bert-tiny-uncased-f32").string();
  const struct {
    std::string args, says;
  } cases[] = {
      {"predict -b cpu -m lesson -t 'the bank'", "decoder"},
      {"lens -b cpu -m " + bert + " -t 'the bank'", "decoder"},
      {"heads -b cpu -m lesson -t 'the bank' --effect", "decoder"},
      {"predict " + m + "--ablate 99.0", "layer 99"},
      {"predict " + m + "--ablate 0.99", "head 99"},
      {"predict " + m + "--ablate 1", "LAYER.HEAD"},
      {"predict " + m + "--knockout '0:0>0'", "without a key"},
      {"predict " + m + "--knockout '0:999>0'", "query 999"},
      {"predict " + m + "--knockout 0:1", "QUERY>KEY"},
      {"predict " + m + "--at 999", "--at 999"},
      {"lens " + m + "--at 999", "--at 999"},
      {"heads " + m + "--effect --target 999999999", "--target 999999999"},
      {"heads " + m + "--target 3", "--effect"},
  };
  for (const auto& c : cases) {
    const test::ShellRun r = run(c.args, true);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_TRUE(test::one_line_containing(r.output, c.says)) << c.args << "\n" << r.output;
    EXPECT_LE(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  const test::ShellRun help = run("predict --help", true);
  EXPECT_NE(help.output.find("Quote"), std::string::npos) << help.output;
}

}  // namespace
}  // namespace attnscope

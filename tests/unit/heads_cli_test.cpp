// `attnscope heads`: the head summaries of every layer and head, as a table and as JSON
// (attnscope-heads/1), checked against the same summaries computed here, naively, from the trace
// that `attnscope export` writes for the same model and text.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/common/shell.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path exe() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

// The command line built with append: `"'" + std::string` trips GCC 12's false -Wrestrict.
std::string command(const std::string& args, const std::string& redirect) {
  std::string cmd = "'";
  return cmd.append(exe().string()).append("' ").append(args).append(redirect);
}

test::ShellRun run(const std::string& args) {
  return test::run_shell(command(args, " 2>/dev/null"));
}

// The summaries of one [n x n] head from the exported JSON, by the definitions in
// core/analysis/head_summary.h, in double.
json reference_summaries(const json& head, const json& tokens) {
  const size_t n = head.size();
  double entropy = 0, distance = 0, first = 0, previous = 0, diagonal = 0, induction = 0;
  int live = 0, with_previous = 0, with_copy = 0;
  for (size_t i = 0; i < n; ++i) {
    double total = 0;
    for (size_t j = 0; j < n; ++j) total += head[i][j].get<double>();
    if (total <= 0) continue;
    ++live;
    bool copy = false;
    double copy_mass = 0;
    for (size_t j = 0; j < n; ++j) {
      const double p = head[i][j].get<double>() / total;
      if (p > 0) entropy -= p * std::log2(p);
      distance += p * std::fabs(static_cast<double>(i) - static_cast<double>(j));
      if (j < i && tokens[j]["id"] == tokens[i]["id"] && tokens[i]["id"].get<int>() >= 0) {
        copy = true;
        copy_mass += head[i][j + 1].get<double>() / total;
      }
    }
    first += head[i][0].get<double>() / total;
    diagonal += head[i][i].get<double>() / total;
    if (i > 0) {
      previous += head[i][i - 1].get<double>() / total;
      ++with_previous;
    }
    if (copy) {
      induction += copy_mass;
      ++with_copy;
    }
  }
  auto mean = [](double s, int k) { return k ? s / k : 0.0; };
  return {{"entropy", mean(entropy, live)},   {"distance", mean(distance, live)},
          {"first", mean(first, live)},       {"previous", mean(previous, with_previous)},
          {"diagonal", mean(diagonal, live)}, {"induction", mean(induction, with_copy)}};
}

void expect_heads_match_export(const std::string& model_args, const std::string& text) {
  SCOPED_TRACE(model_args);
  const auto e = run("export " + model_args + " --text '" + text + "' --backend cpu");
  ASSERT_EQ(e.exit_code, 0);
  const json trace = json::parse(e.output);
  const auto h = run("heads " + model_args + " --text '" + text + "' --backend cpu --json");
  ASSERT_EQ(h.exit_code, 0);
  const json doc = json::parse(h.output);
  EXPECT_EQ(doc["format"], "attnscope-heads/1");
  const int layers = trace["model"]["layers"], heads = trace["model"]["heads"];
  EXPECT_EQ(doc["model"]["layers"], layers);
  EXPECT_EQ(doc["model"]["heads"], heads);
  EXPECT_EQ(doc["token_count"], trace["tokens"].size());
  ASSERT_EQ(doc["heads"].size(), static_cast<size_t>(layers * heads));
  ASSERT_EQ(doc["keys"].size(), 6u);
  for (const json& row : doc["heads"]) {
    const int l = row["layer"], hd = row["head"];
    const json ref = reference_summaries(trace["attention"][l][hd], trace["tokens"]);
    for (const json& key : doc["keys"]) {
      const std::string name = key["name"];
      EXPECT_NEAR(row[name].get<double>(), ref[name].get<double>(),
                  1e-5 * (1 + std::fabs(ref[name].get<double>())))
          << "layer " << l << " head " << hd << " " << name;
    }
  }
}

TEST(HeadsCli, LessonModelMatchesItsExport) {
  if (!fs::exists(exe())) GTEST_SKIP() << "the app was not built";
  expect_heads_match_export("", "she sat on the bank of the river and the bank");
}

TEST(HeadsCli, FixtureDecoderAndEncoderMatchTheirExport) {
  if (!fs::exists(exe())) GTEST_SKIP() << "the app was not built";
  for (const char* name : {"llama-tiny", "bert-tiny-uncased-f32", "gpt2-tiny-f32"}) {
    const fs::path folder = fs::path(ATTNSCOPE_FIXTURES) / name;
    if (!fs::exists(folder / "config.json")) GTEST_SKIP() << "no fixture " << name;
    expect_heads_match_export("--model '" + folder.string() + "'",
                              "The cat sat on the mat. The cat sat on the mat.");
  }
}

TEST(HeadsCli, SortTopTableAndStoredTrace) {
  if (!fs::exists(exe())) GTEST_SKIP() << "the app was not built";
  const fs::path folder = fs::path(ATTNSCOPE_FIXTURES) / "llama-tiny";
  if (!fs::exists(folder / "config.json")) GTEST_SKIP() << "no fixture";
  const std::string model = "--model '" + folder.string() + "' --backend cpu ";
  const std::string text = "--text 'a b c d e a b c d e a b c d e' ";
  const auto sorted = run("heads " + model + text + "--sort induction --top 3 --json");
  ASSERT_EQ(sorted.exit_code, 0);
  const json rows = json::parse(sorted.output)["heads"];
  ASSERT_EQ(rows.size(), 3u);
  const json all = json::parse(run("heads " + model + text + "--json").output)["heads"];
  double best = 0;
  for (const json& r : all) best = std::max(best, r["induction"].get<double>());
  EXPECT_EQ(rows[0]["induction"].get<double>(), best);
  EXPECT_GE(rows[0]["induction"].get<double>(), rows[1]["induction"].get<double>());
  EXPECT_GE(rows[1]["induction"].get<double>(), rows[2]["induction"].get<double>());
  // Entropy sorts ascending: a focused head is the notable one.
  const json low = json::parse(run("heads " + model + text + "--sort entropy --json").output);
  EXPECT_LE(low["heads"][0]["entropy"].get<double>(), low["heads"][1]["entropy"].get<double>());

  // The table: a header naming every key, then one line per head.
  const auto table = run("heads " + model + text);
  ASSERT_EQ(table.exit_code, 0);
  std::istringstream lines(table.output);
  std::string header, line;
  std::getline(lines, header);
  for (const char* key :
       {"layer", "head", "entropy", "distance", "first", "previous", "diagonal", "induction"})
    EXPECT_NE(header.find(key), std::string::npos) << key;
  size_t count = 0;
  while (std::getline(lines, line)) ++count;
  EXPECT_EQ(count, all.size());

  // A stored trace gives the same numbers as the model.
  const fs::path dir = fs::temp_directory_path() / ("heads_cli_" + std::to_string(getpid()));
  fs::create_directories(dir);
  ASSERT_EQ(run("export " + model + text + "-o '" + (dir / "t.json").string() + "'").exit_code, 0);
  const auto stored = run("heads --json --trace '" + (dir / "t.json").string() + "'");
  ASSERT_EQ(stored.exit_code, 0);
  const json from_file = json::parse(stored.output)["heads"];
  ASSERT_EQ(from_file.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i)
    EXPECT_NEAR(from_file[i]["entropy"].get<double>(), all[i]["entropy"].get<double>(), 1e-6);
  fs::remove_all(dir);
}

TEST(HeadsCli, UsageAndRuntimeErrors) {
  if (!fs::exists(exe())) GTEST_SKIP() << "the app was not built";
  EXPECT_EQ(run("heads").exit_code, 2);                          // no text
  EXPECT_EQ(run("heads --text x --sort nope").exit_code, 2);     // unknown key
  EXPECT_EQ(run("heads --text x --top 0").exit_code, 2);         // not a positive count
  EXPECT_EQ(run("heads --text x --trace t.json").exit_code, 2);  // both
  EXPECT_EQ(run("heads --trace /nonexistent/t.json").exit_code, 1);
  const auto err = test::run_shell(command("heads", " 2>&1 >/dev/null"));
  EXPECT_NE(err.output.find("--text"), std::string::npos) << err.output;
}

}  // namespace
}  // namespace attnscope

// Sessions in the running app under Xvfb: `--session FILE` opens the saved state (the layout file
// reports what the app then shows), what the app shows saves and reopens as the same state, a bad
// session leaves the app as it was with a message naming file and key, and files dropped on the
// window open as sessions or model folders.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "gui_test_util.h"

namespace attnscope {
namespace {

using test::read_json;
using test::run_app;
using test::shell_quote;

struct AppRun {
  int rc = -1;
  nlohmann::json layout;
  std::string stderr_text;
};

AppRun run(const std::string& args) {
  AppRun r;
  const std::string dir = test::temp_dir();
  const std::string json = dir + "/layout.json", err = dir + "/stderr.txt";
  r.rc = run_app("--window 1280x720 --screenshot " + shell_quote(dir + "/shot.png") + " --layout " +
                     shell_quote(json) + " " + args,
                 err);
  std::ifstream e(err);
  r.stderr_text.assign(std::istreambuf_iterator<char>(e), {});
  if (std::ifstream(json)) r.layout = read_json(json);
  return r;
}

std::string write(const std::string& name, const std::string& content) {
  const std::string path = test::temp_dir() + "/" + name;
  std::ofstream(path) << content;
  return path;
}

const std::string kSession = R"({
  "format": "attnscope-session/1",
  "model": "lesson",
  "lesson": {"beta": 8, "heads": 2, "mask_self": false},
  "texts": [{"text": "the mouse ran under the desk", "selected_token": 1,
             "generation": {"tokens": 7, "temperature": 0.5, "top_k": 3, "seed": 99}},
            {"text": "click the mouse button", "label": "computer"}],
  "show_second": true,
  "view": {"mode": "explore", "layer": 0, "head": 1, "model_sort": "entropy",
           "model_filter": "first", "model_filter_min": 0.25},
  "display": {"theme": "light", "colormap": "magma", "fixed_range": true, "font_scale": 1.2}
})";

TEST(Session, OpensTheSavedState) {
  const std::string file = write("mouse.attnscope", kSession);
  AppRun r = run("--session " + shell_quote(file));
  ASSERT_EQ(r.rc, 0) << r.stderr_text;
  const auto& st = r.layout["state"];
  EXPECT_EQ(st["lesson"]["beta"], 8.0);
  EXPECT_EQ(st["lesson"]["heads"], 2);
  EXPECT_EQ(st["lesson"]["mask_self"], false);
  EXPECT_EQ(st["texts"][0]["text"], "the mouse ran under the desk");
  EXPECT_EQ(st["texts"][0]["selected_token"], 1);
  EXPECT_EQ(st["texts"][1]["label"], "computer");
  EXPECT_EQ(st["view"]["head"], 1);
  EXPECT_EQ(st["view"]["model_sort"], "entropy");
  EXPECT_EQ(st["view"]["model_filter"], "first");
  EXPECT_NEAR(st["view"]["model_filter_min"].get<double>(), 0.25, 1e-6);
  const auto& generation = st["texts"][0]["generation"];
  EXPECT_EQ(generation["tokens"], 7);
  EXPECT_NEAR(generation["temperature"].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(generation["top_k"], 3);
  EXPECT_EQ(generation["seed"], 99);
  EXPECT_EQ(st["texts"][1]["generation"]["tokens"], 16) << "the app's default";
  EXPECT_EQ(st["display"]["colormap"], "magma");
  EXPECT_EQ(st["display"]["fixed_range"], true);
  EXPECT_NEAR(st["display"]["font_scale"].get<double>(), 1.2, 1e-6);
  EXPECT_EQ(r.layout["theme"], "light");
  EXPECT_EQ(r.layout["colormap"], "magma");
  EXPECT_EQ(r.layout["session_path"], file);
  // The model computed with the session's options and texts.
  EXPECT_EQ(r.layout["traces"][0]["text"], "the mouse ran under the desk");
  EXPECT_EQ(r.layout["traces"][1]["text"], "click the mouse button");
}

TEST(Session, WhatTheAppShowsRoundTrips) {
  // A state built from the command line (in the lesson, step 5) ...
  AppRun first = run("--text " + shell_quote("dogs chase cats in the park") + " --text2 " +
                     shell_quote("cats sleep") + " --theme light --lesson 5");
  ASSERT_EQ(first.rc, 0) << first.stderr_text;
  const nlohmann::json saved = first.layout["state"];
  EXPECT_EQ(saved["view"]["mode"], "lesson");
  EXPECT_EQ(saved["view"]["lesson_step"], 5);
  // ... saved, then opened in a fresh app, is the same state.
  const std::string file = write("round.attnscope", saved.dump(2));
  AppRun second = run("--session " + shell_quote(file));
  ASSERT_EQ(second.rc, 0) << second.stderr_text;
  EXPECT_EQ(second.layout["state"], saved);
  EXPECT_EQ(second.layout["traces"][0]["text"], "dogs chase cats in the park");
  // The explorer's second sentence comes back when the lesson is left.
  AppRun left = run("--session " + shell_quote(file) + " --keys escape");
  EXPECT_EQ(left.layout["state"]["view"]["mode"], "explore");
  EXPECT_EQ(left.layout["traces"][1]["text"], "cats sleep");
}

TEST(Session, ABadSessionKeepsTheState) {
  struct Bad {
    std::string content, key;
  } cases[] = {
      {R"({"format": "attnscope-session/1", "view": {"layer": "x"}})", "view.layer"},
      {R"({"format": "attnscope-session/1", "lesson": {"heads": 3}})", "lesson.heads"},
      {R"({"format": "attnscope-session/1", "display": {"colormap": "rainbow"}})",
       "display.colormap"},
      {R"({"format": "attnscope-trace/1"})", "format"},
      {std::string(100000, '[') + std::string(100000, ']'), "nested"},
      {"not json at all", "not JSON"},
  };
  for (const Bad& bad : cases) {
    const std::string file = write("bad.attnscope", bad.content);
    AppRun r = run("--session " + shell_quote(file));
    SCOPED_TRACE(bad.key);
    EXPECT_EQ(r.rc, 1);  // a headless run that could not do what was asked
    EXPECT_NE(r.stderr_text.find(file), std::string::npos) << r.stderr_text;
    EXPECT_NE(r.stderr_text.find(bad.key), std::string::npos) << r.stderr_text;
    // Nothing of it was applied: the built-in example is shown.
    ASSERT_TRUE(r.layout.is_object());
    EXPECT_EQ(r.layout["traces"][0]["text"],
              "she sat on the bank of the river and watched the water");
    EXPECT_EQ(r.layout["session_path"], "");
    EXPECT_EQ(r.layout["colormap"], "viridis");
  }
  AppRun missing = run("--session /nonexistent/x.attnscope");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.stderr_text.find("no such file"), std::string::npos);
}

TEST(Session, DroppedFilesAndFolders) {
  // A session, whatever its extension when its content says so.
  const std::string json = write("mouse.json", kSession);
  AppRun session = run("--drop " + shell_quote(json));
  ASSERT_EQ(session.rc, 0) << session.stderr_text;
  EXPECT_EQ(session.layout["traces"][0]["text"], "the mouse ran under the desk");
  EXPECT_EQ(session.layout["session_path"], json);
  ASSERT_FALSE(session.layout["recent_sessions"].empty());
  // A folder is opened as a model (this one is not a model: the error names it, the lesson model
  // stays).
  const std::string folder = test::temp_dir();
  AppRun model = run("--drop " + shell_quote(folder));
  EXPECT_NE(model.layout["model_error"].get<std::string>().find(folder), std::string::npos)
      << model.layout["model_error"];
  EXPECT_EQ(model.layout["model"], "lesson");
  // A real model folder opens: its name and its tokens are shown.
  AppRun gpt2 = run("--drop " + shell_quote(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32"));
  ASSERT_EQ(gpt2.rc, 0) << gpt2.stderr_text;
  EXPECT_EQ(gpt2.layout["model"], "gpt2-tiny-f32");
  EXPECT_EQ(gpt2.layout["model_error"], "");
  EXPECT_EQ(gpt2.layout["state"]["model"], ATTNSCOPE_FIXTURES "/gpt2-tiny-f32");
  EXPECT_FALSE(gpt2.layout["traces"][0]["tokens"].empty());
  // A stored trace opens as `attnscope view FILE` would; a session saved then names its file.
  const std::string trace = test::temp_dir() + "/stored.json";
  ASSERT_EQ(run_app("export --text " + shell_quote("the cat sat on the mat") + " -o " +
                    shell_quote(trace)),
            0);
  AppRun stored = run("--drop " + shell_quote(trace));
  ASSERT_EQ(stored.rc, 0) << stored.stderr_text;
  EXPECT_EQ(stored.layout["traces"][0]["text"], "the cat sat on the mat");
  EXPECT_EQ(stored.layout["state"]["model"], "trace:" + trace);
  const std::string saved = write("trace.attnscope", stored.layout["state"].dump());
  AppRun reopened = run("--session " + shell_quote(saved));
  ASSERT_EQ(reopened.rc, 0) << reopened.stderr_text;
  EXPECT_EQ(reopened.layout["traces"][0]["text"], "the cat sat on the mat");
  EXPECT_EQ(reopened.layout["state"]["model"], "trace:" + trace);
  // A JSON file that is no trace: the error names it, the current model stays.
  const std::string junk = write("junk.json", R"({"format": "something-else"})");
  AppRun bad = run("--drop " + shell_quote(junk));
  EXPECT_NE(bad.layout["model_error"].get<std::string>().find("junk.json"), std::string::npos)
      << bad.layout["model_error"];
  EXPECT_EQ(bad.layout["model"], "lesson");
  // Anything else is refused by name.
  const std::string text = write("notes.txt", "hello");
  AppRun other = run("--drop " + shell_quote(text));
  EXPECT_EQ(other.rc, 0);
  EXPECT_NE(other.layout["message"].get<std::string>().find("notes.txt"), std::string::npos);
  EXPECT_EQ(other.layout["traces"][0]["text"],
            "she sat on the bank of the river and watched the water");
}

// Show → weighted by ‖value‖ (issue 27): `--weighting value-norm`, or a session's "weighting",
// makes every view draw the value-weighted trace. BERT's heatmap holds the float64 reference's
// value-weighted weights (tools/reference/make_value_norm_golden.py); the command line wins over
// a session; the setting saves and reopens.
TEST(Session, ValueWeightingFromTheCommandLineAndTheSession) {
  const std::string bert = ATTNSCOPE_FIXTURES "/bert-tiny-uncased-f32";
  if (!std::ifstream(bert + "/vocab.txt")) GTEST_SKIP() << "BERT vocabulary missing";
  const std::string text = "The cat sat on the MAT.";  // the golden files' first case
  const nlohmann::json weighted_ref =
      read_json(ATTNSCOPE_TEST_DATA "/golden/value-norms-bert-tiny-uncased-f32.json")["cases"][0];
  const nlohmann::json raw_ref =
      read_json(ATTNSCOPE_TEST_DATA "/golden/bert-tiny-uncased-f32.json")["cases"][0];
  // The largest difference between the heatmap's weights and layer 0 head 0 of `ref`.
  auto worst = [](const AppRun& r, const nlohmann::json& ref) {
    const nlohmann::json* heatmap = test::find_view(r.layout, "heatmap", 0);
    if (!heatmap || !heatmap->contains("weights")) return 1.0;
    const nlohmann::json& w = (*heatmap)["weights"];
    if (w.size() != ref.size()) return 1.0;
    double d = 0;
    for (std::size_t i = 0; i < w.size(); ++i)
      for (std::size_t j = 0; j < w[i].size(); ++j)
        d = std::max(d, std::abs(w[i][j].get<double>() - ref[i][j].get<double>()));
    return d;
  };
  auto title = [](const AppRun& r) {
    const nlohmann::json* heatmap = test::find_view(r.layout, "heatmap", 0);
    return heatmap ? (*heatmap)["title"].get<std::string>() : std::string("(no heatmap)");
  };
  const std::string model = "--model " + shell_quote(bert) + " --text " + shell_quote(text);
  AppRun weighted = run(model + " --weighting value-norm");
  ASSERT_EQ(weighted.rc, 0) << weighted.stderr_text;
  EXPECT_EQ(weighted.layout["state"]["view"]["weighting"], "value-norm");
  EXPECT_NE(title(weighted).find("weighted by"), std::string::npos) << title(weighted);
  EXPECT_LE(worst(weighted, weighted_ref["value_weighted_attention"][0][0]), 1e-4);

  AppRun raw = run(model);
  ASSERT_EQ(raw.rc, 0) << raw.stderr_text;
  EXPECT_EQ(raw.layout["state"]["view"]["weighting"], "raw");
  EXPECT_EQ(title(raw).find("weighted by"), std::string::npos) << title(raw);
  EXPECT_LE(worst(raw, raw_ref["attention"][0][0]), 1e-4);

  // Saved, reopened; the command line wins over the session.
  const std::string file = write("weighted.attnscope", weighted.layout["state"].dump());
  AppRun reopened = run("--session " + shell_quote(file));
  ASSERT_EQ(reopened.rc, 0) << reopened.stderr_text;
  EXPECT_EQ(reopened.layout["state"]["view"]["weighting"], "value-norm");
  EXPECT_LE(worst(reopened, weighted_ref["value_weighted_attention"][0][0]), 1e-4);
  AppRun overridden = run("--session " + shell_quote(file) + " --weighting raw");
  ASSERT_EQ(overridden.rc, 0) << overridden.stderr_text;
  EXPECT_EQ(overridden.layout["state"]["view"]["weighting"], "raw");
  EXPECT_LE(worst(overridden, raw_ref["attention"][0][0]), 1e-4);
}

}  // namespace
}  // namespace attnscope

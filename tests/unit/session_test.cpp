// Sessions (core/session/session.h): what is saved opens as the same state, writes are atomic, and
// a hostile or broken file is refused with the file, the key, what was expected and what was
// found.
#include "core/session/session.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/model/intervention.h"
#include "core/util/atomic_file.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "attnscope-session-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Session everything_changed() {
  Session s;
  s.model = "/models/gpt2 with spaces";
  s.backend = "cpu";
  s.lesson.beta = 7.5f;
  s.lesson.mask_self = false;
  s.lesson.scale = false;
  s.lesson.causal = true;
  s.lesson.positional = true;
  s.lesson.heads = 4;
  s.lesson.mask_unknown = false;
  s.lesson.head_design = HeadDesign::kRandom;
  s.texts[0] = {"the mouse ran \xE2\x80\x94 caf\xC3\xA9 \"quoted\"\n", "animal", 2, {}};
  s.texts[0].target = "la souris a couru \xE2\x80\x94 \"cit\xC3\xA9\"";
  s.texts[1] = {"click the mouse", "", -1, {}};
  s.show_second = false;
  s.mode = "lesson";
  s.layer = 3;
  s.head = 2;
  s.active_slot = 1;
  s.lesson_step = 6;
  s.lesson_unscaled = true;
  s.lesson_predict = true;
  s.theme = "light";
  s.colormap = "magma";
  s.fixed_range = true;
  s.font_scale = 1.5f;
  s.texts[0].selected_queries = {1, 3, 4};
  s.panel = "model";
  s.aggregate = "rollout";
  s.hide_first = true;
  s.hide_special = true;
  s.query_combine = "sum";
  s.log_scale = true;
  s.log_floor = 1e-4f;
  s.overlay = true;
  s.overlay_heads = {0, 2, 5};
  s.model_sort = "previous";
  s.model_filter = "first";
  s.model_filter_min = 0.25f;
  s.texts[0].generate_tokens = 40;
  s.texts[0].temperature = 0.75f;
  s.texts[0].top_k = 5;
  s.texts[0].seed = 123456789;
  s.texts[1].generate_tokens = 3;
  return s;
}

void expect_same(const Session& a, const Session& b) {
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.lesson.beta, b.lesson.beta);
  EXPECT_EQ(a.lesson.mask_self, b.lesson.mask_self);
  EXPECT_EQ(a.lesson.scale, b.lesson.scale);
  EXPECT_EQ(a.lesson.causal, b.lesson.causal);
  EXPECT_EQ(a.lesson.positional, b.lesson.positional);
  EXPECT_EQ(a.lesson.heads, b.lesson.heads);
  EXPECT_EQ(a.lesson.mask_unknown, b.lesson.mask_unknown);
  EXPECT_EQ(a.lesson.head_design, b.lesson.head_design);
  for (int i = 0; i < kSessionSlots; ++i) {
    EXPECT_EQ(a.texts[i].text, b.texts[i].text);
    EXPECT_EQ(a.texts[i].label, b.texts[i].label);
    EXPECT_EQ(a.texts[i].target, b.texts[i].target);
    EXPECT_EQ(a.texts[i].selected_token, b.texts[i].selected_token);
  }
  EXPECT_EQ(a.show_second, b.show_second);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.layer, b.layer);
  EXPECT_EQ(a.head, b.head);
  EXPECT_EQ(a.active_slot, b.active_slot);
  EXPECT_EQ(a.lesson_step, b.lesson_step);
  EXPECT_EQ(a.lesson_unscaled, b.lesson_unscaled);
  EXPECT_EQ(a.lesson_predict, b.lesson_predict);
  EXPECT_EQ(a.theme, b.theme);
  EXPECT_EQ(a.colormap, b.colormap);
  EXPECT_EQ(a.fixed_range, b.fixed_range);
  EXPECT_EQ(a.font_scale, b.font_scale);
  for (int i = 0; i < kSessionSlots; ++i)
    EXPECT_EQ(a.texts[i].selected_queries, b.texts[i].selected_queries);
  EXPECT_EQ(a.panel, b.panel);
  EXPECT_EQ(a.aggregate, b.aggregate);
  EXPECT_EQ(a.hide_first, b.hide_first);
  EXPECT_EQ(a.hide_special, b.hide_special);
  EXPECT_EQ(a.query_combine, b.query_combine);
  EXPECT_EQ(a.log_scale, b.log_scale);
  EXPECT_EQ(a.log_floor, b.log_floor);
  EXPECT_EQ(a.overlay, b.overlay);
  EXPECT_EQ(a.overlay_heads, b.overlay_heads);
  EXPECT_EQ(a.model_sort, b.model_sort);
  EXPECT_EQ(a.model_filter, b.model_filter);
  EXPECT_EQ(a.model_filter_min, b.model_filter_min);
  for (int i = 0; i < kSessionSlots; ++i) {
    EXPECT_EQ(a.texts[i].generate_tokens, b.texts[i].generate_tokens);
    EXPECT_EQ(a.texts[i].temperature, b.texts[i].temperature);
    EXPECT_EQ(a.texts[i].top_k, b.texts[i].top_k);
    EXPECT_EQ(a.texts[i].seed, b.texts[i].seed);
  }
}

TEST(Session, RoundTripsThroughAFile) {
  const fs::path dir = temp_dir(), file = dir / "class.attnscope";
  const Session saved = everything_changed();
  write_session(file, saved);
  expect_same(read_session(file), saved);
  // Defaults round-trip too, and the document says what it is.
  write_session(file, Session{});
  expect_same(read_session(file), Session{});
  EXPECT_EQ(nlohmann::json::parse(slurp(file))["format"], "attnscope-session/1");
  fs::remove_all(dir);
}

std::string with(const std::string& body) {
  return R"({"format": "attnscope-session/1", )" + body + "}";
}

TEST(Session, MissingKeysKeepTheirDefaults) {
  Session s = parse_session(R"({"format": "attnscope-session/1", "model": "gpt2",
                                "view": {"head": 5}, "future_key": [1, 2]})",
                            "x");
  EXPECT_EQ(s.model, "gpt2");
  EXPECT_EQ(s.head, 5);
  EXPECT_EQ(s.layer, 0);
  EXPECT_EQ(s.lesson.beta, LessonOptions{}.beta);
  EXPECT_EQ(s.texts[0].text, "");
  EXPECT_FALSE(s.has_texts);  // the app keeps the sentences it shows
  EXPECT_TRUE(parse_session(with(R"("texts": [])"), "x").has_texts);
  // A file written before the model view and the sink options: one head, nothing hidden.
  EXPECT_EQ(s.panel, "sentences");
  EXPECT_EQ(s.aggregate, "");
  EXPECT_FALSE(s.hide_first || s.hide_special || s.log_scale);
  EXPECT_EQ(s.query_combine, "mean");
  EXPECT_TRUE(s.texts[0].selected_queries.empty());
}

// The error names the file and the key, what was expected and what was found.
void expect_refused(const std::string& doc, const std::string& key, const std::string& found) {
  try {
    parse_session(doc, "bad.attnscope");
    ADD_FAILURE() << "accepted: " << doc.substr(0, 200);
  } catch (const SessionError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("session 'bad.attnscope'"), std::string::npos) << m;
    EXPECT_NE(m.find(key), std::string::npos) << m;
    EXPECT_NE(m.find("expected"), std::string::npos) << m;
    EXPECT_NE(m.find(found), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  }
}

TEST(Session, HostileDocumentsAreRefusedWithTheKey) {
  expect_refused("{}", "\"format\"", "no such key");
  expect_refused(R"({"format": "attnscope-trace/1"})", "\"format\"", "attnscope-trace/1");
  expect_refused(R"({"format": 1})", "\"format\"", "an integer 1");
  expect_refused("[1, 2]", "expected a JSON object", "an array");
  expect_refused("{\"format\": ", "not JSON", "parse");
  expect_refused(with(R"("model": 42)"), "\"model\"", "an integer 42");
  expect_refused(with(R"("model": "")"), "\"model\"", "\"\"");
  expect_refused(with(R"("backend": "tpu")"), "\"backend\"", "\"tpu\"");
  expect_refused(with(R"("lesson": {"beta": -1})"), "\"lesson.beta\"", "-1");
  expect_refused(with(R"("lesson": {"beta": 1e308})"), "\"lesson.beta\"", "a number");
  expect_refused(with(R"("lesson": {"beta": "sharp"})"), "\"lesson.beta\"", "a string");
  expect_refused(with(R"("lesson": {"heads": 3})"), "\"lesson.heads\"", "3");
  expect_refused(with(R"("lesson": {"heads": 100000000000})"), "\"lesson.heads\"", "100000000000");
  expect_refused(with(R"("lesson": {"causal": "yes"})"), "\"lesson.causal\"", "\"yes\"");
  expect_refused(with(R"("lesson": {"head_design": "smart"})"), "\"lesson.head_design\"",
                 "\"smart\"");
  expect_refused(with(R"("lesson": [])"), "\"lesson\"", "an array");
  expect_refused(with(R"("texts": "hello")"), "\"texts\"", "a string");
  expect_refused(with(R"("texts": [{}, {}, {}])"), "\"texts\"", "an array of 3");
  expect_refused(with(R"("texts": [7])"), "\"texts[0]\"", "an integer 7");
  expect_refused(with(R"("texts": [{"text": null}])"), "\"texts[0].text\"", "null");
  expect_refused(with(R"("texts": [{"text": "a\u0000b"}])"), "\"texts[0].text\"", "NUL");
  expect_refused(with(R"("texts": [{"text": "a", "target": 3}])"), "\"texts[0].target\"", "3");
  expect_refused(with(R"("texts": [{"selected_token": -5}])"), "\"texts[0].selected_token\"", "-5");
  expect_refused(with(R"("view": {"layer": -1})"), "\"view.layer\"", "-1");
  expect_refused(with(R"("view": {"head": 1.5})"), "\"view.head\"", "a number 1.5");
  expect_refused(with(R"("view": {"mode": "slideshow"})"), "\"view.mode\"", "\"slideshow\"");
  expect_refused(with(R"("view": {"lesson_step": 9})"), "\"view.lesson_step\"", "9");
  expect_refused(with(R"("view": {"active_slot": 2})"), "\"view.active_slot\"", "2");
  expect_refused(with(R"("display": {"theme": "neon"})"), "\"display.theme\"", "\"neon\"");
  expect_refused(with(R"("display": {"font_scale": 100})"), "\"display.font_scale\"", "100");
}

TEST(Session, ViewOptionsOfIssue12AreCheckedByKey) {
  Session s = parse_session(with(R"("view": {"aggregate": "max"})"), "x");
  EXPECT_EQ(s.aggregate, "max");
  expect_refused(with(R"("view": {"aggregate": "median"})"), "\"view.aggregate\"", "\"median\"");
  expect_refused(with(R"("view": {"panel": "grid"})"), "\"view.panel\"", "\"grid\"");
  expect_refused(with(R"("view": {"hide_first": 1})"), "\"view.hide_first\"", "an integer 1");
  expect_refused(with(R"("view": {"query_combine": "max"})"), "\"view.query_combine\"", "\"max\"");
  expect_refused(with(R"("display": {"log_floor": 0})"), "\"display.log_floor\"", "0");
  expect_refused(with(R"("display": {"log_floor": 2})"), "\"display.log_floor\"", "2");
  expect_refused(with(R"("texts": [{"selected_queries": [1, -2]}])"),
                 "\"texts[0].selected_queries\"", "-2");
  expect_refused(with(R"("texts": [{"selected_queries": 3}])"), "\"texts[0].selected_queries\"",
                 "an integer 3");
}

// The model view's sort and filter are head summary keys; the Generate settings are ranges.
TEST(Session, ModelViewSortAndGenerationSettingsAreCheckedByKey) {
  Session s = parse_session(
      with(R"("view": {"model_sort": "entropy", "model_filter": "", "model_filter_min": 0.1},
              "texts": [{"text": "a", "generation": {"tokens": 7, "temperature": 1.5,
                                                     "top_k": 9, "seed": 42}}])"),
      "x");
  EXPECT_EQ(s.model_sort, "entropy");
  EXPECT_EQ(s.model_filter, "");
  EXPECT_FLOAT_EQ(s.model_filter_min, 0.1f);
  EXPECT_EQ(s.texts[0].generate_tokens, 7);
  EXPECT_FLOAT_EQ(s.texts[0].temperature, 1.5f);
  EXPECT_EQ(s.texts[0].top_k, 9);
  EXPECT_EQ(s.texts[0].seed, 42);
  EXPECT_EQ(s.texts[1].generate_tokens, 16) << "a missing text keeps the defaults";
  expect_refused(with(R"("view": {"model_sort": "beauty"})"), "\"view.model_sort\"", "\"beauty\"");
  expect_refused(with(R"("view": {"model_filter": 3})"), "\"view.model_filter\"", "an integer 3");
  expect_refused(with(R"("view": {"model_filter_min": "high"})"), "\"view.model_filter_min\"",
                 "a string");
  expect_refused(with(R"("texts": [{"generation": {"tokens": 0}}])"),
                 "\"texts[0].generation.tokens\"", "0");
  expect_refused(with(R"("texts": [{"generation": {"tokens": 100000}}])"),
                 "\"texts[0].generation.tokens\"", "100000");
  expect_refused(with(R"("texts": [{"generation": {"temperature": -0.5}}])"),
                 "\"texts[0].generation.temperature\"", "-0.5");
  expect_refused(with(R"("texts": [{"generation": {"top_k": -1}}])"),
                 "\"texts[0].generation.top_k\"", "-1");
  expect_refused(with(R"("texts": [{"generation": {"seed": 18446744073709551615}}])"),
                 "\"texts[0].generation.seed\"", "18446744073709551615");
  expect_refused(with(R"("texts": [{"generation": "greedy"}])"), "\"texts[0].generation\"",
                 "a string");
}

// Issue 27: heads switched off, edges cut, the model view's effect marks, in the CLI's syntax.
TEST(Session, InterventionsRoundTripAndBadOnesAreRefusedByKey) {
  Session s = parse_session(
      with(R"("view": {"ablate": "2.3,0.1", "ablate_mode": "mean", "model_sort": "effect",
                       "model_marks": "dla", "target": 3458, "tabs": ["lens"]},
              "texts": [{"text": "a b c", "knockout": "1:2>0,1.3:2>1"}])"),
      "x");
  EXPECT_EQ(s.ablate, "2.3,0.1");
  EXPECT_EQ(s.ablate_mode, "mean");
  EXPECT_EQ(s.model_sort, "effect");
  EXPECT_EQ(s.model_marks, "dla");
  EXPECT_EQ(s.target, 3458);
  EXPECT_EQ(s.texts[0].knockout, "1:2>0,1.3:2>1");
  const Session back = parse_session(session_to_json(s), "back");
  EXPECT_EQ(back.ablate, s.ablate);
  EXPECT_EQ(back.texts[0].knockout, s.texts[0].knockout);
  EXPECT_EQ(back.model_marks, "dla");
  EXPECT_EQ(back.target, 3458);
  EXPECT_EQ(format_knockouts(parse_knockouts("1:2>0,1.3:2>1")), "1:2>0,1.3:2>1");
  EXPECT_EQ(format_head_list(parse_head_list("2.3,0.1")), "2.3,0.1");
  expect_refused(with(R"("view": {"ablate": "2.x"})"), "\"view.ablate\"", "2.x");
  expect_refused(with(R"("view": {"ablate": 23})"), "\"view.ablate\"", "an integer 23");
  expect_refused(with(R"("view": {"ablate_mode": "half"})"), "\"view.ablate_mode\"", "half");
  expect_refused(with(R"("view": {"model_marks": "beauty"})"), "\"view.model_marks\"", "beauty");
  expect_refused(with(R"("texts": [{"knockout": "1:2-0"}])"), "\"texts[0].knockout\"", "1:2-0");
  expect_refused(with(R"("view": {"target": -5})"), "\"view.target\"", "-5");
}

TEST(Session, HugeAndDeepDocumentsAreRefusedBeforeParsing) {
  // A text beyond the limit.
  std::string big(kSessionMaxTextBytes + 1, 'a');
  expect_refused(with(R"("texts": [{"text": ")" + big + "\"}]"), "\"texts[0].text\"",
                 std::to_string(big.size()) + " bytes");
  // A document beyond the file limit.
  expect_refused(std::string(kSessionMaxBytes + 1, ' '), "bytes", "found");
  // 100,000 nested arrays would recurse through the parser and the destructor.
  std::string deep = with(R"("x": )" + std::string(100000, '[') + std::string(100000, ']'));
  expect_refused(deep, "nested", "deeper");
  // Brackets inside strings do not count as nesting.
  EXPECT_NO_THROW(
      parse_session(with(R"("texts": [{"text": "[[[[[[[[[[[[[[[[[[[[[[[[[[["}])"), "x"));
}

TEST(Session, FilesThatAreNotSessions) {
  const fs::path dir = temp_dir();
  EXPECT_THROW(read_session(dir / "missing.attnscope"), SessionError);
  EXPECT_THROW(read_session(dir), SessionError);  // a folder
  std::ofstream(dir / "binary.attnscope") << std::string("\x89PNG\r\n\x1a\n\0\0", 10);
  EXPECT_THROW(read_session(dir / "binary.attnscope"), SessionError);
  std::ofstream(dir / "latin1.attnscope") << with("\"model\": \"caf\xE9\"");
  EXPECT_THROW(read_session(dir / "latin1.attnscope"), SessionError);  // invalid UTF-8
  fs::remove_all(dir);
}

TEST(AtomicFile, ReplacesWholeFilesAndLeavesNoTemporaries) {
  const fs::path dir = temp_dir(), file = dir / "sub" / "settings.json";
  write_file_atomically(file, "first");
  EXPECT_EQ(slurp(file), "first");
  write_file_atomically(file, "second, longer");
  EXPECT_EQ(slurp(file), "second, longer");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(file.parent_path())) ++entries, (void)e;
  EXPECT_EQ(entries, 1) << "a temporary file was left behind";
  // Permissions are an ordinary document's, not mkstemp's 0600.
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  fs::remove_all(dir);
}

TEST(AtomicFile, WhatCannotBeWrittenIsRefusedByName) {
  const fs::path dir = temp_dir();
  EXPECT_THROW(write_file_atomically(dir, "x"), Error);  // a folder in the way
  std::ofstream(dir / "plain") << "x";
  try {
    write_file_atomically(dir / "plain" / "below.json", "x");  // a file where a folder should be
    ADD_FAILURE() << "wrote below a plain file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("below.json"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(AtomicFile, AFailedWriteKeepsTheOldFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores folder permissions";
  const fs::path dir = temp_dir(), file = dir / "session.attnscope";
  write_file_atomically(file, "old");
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);  // no new files here
  try {
    write_file_atomically(file, "new");
    ADD_FAILURE() << "the write succeeded in a read-only folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
  fs::permissions(dir, fs::perms::owner_all);
  EXPECT_EQ(slurp(file), "old");
  fs::remove_all(dir);
}

// The same as root, who ignores folder permissions: a file size limit makes the write itself fail
// half way (EFBIG), in a child process so the limit stays there.
TEST(AtomicFile, AWriteThatFailsHalfWayKeepsTheOldFileAndLeavesNoTemporary) {
  const fs::path dir = temp_dir(), file = dir / "settings.json";
  write_file_atomically(file, "old");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // a failed write, not a killed process
    const rlimit limit{8, 8};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    try {
      write_file_atomically(file, std::string(4096, 'n'));
    } catch (const Error& e) {
      _exit(std::string(e.what()).find(file.string()) != std::string::npos ? 0 : 4);
    }
    _exit(5);  // the write succeeded past the limit
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: no limit, 4: message without the file, 5: no error";
  EXPECT_EQ(slurp(file), "old");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) ++entries, (void)e;
  EXPECT_EQ(entries, 1) << "the temporary file was left behind";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnscope

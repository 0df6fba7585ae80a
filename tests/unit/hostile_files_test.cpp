// Hostile input, round 2 (issue 23): stored traces, sessions, settings and figures. Each test names
// the class it guards and failed on a clean clone before its fix. Code that used to crash, hang or
// take gigabytes runs in a bounded child (bounded_child.h) or under `ulimit -v` and `timeout`;
// the hostile files are written by the test into a temporary folder, never committed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/analysis/head_summary.h"
#include "core/backend/select.h"
#include "core/session/session.h"
#include "core/trace/aggregate.h"
#include "core/trace/trace_model.h"
#include "core/trace/trace_reader.h"
#include "tests/common/shell.h"
#include "tests/unit/bounded_child.h"
#include "tests/unit/hf_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using testing::run_bounded;
using testing::TempDir;
using json = nlohmann::json;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- Writing traces
// -------------------------------------------------------------------------------

json tokens_json(int n) {
  json tokens = json::array();
  for (int i = 0; i < n; ++i) {
    std::string text = "w";
    text += std::to_string(i);
    tokens.push_back({{"id", i}, {"text", text}, {"start", -1}, {"end", -1}, {"special", false}});
  }
  return tokens;
}

// A safetensors trace as `export --format safetensors` writes it: the JSON keys in __metadata__
// (strings as they are, the rest as JSON text) and one F32 tensor "attention".
void write_safetensors_trace(const fs::path& path, const json& metadata,
                             const std::vector<std::uint64_t>& shape, const std::string& data) {
  const json header = {
      {"__metadata__", metadata},
      {"attention", {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {0, data.size()}}}}};
  const std::string text = header.dump();
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);  // little-endian, as the format
  testing::write_file(path, out + text + data);
}

std::string floats(std::size_t count, float value) {
  std::string out(count * 4, '\0');
  for (std::size_t i = 0; i < count; ++i) std::memcpy(out.data() + 4 * i, &value, 4);
  return out;
}

json trace_metadata(int layers, int heads, int tokens) {
  return {
      {"format", "attnscope-trace/1"},
      {"model", json{{"name", "m"}, {"kind", "bert"}, {"layers", layers}, {"heads", heads}}.dump()},
      {"tokens", tokens_json(tokens).dump()},
      {"text", ""}};
}

// A uniform attention trace of `n` tokens (every weight 1/n: all of a row's keys tie).
void write_uniform_trace(const fs::path& path, int n) {
  write_safetensors_trace(path, trace_metadata(1, 1, n),
                          {1, 1, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(n)},
                          floats(static_cast<std::size_t>(n) * n, 1.0f / static_cast<float>(n)));
}

// --- The command line
// -----------------------------------------------------------------------------

fs::path attnscope_exe() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "attnscope";
}

// `args` is shell syntax; stderr goes with stdout. `limits` comes first (ulimit, timeout).
test::ShellRun cli(const std::string& args, const std::string& limits = "") {
  std::string cmd = "{ ";
  cmd.append(limits).append(" '").append(attnscope_exe().string()).append("' ");
  cmd.append(args).append(" 2>&3; } 3>&1");
  return test::run_shell(cmd);
}

// Address-space limits for the app (a sanitizer build's shadow memory needs terabytes of it).
std::string memory_limit(long mb) {
  return testing::kMemoryLimitWorks ? "ulimit -v " + std::to_string(mb << 10) + ";" : "";
}

#define SKIP_WITHOUT_APP() \
  if (!fs::exists(attnscope_exe())) GTEST_SKIP() << "the app was not built"

// --- 1. Deeply nested values: never dumped recursively, bounded while parsing
// ---------------------

TEST(HostileTraceFiles, DeeplyNestedMetadataIsRefusedWithoutCrashing) {
  TempDir tmp;
  for (const char* key : {"model", "tokens", "selection"}) {
    json meta = trace_metadata(1, 1, 1);
    meta[key] = std::string(200000, '[') + std::string(200000, ']');  // valid JSON, 200,000 deep
    const fs::path path = tmp.path() / (std::string(key) + ".safetensors");
    write_safetensors_trace(path, meta, {1, 1, 1, 1}, floats(1, 1.0f));
    const auto r = run_bounded([&] { read_trace_file(path); }, 10, 1024);
    ASSERT_FALSE(r.timed_out || r.crashed) << key << ": " << r.message;
    ASSERT_TRUE(r.threw) << key;
    EXPECT_TRUE(contains(
        r.message, "key '__metadata__." + std::string(key) + "': nested deeper than 64 levels"))
        << r.message;
    EXPECT_LT(r.message.size(), 300u) << r.message.substr(0, 300);
  }
}

TEST(HostileTraceFiles, AWrongValueIsDescribedNotDumped) {
  // Nested within the bound, but the wrong type: the message describes it in a few words.
  TempDir tmp;
  json meta = trace_metadata(1, 1, 1);
  meta["model"] = std::string(60, '[') + std::string(60, ']');
  write_safetensors_trace(tmp.path() / "t.safetensors", meta, {1, 1, 1, 1}, floats(1, 1.0f));
  const auto r = run_bounded([&] { read_trace_file(tmp.path() / "t.safetensors"); }, 10, 1024);
  ASSERT_TRUE(r.threw) << r.message;
  EXPECT_TRUE(contains(r.message, "key 'model': expected an object, found an array of 1 values"))
      << r.message;
}

// --- 2. FIFOs: every path that reads a trace (or a module, or the settings) refuses them ---------

TEST(HostileTraceFiles, FifoTraceIsRefusedInsteadOfWaitedOn) {
  TempDir tmp;
  const fs::path fifo = tmp.path() / "trace.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The one reader (view, render/heads --trace, a dropped file) and a session's trace: model.
  for (int way = 0; way < 2; ++way) {
    const auto r = run_bounded(
        [&] { way == 0 ? (void)read_trace_file(fifo) : (void)open_trace_model(fifo); }, 5);
    ASSERT_FALSE(r.timed_out) << "blocked on the FIFO";
    ASSERT_TRUE(r.threw) << r.message;
    EXPECT_TRUE(contains(r.message, "trace.json: is a FIFO (named pipe), expected a regular file"))
        << r.message;
  }
}

TEST(HostileTraceFiles, FifoTraceIsAOneLineErrorAtTheCommandLine) {
  SKIP_WITHOUT_APP();
  TempDir tmp;
  const fs::path fifo = tmp.path() / "trace.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& args : {"heads --trace '" + fifo.string() + "'",
                                  "render --view heatmap --trace '" + fifo.string() + "' -o '" +
                                      (tmp.path() / "f.svg").string() + "'"}) {
    const test::ShellRun r = cli(args, "timeout 10");
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;  // timeout's 124 when it blocked
    EXPECT_TRUE(
        test::one_line_containing(r.output, "is a FIFO (named pipe), expected a regular file"))
        << r.output;
  }
}

TEST(HostileTraceFiles, FifoOpenGlModuleFallsBackAsWhenMissing) {
  SKIP_WITHOUT_APP();
  TempDir tmp;
  const fs::path fifo = tmp.path() / "libattnscope_gl.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const test::ShellRun r =
      cli("backends", "ATTNSCOPE_GL_MODULE='" + fifo.string() + "' timeout 10");
  EXPECT_EQ(r.exit_code, 0) << r.output;  // 124 when dlopen blocked
  EXPECT_TRUE(
      test::one_line_containing(r.output, "is a FIFO (named pipe), expected a regular file"))
      << r.output;
  // In-process too: the module is refused, the CPU stays.
  const auto child = run_bounded(
      [&] {
        ::setenv("ATTNSCOPE_GL_MODULE", fifo.c_str(), 1);
        GlModuleReport report;
        if (create_opengl_backend(GlModuleRequest{}, report)) throw Error("loaded a FIFO");
        throw Error(report.error);
      },
      10);
  ASSERT_FALSE(child.timed_out) << "dlopen blocked on the FIFO";
  EXPECT_TRUE(contains(child.message, "is a FIFO")) << child.message;
}

// --- 3. Memory bounded by the file: absurd counts refused, unknown keys never kept ---------------

TEST(HostileTraceFiles, MillionsOfOneTokenLayersAreRefusedWithinMemory) {
  TempDir tmp;
  constexpr std::uint64_t kLayers = 2'000'000;  // 8 MB of weights; ~250 MB as Matrix objects
  write_safetensors_trace(tmp.path() / "t.safetensors",
                          trace_metadata(static_cast<int>(kLayers), 1, 1), {kLayers, 1, 1, 1},
                          floats(kLayers, 1.0f));
  const auto r = run_bounded([&] { read_trace_file(tmp.path() / "t.safetensors"); }, 10, 256);
  ASSERT_FALSE(r.timed_out || r.crashed) << r.message;
  ASSERT_TRUE(r.threw);
  EXPECT_TRUE(contains(r.message,
                       "2000000 layers x 1 heads is more than a trace may hold (at "
                       "most 1024 layers, 1024 heads and 65536 matrices)"))
      << r.message;

  // The same in JSON: refused as the layers stream in.
  std::string text = R"({"format": "attnscope-trace/1", "model": {"name": "m", "layers": 1,)"
                     R"( "heads": 1}, "tokens": [{"id": 0, "text": "a"}], "attention": [)";
  for (int l = 0; l < 400000; ++l) text += l ? ",[[[1]]]" : "[[[1]]]";
  text += "]}";
  testing::write_file(tmp.path() / "t.json", text);
  const auto j = run_bounded([&] { read_trace_file(tmp.path() / "t.json"); }, 10, 256);
  ASSERT_FALSE(j.timed_out || j.crashed) << j.message;
  EXPECT_TRUE(contains(j.message, "layers x 1 heads is more than a trace may hold")) << j.message;
}

TEST(HostileTraceFiles, UnknownKeysAreSkippedNotKept) {
  // 24 MB of empty objects under a key no reader reads: ~700 MB as a JSON document.
  TempDir tmp;
  std::string junk = "[{}";
  junk.reserve(24u << 20);
  for (int i = 0; i < 8'000'000; ++i) junk += ",{}";
  junk += "]";
  const std::string text =
      R"({"format": "attnscope-trace/1", "future_key": )" + junk +
      R"(, "model": {"name": "m", "layers": 1, "heads": 1}, "also_unknown": 5,)"
      R"( "tokens": [{"id": 0, "text": "a"}], "attention": [[[[1]]]], "last": {"x": [[]]}})";
  testing::write_file(tmp.path() / "t.json", text);
  const auto r = run_bounded(
      [&] {
        const AttentionTrace t = read_trace_file(tmp.path() / "t.json");
        if (t.tokens.size() != 1 || t.model.name != "m") throw Error("read the wrong trace");
      },
      20, 256);
  EXPECT_FALSE(r.timed_out || r.crashed || r.threw) << r.message;
}

TEST(HostileTraceFiles, AHugeTokenListIsRefusedWithinMemory) {
  // Known keys are kept, but never more than a trace's header can need.
  TempDir tmp;
  std::string text = R"({"format": "attnscope-trace/1", "tokens": [{})";
  for (int i = 0; i < 4'000'000; ++i) text += ",{}";
  text += "]}";
  testing::write_file(tmp.path() / "t.json", text);
  const auto r = run_bounded([&] { read_trace_file(tmp.path() / "t.json"); }, 20, 384);
  ASSERT_FALSE(r.timed_out || r.crashed) << r.message;
  EXPECT_TRUE(contains(r.message, "key 'tokens': more than 1048576 JSON values")) << r.message;
}

// --- 4. Figures of long traces and huge figures
// ----------------------------------------------------

TEST(HostileFigures, LinesOfALongTraceAreThinnedAndSaySo) {
  SKIP_WITHOUT_APP();
  TempDir tmp;
  write_uniform_trace(tmp.path() / "t.safetensors", 2048);  // every key ties: 4 M lines before
  const fs::path svg = tmp.path() / "lines.svg";
  const test::ShellRun r =
      cli("render --view lines --trace '" + (tmp.path() / "t.safetensors").string() + "' -o '" +
              svg.string() + "'",
          memory_limit(2000) + " timeout 30");
  ASSERT_EQ(r.exit_code, 0) << r.output;  // 124: still drawing; 137 or 1: out of memory
  const std::string text = testing::read_file(svg);
  std::size_t paths = 0;
  for (std::size_t at = 0; (at = text.find("<path", at)) != std::string::npos; ++at) ++paths;
  EXPECT_LE(paths, 20000u);
  EXPECT_GE(paths, 2048u);  // every query keeps its strongest key
  EXPECT_TRUE(contains(text, "showing the 5 strongest keys of each query (2048 tokens"))
      << text.substr(0, 2000);

  // Arcs draw one arc a query (its strongest key) or one a key of the focused row: bounded too.
  const fs::path arcs = tmp.path() / "arcs.svg";
  const test::ShellRun a =
      cli("render --view arcs --focus 7 --trace '" + (tmp.path() / "t.safetensors").string() +
              "' -o '" + arcs.string() + "'",
          memory_limit(2000) + " timeout 30");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const std::string arcs_text = testing::read_file(arcs);
  paths = 0;
  for (std::size_t at = 0; (at = arcs_text.find("<path", at)) != std::string::npos; ++at) ++paths;
  EXPECT_LE(paths, 2048u);
}

TEST(HostileFigures, AHugePngIsRefusedNamingTheOptions) {
  SKIP_WITHOUT_APP();
  TempDir tmp;
  const test::ShellRun r = cli(
      "render --view heatmap --width 20000 --scale 2 -o '" + (tmp.path() / "f.png").string() + "'",
      memory_limit(2000) + " timeout 30");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(test::one_line_containing(r.output, "lower --scale or --width")) << r.output;
  EXPECT_TRUE(test::one_line_containing(r.output, "32767 pixels a side, 100 million in all"))
      << r.output;
  EXPECT_FALSE(fs::exists(tmp.path() / "f.png"));
}

TEST(HostileFigures, NonFiniteScaleIsAUsageErrorNamingTheOption) {
  SKIP_WITHOUT_APP();
  TempDir tmp;
  for (const std::string option :
       {"--scale nan", "--scale inf", "--width nan", "--log-scale --log-floor nan"}) {
    const test::ShellRun r =
        cli("render --view heatmap " + option + " -o '" + (tmp.path() / "f.png").string() + "'");
    const std::string name =
        option.substr(option.rfind("--"), option.rfind(' ') - option.rfind("--"));
    EXPECT_EQ(r.exit_code, 2) << option << "\n" << r.output;
    EXPECT_TRUE(test::one_line_containing(r.output, name)) << option << "\n" << r.output;
    EXPECT_TRUE(test::one_line_containing(r.output, "finite")) << option << "\n" << r.output;
  }
}

// --- 5. SVG is well-formed XML whatever the labels hold
// --------------------------------------------

// Parses `svg` with Python's strict XML parser; "" when well-formed, else its complaint.
std::string xml_problem(const fs::path& svg) {
  const test::ShellRun r = test::run_shell(
      "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' '" +
      svg.string() + "' 2>&1");
  return r.exit_code == 0 ? "" : r.output.empty() ? "python3 failed" : r.output;
}

TEST(HostileFigures, SvgStaysWellFormedXmlForHostileLabels) {
  SKIP_WITHOUT_APP();
  if (test::run_shell("python3 -c 'import xml.dom.minidom' 2>&1").exit_code != 0)
    GTEST_SKIP() << "python3 is not available";
  TempDir tmp;
  // A stored trace whose tokens and model name hold what XML 1.0 cannot (U+FFFE, U+FFFF, C0).
  json meta = trace_metadata(1, 1, 3);
  json tokens = tokens_json(3);
  tokens[0]["text"] = "a\xEF\xBF\xBE";      // U+FFFE
  tokens[1]["text"] = "\xEF\xBF\xBF<&>\"";  // U+FFFF and markup
  tokens[2]["text"] = std::string("c\x01\x1f\x0b", 4);
  meta["tokens"] = tokens.dump();
  meta["model"] =
      json{{"name", "m\xEF\xBF\xBF\x02"}, {"kind", "bert"}, {"layers", 1}, {"heads", 1}}.dump();
  const fs::path trace = tmp.path() / "t.safetensors";
  write_safetensors_trace(trace, meta, {1, 1, 3, 3}, floats(9, 1.0f / 3));
  for (const char* view : {"heatmap", "lines", "arcs", "grid", "formula"}) {
    const fs::path svg = tmp.path() / (std::string(view) + ".svg");
    const test::ShellRun r = cli(std::string("render --view ") + view + " --trace '" +
                                 trace.string() + "' -o '" + svg.string() + "'");
    if (r.exit_code == 2) continue;  // a view that cannot draw a stored trace says so
    ASSERT_EQ(r.exit_code, 0) << view << "\n" << r.output;
    EXPECT_EQ(xml_problem(svg), "") << view;
  }
  // Typed text with invalid UTF-8 and U+FFFF, through a model (the lesson's words).
  const fs::path svg = tmp.path() / "typed.svg";
  const test::ShellRun r =
      cli("render --view lines --text $'bank \\xff\\xfe river \\xef\\xbf\\xbf \\xed\\xa0\\x80 "
          "sat\\x01' -o '" +
          svg.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(xml_problem(svg), "");
}

// --- 6. Every value the app writes in a session reads back --------------------------------------

TEST(HostileSessions, EveryValueTheWriterCanEmitReadsBack) {
  const auto round_trip = [](const Session& s, const std::string& what) {
    try {
      const Session back = parse_session(session_to_json(s), "x.attnscope");
      EXPECT_EQ(session_to_json(back), session_to_json(s)) << what;
    } catch (const SessionError& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  };
  // Backends: every name --backend (parse_backend_choice) accepts is one the app may save.
  for (const char* backend : {"auto", "cpu", "cuda", "opengl"}) {
    ASSERT_NO_THROW(parse_backend_choice(backend)) << backend;
    Session s;
    s.backend = backend;
    round_trip(s, std::string("backend ") + backend);
  }
  const std::vector<std::string> views = {"heatmap", "arcs",    "lines",
                                          "meaning", "formula", "model"};
  for (const std::string& view : views) {
    Session s;
    s.focus_view = view;
    s.tabs = {view};  // `--views` may put any view in a tab region
    round_trip(s, "view " + view);
  }
  for (const char* theme : {"dark", "light"}) {
    Session s;
    s.theme = theme;
    round_trip(s, theme);
  }
  for (const char* mode : {"explore", "lesson"}) {
    Session s;
    s.mode = mode;
    round_trip(s, mode);
  }
  for (const char* panel : {"sentences", "model"}) {
    Session s;
    s.panel = panel;
    round_trip(s, panel);
  }
  for (const char* combine : {"mean", "sum"}) {
    Session s;
    s.query_combine = combine;
    round_trip(s, combine);
  }
  for (const HeadAggregate& a : head_aggregates()) {
    Session s;
    s.aggregate = a.name;
    round_trip(s, "aggregate " + a.name);
  }
  for (const HeadSummaryKey& k : head_summary_keys()) {
    Session s;
    s.model_sort = s.model_filter = k.name;
    round_trip(s, "summary key " + k.name);
  }
  for (HeadDesign design : {HeadDesign::kRoles, HeadDesign::kRandom}) {
    Session s;
    s.lesson.head_design = design;
    round_trip(s, head_design_name(design));
  }
}

// --- 7. A closed stdout is a failure for every command that writes to it -------------------------

TEST(HostileFilesCli, EveryCommandWritingToStdoutFailsWhenItIsClosed) {
  SKIP_WITHOUT_APP();
  // (npy writes a second file beside its output: `-o -` is a usage error for it.)
  const std::string gpt2 = std::string(ATTNSCOPE_FIXTURES) + "/gpt2-tiny-f32";
  for (const std::string& args :
       {std::string("export --text hi --backend cpu -o - >&-"),
        std::string("export --text hi --backend cpu --format csv -o - >&-"),
        std::string("export --text hi --backend cpu --format safetensors -o - >&-"),
        std::string("heads --text hi --backend cpu -o - >&-"),
        "generate --model '" + gpt2 + "' --text hi --tokens 2 --backend cpu -o - >&-",
        std::string("tokenize --text hi >&-")}) {
    const test::ShellRun r = cli(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_TRUE(test::one_line_containing(r.output, "failed")) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace attnscope

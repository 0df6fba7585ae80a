// Hostile input, round 2 (issue 23): tokenizer files crafted to exhaust the stack, memory or the
// regex engine, and ids that point past the vocabulary. Each test names the class it guards and
// failed before its fix; code that crashed, hung or allocated gigabytes runs in a child with a
// time and memory limit (bounded_child.h), the command line under `ulimit -v`. Hostile files are
// generated here, in a temporary folder, from a tiny BPE or Mistral 7B's real tokenizer.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/text/pipeline/normalizers.h"
#include "core/text/pipeline/pre_tokenizers.h"
#include "core/text/tokenizer.h"
#include "core/util/error.h"
#include "tests/common/shell.h"
#include "tests/unit/bounded_child.h"
#include "tests/unit/hf_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_bounded;
using testing::TempDir;

const fs::path kMistralTokenizer = fs::path(ATTNSCOPE_TEST_DATA) / "npm/mistral/tokenizer.json";

fs::path bin_dir() {
  return fs::read_symlink("/proc/self/exe").parent_path();
}
// build/fixtures (or build-sanitize/fixtures) beside the test's bin/ folder.
fs::path mistral_tiny() {
  return bin_dir().parent_path() / "fixtures" / "mistral-tiny";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A BPE tokenizer.json small enough to write thousands of times: "ab" merges, "x" for Replace.
json tiny_tokenizer() {
  return {{"version", "1.0"},
          {"added_tokens", json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model",
           {{"type", "BPE"},
            {"unk_token", "<unk>"},
            {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}, {"<unk>", 3}, {"x", 4}}},
            {"merges", {"a b"}}}}};
}

fs::path write_tokenizer(const fs::path& dir, const std::string& text) {
  testing::write_file(dir / "tokenizer.json", text);
  return dir;
}

// tokenizer.json with `key` set to a Sequence of `levels` Sequences around `leaf`, as text: built
// with nlohmann, a 10^5-deep value would itself recurse when copied.
std::string deep_component(const std::string& key, int levels) {
  std::string open, leaf, close;
  if (key == "normalizer") {
    open = R"({"type":"Sequence","normalizers":[)";
    leaf = R"({"type":"Lowercase"})";
  } else if (key == "pre_tokenizer") {
    open = R"({"type":"Sequence","pretokenizers":[)";
    leaf = R"({"type":"Whitespace"})";
  } else if (key == "post_processor") {
    open = R"({"type":"Sequence","processors":[)";
    leaf = R"({"type":"ByteLevel"})";
  } else {
    open = R"({"type":"Sequence","decoders":[)";
    leaf = R"({"type":"ByteLevel"})";
  }
  close = "]}";
  std::string component;
  component.reserve(levels * (open.size() + close.size()) + leaf.size());
  for (int i = 0; i < levels; ++i) component += open;
  component += leaf;
  for (int i = 0; i < levels; ++i) component += close;
  json base = tiny_tokenizer();
  base.erase(key);
  std::string text = base.dump();
  text.insert(1, "\"" + key + "\":" + component + ",");
  return text;
}

bool one_line(const std::string& message) {
  return message.find('\n') == std::string::npos && message.size() < 600;
}

// --- Class 1: JSON nested ~10^5 levels deep --------------------------------------------------

TEST(HostileTokenizerDepth, DeepSequencesAreRefusedNamingTheFileInsteadOfOverflowingTheStack) {
  for (const std::string key : {"normalizer", "pre_tokenizer", "post_processor", "decoder"}) {
    TempDir tmp;
    write_tokenizer(tmp.path(), deep_component(key, 100000));
    const auto r = run_bounded([&] { load_tokenizer(tmp.path()); }, 10, 1024);
    ASSERT_FALSE(r.crashed || r.timed_out) << key << ": " << r.message;
    ASSERT_TRUE(r.threw) << key;
    EXPECT_TRUE(contains(r.message, (tmp.path() / "tokenizer.json").string())) << r.message;
    EXPECT_TRUE(contains(r.message, "nested more than 127 levels deep")) << r.message;
    EXPECT_TRUE(one_line(r.message)) << r.message;
  }
}

// Hugging Face's tokenizers (serde_json) loads 126 levels and refuses 128 (checked with its Node
// binding): the bound is the same, so no file it loads is refused here.
TEST(HostileTokenizerDepth, TheBoundIsHuggingFacesOwn) {
  TempDir tmp;
  // The document, "normalizer", 2 per Sequence level and the leaf: 62 levels are 126 deep.
  write_tokenizer(tmp.path(), deep_component("normalizer", 62));
  ASSERT_NO_THROW(load_tokenizer(tmp.path()));
  EXPECT_EQ(load_tokenizer(tmp.path())->encode("AB", false).at(0).id, 2);  // lower-cased "ab"
  write_tokenizer(tmp.path(), deep_component("normalizer", 63));
  EXPECT_THROW(load_tokenizer(tmp.path()), ModelError);
}

TEST(HostileTokenizerDepth, DeepTokenizerConfigIsRefusedNamingIt) {
  TempDir tmp;
  write_tokenizer(tmp.path(), tiny_tokenizer().dump());
  testing::write_file(
      tmp.path() / "tokenizer_config.json",
      R"({"bos_token": )" + std::string(100000, '[') + std::string(100000, ']') + "}");
  const auto r = run_bounded([&] { load_tokenizer(tmp.path()); }, 10, 1024);
  ASSERT_FALSE(r.crashed || r.timed_out) << r.message;
  ASSERT_TRUE(r.threw);
  EXPECT_TRUE(contains(r.message, "tokenizer_config.json: JSON nested more than")) << r.message;
}

// The builders recurse through Sequences themselves: JSON that did not come through the file
// reader (a caller's, a fuzzer's) is bounded there too.
TEST(HostileTokenizerDepth, BuildersBoundTheirOwnRecursion) {
  auto deep = [](const char* list_key, json leaf) {
    json j = std::move(leaf);
    for (int i = 0; i < 20000; ++i) {
      json outer = json::object();
      outer["type"] = "Sequence";
      outer[list_key] = json::array();
      outer[list_key].push_back(std::move(j));
      j = std::move(outer);
    }
    return j;
  };
  const auto r = run_bounded(
      [&] {
        const json n = deep("normalizers", {{"type", "Lowercase"}});
        std::string problems;
        try {
          text::make_normalizer(n, "n");
        } catch (const ModelError& e) {
          problems += std::string(e.what()) + "|";
        }
        const json p = deep("pretokenizers", {{"type", "Whitespace"}});
        try {
          text::make_pre_tokenizer(p, "p");
        } catch (const ModelError& e) {
          problems += e.what();
        }
        throw ModelError(problems);
      },
      20, 2048);
  ASSERT_FALSE(r.crashed || r.timed_out) << r.message;
  EXPECT_EQ(r.message,
            "n: Sequence nested more than 64 levels deep|p: Sequence nested more than 64 levels "
            "deep");
}

// --- Class 2: normalizers and pre-tokenizers that grow the text without bound ------------------

TEST(HostileTokenizerGrowth, MetaspaceReplacementMustBeOneCharacterAsInHuggingFace) {
  for (const std::string replacement : {"", "ab"}) {
    TempDir tmp;
    json t = tiny_tokenizer();
    t["pre_tokenizer"] = {{"type", "Metaspace"},
                          {"replacement", replacement},
                          {"prepend_scheme", "always"},
                          {"split", true}};
    write_tokenizer(tmp.path(), t.dump());
    // Before: the empty replacement split the text at the same place forever.
    const auto r = run_bounded([&] { load_tokenizer(tmp.path())->encode("a b", false); }, 10, 512);
    ASSERT_FALSE(r.crashed || r.timed_out) << r.message;
    ASSERT_TRUE(r.threw);
    EXPECT_TRUE(contains(r.message,
                         "tokenizer.json pre_tokenizer Metaspace: key \"replacement\" "
                         "must be one character, found \"" +
                             replacement + "\""))
        << r.message;
  }
}

TEST(HostileTokenizerGrowth, ReplaceThatMultipliesTheTextFailsWithinMemory) {
  TempDir tmp;
  json t = tiny_tokenizer();
  t["normalizer"] = {
      {"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", std::string(1000, 'x')}};
  write_tokenizer(tmp.path(), t.dump());
  const auto tokenizer = load_tokenizer(tmp.path());
  // 128 KiB of text became 128 MB of text and 1 GB of alignments (6 GB at the peak).
  const auto r =
      run_bounded([&] { tokenizer->encode(std::string(128 << 10, 'a'), false); }, 10, 512);
  ASSERT_FALSE(r.crashed || r.timed_out) << r.message;
  ASSERT_TRUE(r.threw);
  EXPECT_TRUE(contains(r.message, "tokenizer.json normalizer Replace: its output would be " +
                                      std::to_string(1000ull << 17) +
                                      " bytes for 131072 bytes "
                                      "of text, over the limit "
                                      "of 64 x the text"))
      << r.message;
  EXPECT_TRUE(one_line(r.message)) << r.message;
  // Growth within the limit is untouched: 1,000 x's and the "b".
  EXPECT_EQ(tokenizer->encode("ab", false).size(), 1001u);
}

TEST(HostileTokenizerGrowth, ChainsOfGrowingStepsAreBoundedByTheSequence) {
  TempDir tmp;
  json t = tiny_tokenizer();
  // Each ByteLevel doubles the non-ASCII bytes; 40 of them would make 2^40 bytes of one "é".
  json steps = json::array();
  for (int i = 0; i < 40; ++i)
    steps.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}});
  t["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", steps}};
  write_tokenizer(tmp.path(), t.dump());
  auto r = run_bounded([&] { load_tokenizer(tmp.path())->encode("caf\xC3\xA9", false); }, 10, 512);
  ASSERT_FALSE(r.crashed || r.timed_out) << r.message;
  ASSERT_TRUE(r.threw);
  EXPECT_TRUE(contains(r.message, "tokenizer.json pre_tokenizer Sequence: its output would be"))
      << r.message;
  // Normalizers: Replace "a" -> "aa" twenty times over.
  t = tiny_tokenizer();
  steps = json::array();
  for (int i = 0; i < 20; ++i)
    steps.push_back({{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", "aa"}});
  t["normalizer"] = {{"type", "Sequence"}, {"normalizers", steps}};
  write_tokenizer(tmp.path(), t.dump());
  r = run_bounded([&] { load_tokenizer(tmp.path())->encode(std::string(4096, 'a'), false); }, 10,
                  512);
  ASSERT_FALSE(r.crashed || r.timed_out) << r.message;
  ASSERT_TRUE(r.threw);
  // Each Replace knows its output's size before building it: the first over the limit says so.
  EXPECT_TRUE(contains(r.message, "tokenizer.json normalizer Replace: its output would be"))
      << r.message;
}

// The bound leaves real pipelines alone at their worst: NFKD makes U+FDFA 18 characters (11x its
// bytes), Mistral's Replace then makes each space three bytes.
TEST(HostileTokenizerGrowth, RealPipelinesAtTheirWorstStayWithinTheBound) {
  TempDir tmp;
  json t = json::parse(testing::read_file(kMistralTokenizer));
  json steps = json::array({{{"type", "NFKD"}}});
  for (const json& s : t["normalizer"]["normalizers"]) steps.push_back(s);
  t["normalizer"]["normalizers"] = steps;
  write_tokenizer(tmp.path(), t.dump());
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xEF\xB7\xBA";  // U+FDFA
  EXPECT_GT(load_tokenizer(tmp.path())->encode(text, true).size(), 1000u);
}

// --- Class 3: a post-processor's id beyond the vocabulary ------------------------------------

TEST(HostileTokenizerIds, PostProcessorIdBeyondTheVocabularyIsABrokenFile) {
  TempDir tmp;
  json t = tiny_tokenizer();
  t["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [40000], "tokens": ["<s>"]}}})");
  write_tokenizer(tmp.path(), t.dump());
  try {
    load_tokenizer(tmp.path());
    FAIL() << "loaded";
  } catch (const ModelError& e) {
    EXPECT_TRUE(contains(e.what(),
                         "tokenizer.json post_processor: special token \"<s>\" has id "
                         "40000, which is not in the vocabulary (5 ids)"))
        << e.what();
  }
}

// --- Class 4: Oniguruma's retry limit -----------------------------------------------------------

TEST(HostileTokenizerRegex, RetryLimitIsAnErrorNotNoMatch) {
  TempDir tmp;
  json t = tiny_tokenizer();
  t["pre_tokenizer"] = {{"type", "Split"},
                        {"pattern", {{"Regex", "(a+)+b"}}},
                        {"behavior", "Isolated"},
                        {"invert", false}};
  write_tokenizer(tmp.path(), t.dump());
  const auto tokenizer = load_tokenizer(tmp.path());
  EXPECT_EQ(tokenizer->encode("aab", false).size(), 2u);  // "a", "ab": a match as before
  // 2^30 ways to split the a's: Oniguruma gives up after its 10^7 retries. Hugging Face's
  // tokenizers panics ("Onig: Regex search error: retry-limit-in-match over"); it used to read as
  // "no match" here, so the a's were tokenized whole without a word.
  const auto r = run_bounded([&] { tokenizer->encode(std::string(30, 'a'), false); }, 20, 512);
  ASSERT_FALSE(r.crashed || r.timed_out) << r.message;
  ASSERT_TRUE(r.threw) << "tokenized as if nothing matched";
  EXPECT_TRUE(contains(r.message,
                       "tokenizer.json pre_tokenizer Split: the regular expression "
                       "\"(a+)+b\" hit the regex engine's retry limit"))
      << r.message;
  EXPECT_TRUE(one_line(r.message)) << r.message;

  // The same in a Replace normalizer.
  t = tiny_tokenizer();
  t["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "(a+)+b"}}}, {"content", "x"}};
  write_tokenizer(tmp.path(), t.dump());
  EXPECT_THROW(load_tokenizer(tmp.path())->encode(std::string(30, 'a'), false), ModelError);
}

// --- Class 5: test discovery stays cheap
// ----------------------------------------------------------

// gtest_discover_tests lists every test binary at build time (60 s limit): the component variants
// once built 20 tokenizers from the real vocabularies there, over a minute under ASan.
TEST(HostileTokenizerCi, ComponentVariantsAreListedWithoutBuildingTokenizers) {
  const fs::path exe = bin_dir() / "tokenizer_components_hf_test";
  if (!fs::exists(exe)) GTEST_SKIP() << "tokenizer_components_hf_test was not built";
  const auto start = std::chrono::steady_clock::now();
  const auto r = test::run_shell("'" + exe.string() + "' --gtest_list_tests");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "MatchesHuggingFace/gpt2_tokenizer_json")) << r.output;
  EXPECT_TRUE(contains(r.output, "MatchesHuggingFace/mistral_added_token_flags")) << r.output;
  EXPECT_LT(seconds, 2.0) << "listing the tests reads the vocabularies again";
}

// --- The command line: exit 1 (a broken file) with one line, in bounded memory
// --------------------

class HostileTokenizerCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(bin_dir() / "attnscope")) GTEST_SKIP() << "the app was not built";
    if (!fs::exists(mistral_tiny() / "config.json")) GTEST_SKIP() << "no fixture models";
  }

  // The Mistral fixture (weights linked) with `tokenizer_json` as its tokenizer.json.
  fs::path model(const std::string& tokenizer_json) {
    const fs::path dir = tmp_.path() / ("m" + std::to_string(models_++));
    fs::create_directories(dir);
    for (const auto& entry : fs::directory_iterator(mistral_tiny())) {
      const std::string name = entry.path().filename().string();
      if (name == "tokenizer.json") continue;
      if (name.ends_with(".json"))
        fs::copy_file(entry.path(), dir / name);
      else
        fs::create_symlink(entry.path(), dir / name);
    }
    testing::write_file(dir / "tokenizer.json", tokenizer_json);
    return dir;
  }

  // stderr only; attnscope's address space limited to 1 GB (the bugs took gigabytes).
  static test::ShellRun run(const std::string& args) {
    return test::run_shell("ulimit -v 1048576; '" + (bin_dir() / "attnscope").string() + "' " +
                           args + " 2>&1 >/dev/null");
  }

  static void expect_broken_file(const test::ShellRun& r, const std::string& part,
                                 const std::string& args) {
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output.substr(0, 500);
    EXPECT_TRUE(contains(r.output, part)) << args << "\n" << r.output.substr(0, 500);
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line:\n" << r.output;
  }

  TempDir tmp_;
  int models_ = 0;
};

TEST_F(HostileTokenizerCli, DeepTokenizerJsonExitsOneForTokenizeAndExport) {
  json t = json::parse(testing::read_file(kMistralTokenizer));
  // Mistral's own file with its normalizer wrapped 10^5 levels deep.
  std::string text = t.dump();
  const std::string open = R"({"type":"Sequence","normalizers":[)";
  const std::string inner = t["normalizer"].dump();
  std::string wrapped;
  for (int i = 0; i < 100000; ++i) wrapped += open;
  wrapped += inner;
  for (int i = 0; i < 100000; ++i) wrapped += "]}";
  text.replace(text.find(inner), inner.size(), wrapped);
  const fs::path m = model(text);
  for (const std::string& args : {"tokenize --model '" + m.string() + "' --text hi",
                                  "export --backend cpu --model '" + m.string() + "' --text hi"})
    expect_broken_file(run(args), "tokenizer.json: JSON nested more than 127 levels deep", args);
}

TEST_F(HostileTokenizerCli, GrowingNormalizerExitsOneNamingIt) {
  json t = json::parse(testing::read_file(kMistralTokenizer));
  t["normalizer"]["normalizers"].push_back(
      {{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", std::string(1000, 'x')}});
  const fs::path m = model(t.dump());
  const std::string args =
      "tokenize --model '" + m.string() + "' --text " + std::string(60000, 'a');
  expect_broken_file(run(args), "normalizer Replace: its output would be", "tokenize …");
}

TEST_F(HostileTokenizerCli, PostProcessorIdBeyondTheVocabularyExitsOneNotTwo) {
  json t = json::parse(testing::read_file(kMistralTokenizer));
  t["post_processor"]["special_tokens"]["<s>"]["ids"] = {40000};
  const fs::path m = model(t.dump());
  for (const std::string& args : {"tokenize --model '" + m.string() + "' --text hi",
                                  "export --backend cpu --model '" + m.string() + "' --text hi"})
    expect_broken_file(run(args),
                       "special token \"<s>\" has id 40000, which is not in the "
                       "vocabulary (32000 ids)",
                       args);
}

// A tokenizer consistent in itself (its added token 32005 is the one its post-processor adds)
// whose ids the weights (vocab_size 32000) lack: the folder opens (as released checkpoints whose
// tokenizers outnumber vocab_size must, issue 24), and a text that produces the id is refused by
// the model naming the token and the id: a broken folder for this text, never a usage error.
TEST_F(HostileTokenizerCli, TokenizerIdBeyondTheWeightsExitsOneOnExport) {
  json t = json::parse(testing::read_file(kMistralTokenizer));
  t["added_tokens"].push_back({{"id", 32005},
                               {"content", "<extra>"},
                               {"single_word", false},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"normalized", false},
                               {"special", true}});
  t["post_processor"]["special_tokens"]["<s>"]["ids"] = {32005};
  t["post_processor"]["special_tokens"]["<s>"]["tokens"] = {"<extra>"};
  const fs::path m = model(t.dump());
  EXPECT_EQ(run("tokenize --model '" + m.string() + "' --text hi").exit_code, 0);
  const std::string args = "export --backend cpu --model '" + m.string() + "' --text hi";
  expect_broken_file(run(args),
                     "the text's token \"<extra>\" is id 32005, which the model has no "
                     "embedding for (32000 rows",
                     args);
}

TEST_F(HostileTokenizerCli, RegexRetryLimitExitsOneNamingThePattern) {
  json t = json::parse(testing::read_file(kMistralTokenizer));
  t["pre_tokenizer"] = {{"type", "Split"},
                        {"pattern", {{"Regex", "(a+)+b"}}},
                        {"behavior", "Isolated"},
                        {"invert", false}};
  const fs::path m = model(t.dump());
  const std::string args = "tokenize --model '" + m.string() + "' --text " + std::string(30, 'a');
  expect_broken_file(run(args), "\"(a+)+b\" hit the regex engine's retry limit", args);
}

}  // namespace
}  // namespace attnscope

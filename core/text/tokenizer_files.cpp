#include "core/text/tokenizer_files.h"

#include "core/text/tokenizer_common.h"
#include "core/util/error.h"
#include "core/util/file_read.h"

namespace attnscope {
namespace {

std::optional<std::filesystem::path> file_if_present(const std::filesystem::path& folder,
                                                     const char* name) {
  // Present at all, not only regular: reading a FIFO or device then says what it is
  // (core/util/file_read.h) instead of "no tokenizer found".
  const std::filesystem::path path = folder / name;
  if (path_present(path)) return path;
  return std::nullopt;
}

}  // namespace

std::string TokenizerFiles::describe() const {
  std::string found;
  auto add = [&](const char* what) { found += (found.empty() ? "" : ", ") + std::string(what); };
  if (vocab_json && merges_txt) {
    add("vocab.json + merges.txt");
  } else if (vocab_json) {
    add("vocab.json (without merges.txt)");
  } else if (merges_txt) {
    add("merges.txt (without vocab.json)");
  }
  if (vocab_txt) add("vocab.txt");
  if (tokenizer_json) add("tokenizer.json");
  return found.empty() ? "no tokenizer files" : found;
}

TokenizerFiles find_tokenizer_files(const std::filesystem::path& folder) {
  TokenizerFiles files;
  files.vocab_json = file_if_present(folder, "vocab.json");
  files.merges_txt = file_if_present(folder, "merges.txt");
  files.vocab_txt = file_if_present(folder, "vocab.txt");
  files.tokenizer_json = file_if_present(folder, "tokenizer.json");
  files.tokenizer_config_json = file_if_present(folder, "tokenizer_config.json");
  return files;
}

BpeTokenizer load_bpe_tokenizer(const std::filesystem::path& folder) {
  const TokenizerFiles files = find_tokenizer_files(folder);
  if (files.vocab_json && files.merges_txt) {
    return BpeTokenizer::from_files(*files.vocab_json, *files.merges_txt);
  }
  if (files.tokenizer_json) return BpeTokenizer::from_tokenizer_json(*files.tokenizer_json);
  throw ModelError(folder.string() +
                   " has no GPT-2 tokenizer: expected vocab.json + merges.txt "
                   "or tokenizer.json, found " +
                   files.describe());
}

WordPieceOptions wordpiece_options_from_config(const std::filesystem::path& tokenizer_config_json) {
  WordPieceOptions options;
  const nlohmann::json config = read_json_file(tokenizer_config_json, "tokenizer config");
  if (!config.is_object()) return options;
  auto flag = [&](const char* key, bool fallback) {
    const auto it = config.find(key);
    return it != config.end() && it->is_boolean() ? it->get<bool>() : fallback;
  };
  options.lowercase = flag("do_lower_case", true);
  options.strip_accents = flag("strip_accents", options.lowercase);  // null follows lowercase
  options.split_cjk = flag("tokenize_chinese_chars", true);
  return options;
}

WordPieceTokenizer load_wordpiece_tokenizer(const std::filesystem::path& folder) {
  const TokenizerFiles files = find_tokenizer_files(folder);
  if (files.tokenizer_json) return WordPieceTokenizer::from_tokenizer_json(*files.tokenizer_json);
  if (files.vocab_txt) {
    const WordPieceOptions options =
        files.tokenizer_config_json ? wordpiece_options_from_config(*files.tokenizer_config_json)
                                    : WordPieceOptions{};
    return WordPieceTokenizer::from_vocab_txt(*files.vocab_txt, options);
  }
  throw ModelError(folder.string() +
                   " has no BERT tokenizer: expected vocab.txt or "
                   "tokenizer.json, found " +
                   files.describe());
}

}  // namespace attnscope

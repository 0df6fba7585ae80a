#include "core/text/tokenizer_files.h"

#include "core/util/error.h"

namespace attnscope {
namespace {

std::optional<std::filesystem::path> file_if_present(const std::filesystem::path& folder,
                                                     const char* name) {
  std::error_code error;
  const std::filesystem::path path = folder / name;
  if (std::filesystem::is_regular_file(path, error)) return path;
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

}  // namespace attnscope

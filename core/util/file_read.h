#pragma once
// Reading whole files that came from anywhere (a model folder, a download, a file someone sent).
// Only regular files are opened: a FIFO named config.json would block forever and a symlink to
// /dev/zero would read until memory runs out, so both are refused with a message saying what the
// path is. Each read is bounded by the file's size as fstat reports it and by a limit the caller
// chooses. Errors say which of "does not exist", "is a symlink loop", "permission denied", "is a
// directory/FIFO/device" or "larger than N bytes" happened, never a library's internals.
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/util/error.h"

namespace attnscope {

// Why a file could not be read, for callers that word the common case themselves (a missing
// config.json means "not a Hugging Face model folder").
enum class FileProblem { kMissing, kSymlinkLoop, kUnreadable, kNotRegular, kTooLarge, kReadFailed };

struct FileError : ModelError {
  FileError(FileProblem problem, const std::string& message)
      : ModelError(message), problem(problem) {}
  FileProblem problem;
};

// Enough for any config or tokenizer file a real model ships (the largest tokenizer.json files are
// ~35 MB); a caller reading something bigger passes its own limit.
constexpr std::uint64_t kDefaultMaxFileBytes = 512ull << 20;

// The whole content of the regular file `path`. `what` names it in messages ("config",
// "vocabulary"). Throws FileError: "<what> <path> does not exist", "... is a FIFO, not a regular
// file", "... is larger than the N-byte limit", and so on.
std::string read_regular_file(const std::filesystem::path& path, const std::string& what,
                              std::uint64_t max_bytes = kDefaultMaxFileBytes);

// Why `path` (symlinks followed) is not a regular file that can be opened, in words for a message:
// "is a FIFO (named pipe), expected a regular file", "is a directory, …", "does not exist", …;
// "" when it is one. Never opens the path, so a FIFO cannot block it: callers that stream a file
// (a trace of gigabytes) ask this first instead of handing the path to a std::ifstream blindly.
std::string regular_file_problem(const std::filesystem::path& path);

// Whether `path` names something, without throwing: a symlink loop or an unreadable parent
// counts as present, so that reading it reports the real problem instead of "missing".
bool path_present(const std::filesystem::path& path);

// Why `path` cannot be opened, in words for a message: "does not exist", "is a symlink loop (…)",
// "is a symlink to something that does not exist", "cannot be accessed (permission denied)"; ""
// when it can be (stat succeeds).
std::string path_problem(const std::filesystem::path& path);

// `text` cut to at most `max_chars` bytes (on a UTF-8 boundary) with "…" appended when cut: for
// quoting user data in one-line messages, which must never be megabytes long.
std::string quote_excerpt(const std::string& text, std::size_t max_chars = 80);

}  // namespace attnscope

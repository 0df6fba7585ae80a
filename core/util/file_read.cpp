#include "core/util/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attnscope {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every path out of read_regular_file.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_regular_file(const std::filesystem::path& path, const std::string& what,
                              std::uint64_t max_bytes) {
  const std::string name = what + " " + path.string();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. It has no
  // effect on regular files, the only kind read below.
  Fd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      struct stat link {};
      if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
        throw FileError(FileProblem::kMissing,
                        name + " is a symlink to a file that does not exist");
      throw FileError(FileProblem::kMissing, name + " does not exist");
    }
    if (err == ELOOP)
      throw FileError(FileProblem::kSymlinkLoop,
                      name + " is a symlink loop (it points, directly or not, to itself)");
    if (err == EACCES || err == EPERM)
      throw FileError(FileProblem::kUnreadable,
                      name + " exists but cannot be read (permission denied)");
    throw FileError(FileProblem::kUnreadable,
                    name + " cannot be opened (" + std::strerror(err) + ")");
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    throw FileError(FileProblem::kUnreadable,
                    name + " cannot be examined (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode))
    throw FileError(FileProblem::kNotRegular,
                    name + " is " + kind_of(st.st_mode) + ", expected a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    throw FileError(FileProblem::kTooLarge, name + " is " + std::to_string(size) +
                                                " bytes, larger than the " +
                                                std::to_string(max_bytes) + "-byte limit");
  std::string content(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < content.size()) {  // never past the size fstat gave: a growing file is cut there
    const ssize_t n = ::read(file.fd, content.data() + got, content.size() - got);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0)
      throw FileError(FileProblem::kReadFailed,
                      name + " could not be read (" + std::strerror(errno) + ")");
    if (n == 0) break;  // the file shrank while being read
    got += static_cast<std::size_t>(n);
  }
  content.resize(got);
  return content;
}

std::string path_problem(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return "";
  const int err = errno;
  if (err == ELOOP) return "is a symlink loop (it points, directly or not, to itself)";
  if (err == EACCES || err == EPERM) return "cannot be accessed (permission denied)";
  if (err == ENOENT && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return "is a symlink to something that does not exist";
  if (err == ENOENT || err == ENOTDIR) return "does not exist";
  return std::string("cannot be accessed (") + std::strerror(err) + ")";
}

std::string regular_file_problem(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path_problem(path);
  if (!S_ISREG(st.st_mode)) return "is " + kind_of(st.st_mode) + ", expected a regular file";
  return "";
}

bool path_present(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return true;
  return errno != ENOENT && errno != ENOTDIR;
}

std::string quote_excerpt(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  std::size_t cut = max_chars;
  // Step back over UTF-8 continuation bytes so the excerpt stays valid text.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "…";
}

}  // namespace attnscope

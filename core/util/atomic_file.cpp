#include "core/util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/util/error.h"

namespace attnscope {

namespace {
std::string reason() {
  return std::strerror(errno);
}
}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (fs::is_directory(path, ec)) throw Error("cannot write '" + path.string() + "': a folder");
  // mkstemp in the target's folder: same file system, so the rename below cannot copy.
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "." + std::string + "…".
  std::string temp_name = ".";
  temp_name += path.filename().string();
  temp_name += ".tmp-XXXXXX";
  std::string pattern = (folder / temp_name).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) throw Error("cannot write '" + path.string() + "': " + reason());
  const std::string temp(name.data());
  auto fail = [&](const std::string& what) {
    std::string why = reason();
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw Error("cannot write '" + path.string() + "': " + what + ": " + why);
  };
  // mkstemp makes the file 0600; a settings or session file is an ordinary document (0644 less
  // the umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail("chmod");
  for (std::size_t done = 0; done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    fd = -1;
    fail("close");
  }
  fd = -1;
  if (::rename(temp.c_str(), path.c_str()) != 0) fail("rename");
  // The new name lives in the folder: flush the folder so the rename survives a power cut. Some
  // file systems refuse fsync on a folder; the file itself is already safe then.
  int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace attnscope

#include "core/util/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "core/util/error.h"

namespace attnscope {
namespace {

struct ContextDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class Hasher {
 public:
  Hasher() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw Error("SHA-256: OpenSSL could not start a digest");
  }
  void add(const void* data, std::size_t n) {
    if (EVP_DigestUpdate(ctx_.get(), data, n) != 1) throw Error("SHA-256: OpenSSL digest failed");
  }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), digest, &len) != 1)
      throw Error("SHA-256: OpenSSL digest failed");
    static const char* const kDigits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < len; ++i) {
      out += kDigits[digest[i] >> 4];
      out += kDigits[digest[i] & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, ContextDeleter> ctx_;
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Hasher h;
  h.add(bytes.data(), bytes.size());
  return h.hex();
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  Hasher h;
  std::vector<char> block(1 << 20);
  std::size_t n = 0;
  while ((n = std::fread(block.data(), 1, block.size(), f.get())) > 0) h.add(block.data(), n);
  if (std::ferror(f.get())) throw Error("cannot read " + path.string() + ": read error");
  return h.hex();
}

}  // namespace attnscope

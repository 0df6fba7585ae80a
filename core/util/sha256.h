#pragma once
// SHA-256 (OpenSSL's libcrypto), as lowercase hex: for checking downloaded files against the hub's
// listed checksums.
#include <filesystem>
#include <string>
#include <string_view>

namespace attnscope {

std::string sha256_hex(std::string_view bytes);

// The file's SHA-256, read in 1 MB blocks. Throws Error when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace attnscope

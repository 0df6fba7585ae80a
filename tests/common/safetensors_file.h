#pragma once
// Tests that rewrite a fixture's model.safetensors (renamed tensors, cut or added rows): the file
// as its parsed header and its data blob, and back. Test-only: trusts the fixture it reads.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

namespace attnscope::test {

struct SafetensorsFile {
  nlohmann::json header;  // name -> {"dtype", "shape", "data_offsets"} (and "__metadata__")
  std::string data;       // every tensor's bytes; data_offsets index into it
};

inline SafetensorsFile read_safetensors_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  std::string header(n, '\0');
  in.read(header.data(), static_cast<std::streamsize>(n));
  SafetensorsFile file;
  file.header = nlohmann::json::parse(header);
  file.data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return file;
}

// The header padded with spaces to a multiple of 8 bytes, as the format's writers do.
inline void write_safetensors_file(const std::filesystem::path& path, const nlohmann::json& header,
                                   const std::string& data) {
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  const std::uint64_t n = h.size();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << h << data;
}

}  // namespace attnscope::test

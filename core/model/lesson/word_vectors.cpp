#include "core/model/lesson/word_vectors.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>

#include "core/util/assets.h"
#include "core/util/error.h"

namespace attnscope {

int WordVectors::lookup(std::string_view word) const {
  if (auto it = index.find(std::string(word)); it != index.end()) return it->second;
  if (word.size() > 2 && word.substr(word.size() - 2) == "'s") {
    if (auto it = index.find(std::string(word.substr(0, word.size() - 2))); it != index.end())
      return it->second;
  }
  return -1;
}

WordVectors load_word_vectors(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ModelError("cannot open the word vectors '" + path.string() + "'");
  // One read of the whole file (it is opened at every start of the window: byte-wise stream
  // iterators took a tenth of a second).
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(0, std::ios::beg);
  if (size < 0 || size > (std::streamoff{1} << 32))
    throw ModelError("cannot read the word vectors '" + path.string() + "'");
  std::vector<unsigned char> data(static_cast<size_t>(size));
  if (!f.read(reinterpret_cast<char*>(data.data()), size))
    throw ModelError("cannot read the word vectors '" + path.string() + "'");
  auto corrupt = [&](const std::string& why) {
    return ModelError("the word vectors '" + path.string() + "' are damaged (" + why +
                      "); rebuild them with build_word_vectors (assets/lesson_vectors.md)");
  };
  size_t at = 0;
  auto need = [&](size_t n) {
    if (data.size() - at < n) throw corrupt("file ends early");
  };
  auto u32 = [&] {
    need(4);
    std::uint32_t x = data[at] | data[at + 1] << 8 | data[at + 2] << 16 |
                      static_cast<std::uint32_t>(data[at + 3]) << 24;
    at += 4;
    return x;
  };
  need(4);
  if (std::memcmp(data.data(), "ATWV", 4) != 0) throw corrupt("not an ATWV file");
  at = 4;
  if (std::uint32_t version = u32(); version != 1)
    throw corrupt("format version " + std::to_string(version) + ", expected 1");
  const std::uint32_t vocab = u32(), dim = u32();
  if (vocab == 0 || vocab > 10'000'000 || dim == 0 || dim > 4096)
    throw corrupt("implausible size " + std::to_string(vocab) + " x " + std::to_string(dim));

  WordVectors wv;
  wv.source = path;
  wv.words.reserve(vocab);
  wv.index.reserve(vocab);
  for (std::uint32_t i = 0; i < vocab; ++i) {
    need(1);
    size_t len = data[at++];
    need(len);
    wv.words.emplace_back(reinterpret_cast<const char*>(data.data() + at), len);
    at += len;
    wv.index.emplace(wv.words.back(), static_cast<int>(i));
  }
  if (data.size() - at != static_cast<size_t>(vocab) * (4 + dim))
    throw corrupt("vector block has the wrong size");
  wv.vectors.resize(vocab, dim);
  for (std::uint32_t i = 0; i < vocab; ++i) {
    std::uint32_t bits = u32();
    float scale;
    std::memcpy(&scale, &bits, 4);
    float* row = wv.vectors.row(i).data();  // row-major: contiguous
    const unsigned char* q = data.data() + at;
    for (std::uint32_t j = 0; j < dim; ++j)
      row[j] = scale * static_cast<float>(static_cast<signed char>(q[j]));
    at += dim;
    float norm = wv.vectors.row(i).norm();
    if (norm > 0) wv.vectors.row(i) /= norm;  // exact unit length, so logits are β·cos
  }
  return wv;
}

std::shared_ptr<const WordVectors> lesson_word_vectors() {
  static std::mutex mutex;
  static std::shared_ptr<const WordVectors> shared;
  std::lock_guard lock(mutex);
  if (!shared)
    shared =
        std::make_shared<const WordVectors>(load_word_vectors(find_asset("lesson_vectors.bin")));
  return shared;
}

}  // namespace attnscope

#pragma once
// What every fixture writer shares: a bit-reproducible RNG, float -> F16/BF16 rounding, and the
// safetensors / JSON writers (see make_fixture_models.cpp for why reproducibility matters).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fixture {

namespace fs = std::filesystem;
using nlohmann::json;

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1), exact
  // Approximately N(0, 1), from additions only (bit-reproducible everywhere).
  double normal() {
    double s = 0.0;
    for (int i = 0; i < 12; ++i) s += uniform();
    return s - 6.0;
  }

 private:
  std::uint64_t state_;
};

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// float -> IEEE half, round to nearest even (finite inputs of moderate size only, as ours are).
inline std::uint16_t to_f16(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const int exp = static_cast<int>((x >> 23) & 0xffu) - 127 + 15;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (exp <= 0) {                                                    // subnormal half (or zero)
    if (exp < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - exp;
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return static_cast<std::uint16_t>(sign | h);
}

inline std::uint16_t to_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(rounded >> 16);
}

struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

// Writes the tensors in the given dtype ("F32", "F16", "BF16"), laid out in name order, with the
// header padded by spaces to a multiple of 8 bytes as the reference writer does.
inline void write_safetensors(const fs::path& path, std::vector<NamedTensor> tensors,
                              const std::string& dtype) {
  std::map<std::string, const NamedTensor*> by_name;
  for (const auto& t : tensors) by_name[t.name] = &t;
  json header = json::object();
  header["__metadata__"] = {{"format", "pt"}, {"source", "attnscope make_fixture_models"}};
  std::string data;
  for (const auto& [name, t] : by_name) {
    const std::size_t begin = data.size();
    for (float v : t->values) {
      if (dtype == "F32") {
        const std::uint32_t u = float_bits(v);
        for (int b = 0; b < 4; ++b) data.push_back(static_cast<char>((u >> (8 * b)) & 0xffu));
      } else {
        const std::uint16_t u = dtype == "F16" ? to_f16(v) : to_bf16(v);
        data.push_back(static_cast<char>(u & 0xffu));
        data.push_back(static_cast<char>(u >> 8));
      }
    }
    header[name] = {{"dtype", dtype}, {"shape", t->shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h.push_back(' ');
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t len = h.size();
  for (int b = 0; b < 8; ++b) out.put(static_cast<char>((len >> (8 * b)) & 0xffu));
  out << h << data;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

class WeightMaker {
 public:
  explicit WeightMaker(std::uint64_t seed) : rng_(seed) {}
  // values = mean + std · N(0,1)
  NamedTensor make(std::string name, std::vector<std::int64_t> shape, double std_dev,
                   double mean = 0.0) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    NamedTensor t{std::move(name), std::move(shape), {}};
    t.values.resize(static_cast<std::size_t>(n));
    for (float& v : t.values) v = static_cast<float>(mean + std_dev * rng_.normal());
    return t;
  }

 private:
  SplitMix64 rng_;
};

inline void write_json(const fs::path& path, const json& j) {
  std::ofstream out(path);
  out << j.dump(2) << "\n";
}

}  // namespace fixture

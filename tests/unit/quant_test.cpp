// ggml's block formats (core/backend/quant.h) against an independent reference: numpy's
// dequantisation in tools/gguf/ggml_quants.py, run by tests/tools/quant/quant_cases.py on blocks of
// random bytes with extreme f16 scales (±0, subnormals, ±65504) and on realistic random blocks.
// Bit for bit, every type; the CPU's vector dequantisation (dequantize.h) bit for bit against the
// scalar one; block sizes against the GGUF writer's table; non-finite scales found.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/cpu/dequantize.h"
#include "core/backend/dtype.h"
#include "core/backend/quant.h"

namespace attnscope {
namespace {

constexpr DType kAll[] = {DType::kF32,  DType::kF16,  DType::kBF16, DType::kQ4_0,   DType::kQ4_1,
                          DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ2_K,   DType::kQ3_K,
                          DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kIQ4_NL, DType::kIQ4_XS};

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The cases, written once per test program into a fresh folder.
const std::string& cases_dir() {
  static const std::string dir = [] {
    std::string tmpl = testing::TempDir() + "quant_cases_XXXXXX";
    if (!mkdtemp(tmpl.data())) return std::string();
    const std::string script = std::string(ATTNSCOPE_TEST_DATA) + "/../tools/quant/quant_cases.py";
    const std::string cmd = "/usr/bin/python3 '" + script + "' '" + tmpl + "'";
    if (std::system(cmd.c_str()) != 0) return std::string();
    return tmpl;
  }();
  return dir;
}

struct Case {
  std::vector<unsigned char> raw;
  std::vector<float> values;  // numpy's
};
Case load_case(DType t) {
  Case c;
  c.raw = read_bytes(cases_dir() + "/" + dtype_name(t) + ".bin");
  const std::vector<unsigned char> f = read_bytes(cases_dir() + "/" + dtype_name(t) + ".f32");
  c.values.resize(f.size() / 4);
  if (!f.empty()) std::memcpy(c.values.data(), f.data(), f.size());
  return c;
}

// Index of the first value whose bits differ (-1: none).
long first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], 4) != 0) return static_cast<long>(i);
  return -1;
}

TEST(Quant, BlockSizesAreTheGgufWritersTable) {
  ASSERT_FALSE(cases_dir().empty()) << "tests/tools/quant/quant_cases.py failed";
  std::ifstream f(cases_dir() + "/blocks.txt");
  std::string name;
  int values = 0, bytes = 0, seen = 0;
  while (f >> name >> values >> bytes) {
    bool found = false;
    for (DType t : kAll) {
      if (name != dtype_name(t)) continue;
      found = true;
      EXPECT_EQ(dtype_block_values(t), values) << name;
      EXPECT_EQ(dtype_block_bytes(t), bytes) << name;
      EXPECT_EQ(dtype_row_bytes(t, 4096), std::size_t(4096 / values) * bytes) << name;
      EXPECT_EQ(dtype_is_quantized(t), values > 1) << name;
      EXPECT_EQ(dtype_bytes(t), values > 1 ? 0 : bytes) << name;
    }
    EXPECT_TRUE(found) << name;
    ++seen;
  }
  EXPECT_EQ(seen, 15);
}

TEST(Quant, DequantisationEqualsNumpyBitForBit) {
  ASSERT_FALSE(cases_dir().empty()) << "tests/tools/quant/quant_cases.py failed";
  for (DType t : kAll) {
    SCOPED_TRACE(dtype_name(t));
    const Case c = load_case(t);
    const int per = dtype_block_values(t), bytes = dtype_block_bytes(t);
    ASSERT_GT(c.values.size(), 0u);
    ASSERT_EQ(c.raw.size() / bytes * per, c.values.size());
    const int n = static_cast<int>(c.values.size());
    std::vector<float> got(c.values.size(), -1.0f);
    dequantize_row(t, c.raw.data(), got.data(), n);
    long bad = first_difference(got, c.values);
    EXPECT_EQ(bad, -1) << "value " << bad << " (block " << bad / per << "): got "
                       << (bad >= 0 ? got[bad] : 0) << ", numpy " << (bad >= 0 ? c.values[bad] : 0);
    // load_as_float, one value at a time.
    for (int i = 0; i < n; i += 7) {
      const float v = load_as_float(c.raw.data(), t, static_cast<std::size_t>(i));
      ASSERT_EQ(std::memcmp(&v, &c.values[i], 4), 0) << "load_as_float at " << i;
    }
    // The CPU's vector dequantisation: every instruction set this build has, and the one used.
    for (cpu::DequantIsa isa : cpu::dequantize_isas()) {
      std::vector<float> fast(c.values.size(), -1.0f);
      cpu::dequantize_row_with(isa, t, c.raw.data(), fast.data(), n);
      bad = first_difference(fast, c.values);
      EXPECT_EQ(bad, -1) << "instruction set " << static_cast<int>(isa) << ": value " << bad
                         << " (block " << bad / per << "): got " << (bad >= 0 ? fast[bad] : 0)
                         << ", numpy " << (bad >= 0 ? c.values[bad] : 0);
    }
    std::vector<float> fast(c.values.size(), -1.0f);
    cpu::dequantize_row_fast(t, c.raw.data(), fast.data(), n);
    EXPECT_EQ(first_difference(fast, c.values), -1) << "dequantize_row_fast";
  }
}

// A [rows x cols] quantised view is `rows` rows of cols / block values blocks: at(r, c), widen and
// the embedding read row r's blocks.
TEST(Quant, WeightViewReadsRowsOfBlocks) {
  ASSERT_FALSE(cases_dir().empty());
  for (DType t : {DType::kQ4_K, DType::kQ8_0, DType::kQ6_K, DType::kIQ4_NL}) {
    SCOPED_TRACE(dtype_name(t));
    const Case c = load_case(t);
    const int per = dtype_block_values(t);
    const int cols = 2 * per, rows = static_cast<int>(c.values.size()) / cols;
    WeightView w;
    w.data = c.raw.data();
    w.dtype = t;
    w.rows = rows;
    w.cols = cols;
    const Matrix m = widen(w);
    for (int r = 0; r < rows; r += 3)
      for (int col = 0; col < cols; col += 5) {
        const float want = c.values[static_cast<std::size_t>(r) * cols + col];
        ASSERT_EQ(w.at(r, col), want) << r << "," << col;
        ASSERT_EQ(m(r, col), want) << r << "," << col;
      }
  }
}

TEST(Quant, NonFiniteScalesAreFound) {
  ASSERT_FALSE(cases_dir().empty());
  for (DType t : kAll) {
    if (!dtype_is_quantized(t)) continue;
    SCOPED_TRACE(dtype_name(t));
    Case c = load_case(t);
    const std::size_t bytes = dtype_block_bytes(t), blocks = c.raw.size() / bytes;
    const int per = dtype_block_values(t);
    EXPECT_EQ(first_non_finite_block(t, c.raw.data(), blocks), -1);
    EXPECT_TRUE(quantized_rows_finite(t, c.raw.data(), static_cast<int>(blocks), per));
    const quant::ScaleOffsets o = quant::scale_offsets(t);
    for (int field : {o.first, o.second}) {
      if (field < 0) continue;
      for (std::uint16_t h : {std::uint16_t(0x7c00), std::uint16_t(0xfc00), std::uint16_t(0x7e00),
                              std::uint16_t(0x7c01)}) {
        std::vector<unsigned char> raw = c.raw;
        const std::size_t block = blocks - 3;
        std::memcpy(raw.data() + block * bytes + field, &h, 2);
        EXPECT_EQ(first_non_finite_block(t, raw.data(), blocks), static_cast<long>(block))
            << "field at byte " << field << ", f16 " << h;
        EXPECT_FALSE(quantized_rows_finite(t, raw.data(), static_cast<int>(blocks), per));
        // ggml would compute with it: a non-finite value appears, which is why it is refused.
        std::vector<float> y(static_cast<std::size_t>(per));
        quant::dequantize_block(t, raw.data() + block * bytes, y.data());
        bool non_finite = false;
        for (float v : y) non_finite = non_finite || !std::isfinite(v);
        EXPECT_TRUE(non_finite || h == 0x7c00 || h == 0xfc00);  // inf · 0 … only NaN is certain
      }
    }
  }
}

// The scalar dequantisation of one hand-made block of each of three formats, worked by hand from
// ggml-common.h's layouts: a check that does not depend on numpy's reading of them.
TEST(Quant, HandWorkedBlocks) {
  {  // Q8_0: d = 0.5 (f16 0x3800), q = -128, 1, 127, 0 …
    unsigned char b[34] = {0x00, 0x38};
    b[2] = 0x80;
    b[3] = 1;
    b[4] = 127;
    float y[32];
    quant::dequantize_block(DType::kQ8_0, b, y);
    EXPECT_EQ(y[0], -64.0f);
    EXPECT_EQ(y[1], 0.5f);
    EXPECT_EQ(y[2], 63.5f);
    EXPECT_EQ(y[3], 0.0f);
  }
  {  // Q4_0: d = 2 (0x4000); byte 0 = 0xf0: value 0 is (0 - 8)·2, value 16 is (15 - 8)·2
    unsigned char b[18] = {0x00, 0x40, 0xf0};
    float y[32];
    quant::dequantize_block(DType::kQ4_0, b, y);
    EXPECT_EQ(y[0], -16.0f);
    EXPECT_EQ(y[16], 14.0f);
    EXPECT_EQ(y[1], -16.0f);  // byte 1 = 0: (0 - 8)·2
  }
  {  // Q4_K: d = 1, dmin = 0.5; sub-block 0 scale 3, min 2 (bytes 4 and 8); sub-block 4's scale
     // 5 = low nibble of byte 12 (+ top bits of byte 4 = 0), min 1 = high nibble of byte 12.
    unsigned char b[144] = {0x00, 0x3c, 0x00, 0x38};
    b[4] = 3;
    b[8] = 2;
    b[12] = 0x15;
    b[16] = 0x09;       // value 0: nibble 9
    b[16 + 64] = 0x07;  // chunk 2 (values 128-191), low nibble: value 128, sub-block 4
    float y[256];
    quant::dequantize_block(DType::kQ4_K, b, y);
    EXPECT_EQ(y[0], 3.0f * 9 - 0.5f * 2);
    EXPECT_EQ(y[1], -1.0f);
    EXPECT_EQ(y[128], 5.0f * 7 - 0.5f * 1);
  }
}

}  // namespace
}  // namespace attnscope

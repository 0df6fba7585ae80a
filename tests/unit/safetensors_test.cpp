// The safetensors reader against hand-made files: good ones with every float dtype, and broken ones
// (each must fail with a ModelError that names the tensor or the problem).
#include "core/model/hf/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/util/error.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnscope_safetensors_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 8-byte little-endian length (the header's real size unless overridden), header, data.
  fs::path write(const std::string& name, const std::string& header, const std::string& data,
                 std::uint64_t header_len = UINT64_MAX) {
    if (header_len == UINT64_MAX) header_len = header.size();
    const fs::path p = dir_ / name;
    std::ofstream out(p, std::ios::binary);
    for (int b = 0; b < 8; ++b) out.put(static_cast<char>((header_len >> (8 * b)) & 0xff));
    out << header << data;
    return p;
  }

  // Expects open() to throw a ModelError whose message contains every one of `parts`.
  void expect_open_error(const fs::path& p, std::initializer_list<std::string> parts) {
    try {
      SafetensorsFile::open(p);
      FAIL() << "no error for " << p;
    } catch (const ModelError& e) {
      for (const std::string& part : parts)
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
            << "message '" << e.what() << "' lacks '" << part << "'";
    }
  }

  fs::path dir_;
};

std::string le32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  std::string s(4, '\0');
  for (int b = 0; b < 4; ++b) s[b] = static_cast<char>((u >> (8 * b)) & 0xff);
  return s;
}
std::string le16(std::uint16_t u) {
  return std::string{static_cast<char>(u & 0xff), static_cast<char>(u >> 8)};
}

TEST_F(SafetensorsTest, ReadsF32F16Bf16AndSkipsMetadata) {
  // a: F32 [2 x 3]; b: F16 [4] = 1.5, -2, 65504 (max half), 2^-24 (smallest subnormal);
  // c: BF16 [1 x 2 x 2] = 1, -0.5, 3.140625, 0 (as [1 x 4]).
  std::string data;
  for (float v : {1.f, 2.f, 3.f, -4.f, 0.25f, 1e-3f}) data += le32(v);
  data += le16(0x3e00) + le16(0xc000) + le16(0x7bff) + le16(0x0001);
  data += le16(0x3f80) + le16(0xbf00) + le16(0x4049) + le16(0x0000);
  const std::string header = R"({"__metadata__":{"format":"pt"},)"
                             R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                             R"("b":{"dtype":"F16","shape":[4],"data_offsets":[24,32]},)"
                             R"("c":{"dtype":"BF16","shape":[1,2,2],"data_offsets":[32,40]}})";
  const SafetensorsFile f = SafetensorsFile::open(write("good.safetensors", header, data));
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_FALSE(f.has("__metadata__"));
  EXPECT_EQ(f.tensors().at("c").dtype, "BF16");
  EXPECT_EQ(f.tensors().at("c").shape, (std::vector<std::int64_t>{1, 2, 2}));

  const Matrix a = f.matrix("a");
  ASSERT_EQ(a.rows(), 2);
  ASSERT_EQ(a.cols(), 3);
  EXPECT_EQ(a(0, 2), 3.f);
  EXPECT_EQ(a(1, 0), -4.f);
  EXPECT_EQ(a(1, 2), 1e-3f);

  const Matrix b = f.matrix("b");  // 1-D reads as one row
  ASSERT_EQ(b.rows(), 1);
  ASSERT_EQ(b.cols(), 4);
  EXPECT_EQ(b(0, 0), 1.5f);
  EXPECT_EQ(b(0, 1), -2.f);
  EXPECT_EQ(b(0, 2), 65504.f);
  EXPECT_EQ(b(0, 3), std::ldexp(1.f, -24));

  const Matrix c = f.matrix("c");  // N-D reads as [shape[0] x rest]
  ASSERT_EQ(c.rows(), 1);
  ASSERT_EQ(c.cols(), 4);
  EXPECT_EQ(c(0, 0), 1.f);
  EXPECT_EQ(c(0, 1), -0.5f);
  EXPECT_EQ(c(0, 2), 3.140625f);
  EXPECT_EQ(c(0, 3), 0.f);
}

TEST_F(SafetensorsTest, UnalignedDataSectionStillReads) {
  // A 5-byte header puts the data at offset 13: floats are not 4-byte aligned in the mapping.
  std::string header = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const SafetensorsFile f =
      SafetensorsFile::open(write("odd.safetensors", header + " ", le32(7.5f) + le32(-1.f)));
  EXPECT_EQ(f.matrix("x")(0, 0), 7.5f);
  EXPECT_EQ(f.matrix("x")(0, 1), -1.f);
}

TEST_F(SafetensorsTest, MissingTensorIsNamed) {
  const SafetensorsFile f = SafetensorsFile::open(write(
      "one.safetensors", R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", le32(1.f)));
  try {
    f.matrix("h.0.attn.c_attn.weight");
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("h.0.attn.c_attn.weight"), std::string::npos);
  }
}

TEST_F(SafetensorsTest, IntegerTensorCannotBeReadAsFloats) {
  const SafetensorsFile f = SafetensorsFile::open(
      write("int.safetensors", R"({"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})",
            std::string(8, '\0')));
  EXPECT_THROW(f.matrix("ids"), ModelError);
}

TEST_F(SafetensorsTest, TooShortFile) {
  const fs::path p = dir_ / "short.safetensors";
  std::ofstream(p, std::ios::binary) << "abc";
  expect_open_error(p, {"too short"});
}

TEST_F(SafetensorsTest, MissingFile) {
  expect_open_error(dir_ / "nope.safetensors", {"cannot open"});
}

TEST_F(SafetensorsTest, HugeHeaderLength) {
  expect_open_error(write("huge.safetensors", "{}", "", 1ull << 60), {"exceeds"});
}

TEST_F(SafetensorsTest, HeaderLengthBeyondEndOfFile) {
  expect_open_error(write("cut.safetensors", "{}", "", 1000), {"beyond the end"});
}

TEST_F(SafetensorsTest, BadJson) {
  expect_open_error(write("bad.safetensors", R"({"x": {"dtype": "F32", )", ""), {"not valid JSON"});
}

TEST_F(SafetensorsTest, HeaderNotAnObject) {
  expect_open_error(write("arr.safetensors", "[1,2]", ""), {"not a JSON object"});
}

TEST_F(SafetensorsTest, UnknownDtype) {
  expect_open_error(write("dtype.safetensors",
                          R"({"w":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", le32(1.f)),
                    {"'w'", "unknown dtype 'F99'"});
}

TEST_F(SafetensorsTest, LengthDoesNotMatchShape) {
  expect_open_error(
      write("len.safetensors", R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
            std::string(8, '\0')),
      {"'w'", "does not match"});
}

TEST_F(SafetensorsTest, TruncatedDataSection) {
  // The header promises 16 bytes of data, the file holds 8: a cut-off download.
  expect_open_error(
      write("trunc.safetensors", R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
            std::string(8, '\0')),
      {"'w'", "beyond the data section"});
}

TEST_F(SafetensorsTest, OverlappingTensors) {
  expect_open_error(write("overlap.safetensors",
                          R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          std::string(12, '\0')),
                    {"'a'", "'b'", "overlap"});
}

TEST_F(SafetensorsTest, MalformedEntries) {
  expect_open_error(
      write("noshape.safetensors", R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", le32(0.f)),
      {"'w'", "shape"});
  expect_open_error(write("neg.safetensors",
                          R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", le32(0.f)),
                    {"'w'", "shape"});
  expect_open_error(write("rev.safetensors",
                          R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", le32(0.f)),
                    {"'w'", "begin > end"});
}

#ifdef ATTNSCOPE_FIXTURES
TEST(SafetensorsFixtureTest, ReadsTheGeneratedGpt2Model) {
  const SafetensorsFile f =
      SafetensorsFile::open(fs::path(ATTNSCOPE_FIXTURES) / "gpt2-tiny-f16" / "model.safetensors");
  ASSERT_TRUE(f.has("transformer.wte.weight"));
  const Matrix wte = f.matrix("transformer.wte.weight");
  EXPECT_EQ(wte.rows(), 50257);
  EXPECT_EQ(wte.cols(), 32);
  // The tied LM head is stored as a second copy of the same values.
  EXPECT_TRUE(wte.isApprox(f.matrix("lm_head.weight"), 0.0f));
}
#endif

}  // namespace
}  // namespace attnscope

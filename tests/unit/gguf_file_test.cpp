// The GGUF reader on valid files written byte by byte (tests/common/gguf_bytes.h): every metadata
// value type and array, versions 2 and 3, alignments other than 32, tensors of several ggml types
// (ones attnscope computes and ones it only describes) read back exactly; the typed getters'
// messages; the type and file-type names.
#include "core/model/gguf/gguf_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>

#include "core/model/hf/safetensors.h"
#include "core/util/error.h"
#include "core/util/json_file.h"
#include "tests/common/gguf_bytes.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::GgufBytes;

fs::path temp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("gguf_file_test-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::shared_ptr<const GgufFile> open_bytes(const GgufBytes& b, const std::string& name) {
  const fs::path p = temp_dir() / name;
  b.write(p);
  return GgufFile::open(p);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

class EveryValueType : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(EveryValueType, ReadsBackExactly) {
  GgufBytes b;
  b.version = GetParam();
  b.u8("u8", 255).i8("i8", -128).u16("u16", 65535).i16("i16", -32768);
  b.u32("u32", 4000000000u).i32("i32", std::numeric_limits<std::int32_t>::min());
  b.u64("u64", std::numeric_limits<std::int64_t>::max())
      .i64("i64", std::numeric_limits<std::int64_t>::min());
  b.f32("f32", 0.1f).f64("f64", -1e300).boolean("yes", true).boolean("no", false);
  b.str("text", "llama \xE2\x96\x81 caf\xC3\xA9").str("empty", "");
  b.str(std::string("bad\xff\xfekey", 9), "kept as bytes");
  b.strings("tokens", {"<s>", "", "\xE2\x96\x81the", std::string("a\0b", 3)});
  b.array<std::uint8_t>("bytes", test::kU8, {0, 7, 255});
  b.array<std::int8_t>("int8s", test::kI8, {-1, 5});
  b.array<std::uint16_t>("u16s", test::kU16, {65535});
  b.array<std::int16_t>("i16s", test::kI16, {-300});
  b.array<std::uint32_t>("u32s", test::kU32, {1, 4294967295u});
  b.array<std::int32_t>("types", test::kI32, {1, 3, 6, -7});
  b.array<std::uint64_t>("u64s", test::kU64, {123456789012345ull});
  b.array<std::int64_t>("i64s", test::kI64, {-5});
  b.array<float>("scores", test::kF32, {-1.5f, 0.f, 3.25e-8f});
  b.array<double>("f64s", test::kF64, {2.5});
  b.array<std::uint8_t>("bools", test::kBool, {1, 0, 1});
  b.array<std::int32_t>("none", test::kI32, {});
  const auto f = open_bytes(b, "values-v" + std::to_string(GetParam()) + ".gguf");

  EXPECT_EQ(f->version(), GetParam());
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_TRUE(f->tensors().empty());
  ASSERT_EQ(f->metadata().size(), 28u);
  EXPECT_EQ(f->metadata()[0].first, "u8");  // file order kept
  EXPECT_EQ(f->get_int("u8"), 255);
  EXPECT_EQ(f->get_int("i8"), -128);
  EXPECT_EQ(f->get_int("u16"), 65535);
  EXPECT_EQ(f->get_int("i16"), -32768);
  EXPECT_EQ(f->get_int("u32"), 4000000000);
  EXPECT_EQ(f->get_int("i32"), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(f->get_int("u64"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(f->get_int("i64"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(f->find("u32")->type, GgufType::kUint32);
  EXPECT_EQ(f->find("i16")->type, GgufType::kInt16);
  EXPECT_EQ(f->get_float("f32"), static_cast<double>(0.1f));
  EXPECT_EQ(f->find("f32")->type, GgufType::kFloat32);
  EXPECT_EQ(f->get_float("f64"), -1e300);
  EXPECT_EQ(f->get_float("i8"), -128.0);  // integers are numbers too
  EXPECT_TRUE(f->get_bool("yes", false));
  EXPECT_FALSE(f->get_bool("no", true));
  EXPECT_EQ(f->get_string("text"), "llama \xE2\x96\x81 caf\xC3\xA9");
  EXPECT_EQ(f->get_string("empty"), "");
  EXPECT_EQ(f->get_string(std::string("bad\xff\xfekey", 9)), "kept as bytes");

  const auto& tokens = f->get_strings("tokens");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[1], "");
  EXPECT_EQ(tokens[2], "\xE2\x96\x81the");
  EXPECT_EQ(tokens[3], std::string("a\0b", 3));
  EXPECT_EQ(f->find("tokens")->array_size(), 4u);
  EXPECT_EQ(f->find("tokens")->element_type, GgufType::kString);
  EXPECT_EQ(f->get_ints("bytes"), (std::vector<std::int64_t>{0, 7, 255}));
  EXPECT_EQ(f->get_ints("int8s"), (std::vector<std::int64_t>{-1, 5}));
  EXPECT_EQ(f->get_ints("u16s"), (std::vector<std::int64_t>{65535}));
  EXPECT_EQ(f->get_ints("i16s"), (std::vector<std::int64_t>{-300}));
  EXPECT_EQ(f->get_ints("u32s"), (std::vector<std::int64_t>{1, 4294967295}));
  EXPECT_EQ(f->get_ints("types"), (std::vector<std::int64_t>{1, 3, 6, -7}));
  EXPECT_EQ(f->get_ints("u64s"), (std::vector<std::int64_t>{123456789012345}));
  EXPECT_EQ(f->get_ints("i64s"), (std::vector<std::int64_t>{-5}));
  EXPECT_EQ(f->get_ints("bools"), (std::vector<std::int64_t>{1, 0, 1}));
  EXPECT_EQ(f->find("bools")->element_type, GgufType::kBool);
  EXPECT_EQ(f->get_floats("scores"),
            (std::vector<double>{-1.5, 0.0, static_cast<double>(3.25e-8f)}));
  EXPECT_EQ(f->get_floats("f64s"), (std::vector<double>{2.5}));
  EXPECT_EQ(f->get_floats("types"), (std::vector<double>{1, 3, 6, -7}));  // numbers as doubles
  EXPECT_EQ(f->find("none")->array_size(), 0u);
  EXPECT_EQ(f->find("none")->type, GgufType::kArray);
  EXPECT_EQ(f->find("u8")->array_size(), 0u);  // a scalar
  EXPECT_EQ(f->find("absent"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Versions, EveryValueType, ::testing::Values(2u, 3u));

TEST(GgufFile, TypedGettersNameKeyExpectedAndFound) {
  GgufBytes b;
  b.str("general.name", "tiny").u32("llama.block_count", 2).f32("eps", 1e-5f);
  b.array<std::int32_t>("ids", test::kI32, {1});
  b.strings("words", {"a"});
  const auto f = open_bytes(b, "typed.gguf");
  const std::string path = (temp_dir() / "typed.gguf").string();

  std::string e = error_of([&] { (void)f->get_int("general.name"); });
  EXPECT_EQ(e, path + ": metadata key 'general.name' is string, expected an integer");
  e = error_of([&] { (void)f->get_string("llama.block_count"); });
  EXPECT_EQ(e, path + ": metadata key 'llama.block_count' is uint32, expected a string");
  e = error_of([&] { (void)f->get_int("eps"); });
  EXPECT_EQ(e, path + ": metadata key 'eps' is float32, expected an integer");
  e = error_of([&] { (void)f->get_strings("ids"); });
  EXPECT_EQ(e, path + ": metadata key 'ids' is an array of int32, expected an array of strings");
  e = error_of([&] { (void)f->get_ints("words"); });
  EXPECT_EQ(e,
            path + ": metadata key 'words' is an array of string, expected an array of integers");
  e = error_of([&] { (void)f->get_floats("general.name"); });
  EXPECT_EQ(e, path + ": metadata key 'general.name' is string, expected an array of numbers");
  e = error_of([&] { (void)f->get_bool("llama.block_count", false); });
  EXPECT_EQ(e, path + ": metadata key 'llama.block_count' is uint32, expected a bool");
  e = error_of([&] { (void)f->get_float("words"); });
  EXPECT_EQ(e, path + ": metadata key 'words' is an array of string, expected a number");
  e = error_of([&] { (void)f->get_string("general.architecture"); });
  EXPECT_EQ(e, path + ": metadata key 'general.architecture' is missing");
  // Fallbacks apply only to absent keys; a present key of the wrong type is still an error.
  EXPECT_EQ(f->get_string("general.architecture", "llama"), "llama");
  EXPECT_EQ(f->get_int("llama.context_length", 2048), 2048);
  EXPECT_EQ(f->get_float("rope.freq_base", 1e4), 1e4);
  EXPECT_TRUE(f->get_bool("absent", true));
  EXPECT_THROW((void)f->get_int("general.name", 3), ModelError);
  EXPECT_EQ(f->get_int("llama.block_count", 7), 2);
  EXPECT_FLOAT_EQ(static_cast<float>(f->get_float("eps", 0)), 1e-5f);
}

struct LayoutCase {
  std::uint32_t version;
  std::uint32_t alignment;  // 0: no general.alignment key (32)
};
class TensorLayout : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(TensorLayout, TensorsOfSeveralTypesReadBackExactly) {
  const LayoutCase c = GetParam();
  GgufBytes b;
  b.version = c.version;
  b.str("general.architecture", "llama");
  if (c.alignment) b.alignment_kv(c.alignment);
  b.tensor("token_embd.weight", {256, 3}, 12);          // Q4_K [3 x 256]
  b.tensor("output_norm.weight", {64}, 0);              // F32, 1-D
  b.tensor("blk.0.attn_q.weight", {64, 5}, 8);          // Q8_0
  b.tensor("blk.0.attn_k.weight", {32, 2}, 2);          // Q4_0
  b.tensor("blk.0.ffn_down.weight", {256, 2}, 14);      // Q6_K
  b.tensor("blk.0.ffn_up.weight", {256, 1}, 23);        // IQ4_XS
  b.tensor("blk.0.attn_v.weight", {32, 4}, 20);         // IQ4_NL
  b.tensor("blk.0.ffn_gate.weight", {7, 3}, 1);         // F16, odd row length
  b.tensor("blk.0.attn_output.weight", {3, 2, 2}, 30);  // BF16, 3-D
  b.tensor("rope_freqs", {2, 1, 1, 2}, 28);             // F64, 4-D
  b.tensor("ternary", {256}, 34);                       // TQ1_0: valid, not computed
  b.tensor("ids", {5}, 26);                             // I32
  const std::string name =
      "layout-v" + std::to_string(c.version) + "-a" + std::to_string(c.alignment) + ".gguf";
  const auto f = open_bytes(b, name);
  const std::string bytes = b.bytes();

  EXPECT_EQ(f->alignment(), c.alignment ? c.alignment : 32u);
  EXPECT_EQ(f->file_size(), bytes.size());
  ASSERT_EQ(f->tensors().size(), b.tensors().size());
  const auto offsets = b.offsets();
  const auto* base = static_cast<const unsigned char*>(f->owner().get());
  for (std::size_t i = 0; i < b.tensors().size(); ++i) {
    const auto& want = b.tensors()[i];
    const GgufTensor& got = f->tensors()[i];  // file order kept
    SCOPED_TRACE(want.name);
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.ggml_type, want.type);
    EXPECT_EQ(got.dims, want.dims);
    EXPECT_EQ(got.offset, offsets[i]);
    EXPECT_EQ(got.bytes, want.data.size());
    ASSERT_NE(got.data, nullptr);
    EXPECT_EQ(got.data - base, static_cast<std::ptrdiff_t>(b.data_start() + offsets[i]));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(got.data), got.bytes), want.data);
    EXPECT_EQ((b.data_start() + offsets[i]) % f->alignment(), 0u);
    std::uint64_t n = 1;
    for (auto d : want.dims) n *= d;
    EXPECT_EQ(got.elements(), n);
    EXPECT_EQ(f->tensor(want.name), &got);
  }
  EXPECT_EQ(f->tensor("blk.1.attn_q.weight"), nullptr);
  EXPECT_EQ(f->tensor(""), nullptr);
}

INSTANTIATE_TEST_SUITE_P(AlignmentsAndVersions, TensorLayout,
                         ::testing::Values(LayoutCase{3, 0}, LayoutCase{2, 0}, LayoutCase{3, 1},
                                           LayoutCase{3, 8}, LayoutCase{2, 64},
                                           LayoutCase{3, 4096}),
                         [](const auto& info) {
                           return "v" + std::to_string(info.param.version) + "_align" +
                                  std::to_string(info.param.alignment);
                         });

TEST(GgufFile, TensorsInAnyOrderWithGapsBetweenThem) {
  // The format asks only for aligned offsets inside the file; writers place tensors in order,
  // but a file with gaps or tensors listed out of order is still valid.
  GgufBytes b;
  b.tensor("b", {8}, 0, 96).tensor("a", {8}, 0, 0);
  const auto f = open_bytes(b, "gaps.gguf");
  EXPECT_EQ(f->tensor("b")->offset, 96u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->tensor("b")->data), 32),
            b.tensors()[0].data);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f->tensor("a")->data), 32),
            b.tensors()[1].data);
}

TEST(GgufFile, MappingOutlivesTheFileObject) {
  GgufBytes b;
  b.tensor("w", {32, 2}, 8);
  std::shared_ptr<const void> owner;
  const unsigned char* data = nullptr;
  {
    const auto f = open_bytes(b, "owner.gguf");
    owner = f->owner();
    data = f->tensor("w")->data;
  }
  fs::remove(temp_dir() / "owner.gguf");  // the mapping keeps the bytes
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(data), 68), b.tensors()[0].data);
}

TEST(GgufFile, VocabOnlyFileEndsAfterTheMetadata) {
  GgufBytes b;
  b.str("general.architecture", "llama").strings("tokenizer.ggml.tokens", {"a", "b"});
  const std::string bytes = b.bytes();
  const auto f = open_bytes(b, "vocab.gguf");
  EXPECT_EQ(f->file_size(), bytes.size());  // no padding needed without tensors
  EXPECT_EQ(f->get_strings("tokenizer.ggml.tokens").size(), 2u);
}

// The fixtures tools/gguf writes (gguf_fixtures, into build/fixtures/gguf) read back against what
// the same Python wrote beside them: every tensor of NAME.gguf is in NAME.dequant.safetensors
// under its name with the dims reversed, F32 tensors are the same bytes and F16/BF16 ones the same
// values widened, and the manifest's tensor types are the file's.
TEST(GgufFixtures, ReadBackAgainstTheirDequantisedTensors) {
  const fs::path dir =
      fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "fixtures" / "gguf";
  if (!fs::exists(dir / "manifest.json"))
    GTEST_SKIP() << "no " << (dir / "manifest.json") << " (the gguf_fixtures target makes it)";
  const auto manifest = load_json_file(dir / "manifest.json", "fixture manifest");
  ASSERT_TRUE(manifest.is_array());
  ASSERT_GE(manifest.size(), 7u);
  for (const auto& entry : manifest) {
    const std::string name = entry.at("name").get<std::string>();
    SCOPED_TRACE(name);
    const auto f = GgufFile::open(dir / (name + ".gguf"));
    EXPECT_EQ(f->get_string("general.architecture"), entry.at("arch").get<std::string>());
    const SafetensorsFile dq = SafetensorsFile::open(dir / (name + ".dequant.safetensors"));
    EXPECT_EQ(f->tensors().size(), dq.tensors().size());
    std::set<std::string> types;
    for (const GgufTensor& t : f->tensors()) {
      SCOPED_TRACE(t.name);
      types.insert(ggml_type_name(t.ggml_type));
      ASSERT_TRUE(dq.has(t.name));
      const RawTensor raw = dq.raw(t.name);
      ASSERT_EQ(raw.dtype, "F32");
      std::vector<std::int64_t> reversed(t.dims.rbegin(), t.dims.rend());
      while (reversed.size() > 1 && reversed.front() == 1) reversed.erase(reversed.begin());
      std::vector<std::int64_t> shape = raw.shape;
      while (shape.size() > 1 && shape.front() == 1) shape.erase(shape.begin());
      EXPECT_EQ(shape, reversed);
      ASSERT_EQ(raw.bytes, t.elements() * 4);
      const auto* want = static_cast<const float*>(raw.data);
      if (t.ggml_type == 0) {
        EXPECT_EQ(std::memcmp(t.data, raw.data, raw.bytes), 0);
      } else if (t.ggml_type == 1 || t.ggml_type == 30) {
        const DType d = t.ggml_type == 1 ? DType::kF16 : DType::kBF16;
        std::size_t differ = 0;
        for (std::size_t i = 0; i < t.elements(); ++i)
          differ += load_as_float(t.data, d, i) != want[i];
        EXPECT_EQ(differ, 0u);
      }
    }
    for (const auto& type : entry.at("types"))
      EXPECT_TRUE(types.count(type.get<std::string>())) << type;
    EXPECT_EQ(types.size(), entry.at("types").size());
  }
}

TEST(GgufTypes, NamesAndBlocksFollowGgml) {
  // ggml.h's ggml_type numbers and ggml-common.h's block structs (through the test's own table).
  const std::vector<std::pair<std::uint32_t, const char*>> names = {
      {0, "F32"},     {1, "F16"},      {2, "Q4_0"},   {3, "Q4_1"},    {6, "Q5_0"},
      {7, "Q5_1"},    {8, "Q8_0"},     {9, "Q8_1"},   {10, "Q2_K"},   {11, "Q3_K"},
      {12, "Q4_K"},   {13, "Q5_K"},    {14, "Q6_K"},  {15, "Q8_K"},   {16, "IQ2_XXS"},
      {17, "IQ2_XS"}, {18, "IQ3_XXS"}, {19, "IQ1_S"}, {20, "IQ4_NL"}, {21, "IQ3_S"},
      {22, "IQ2_S"},  {23, "IQ4_XS"},  {24, "I8"},    {25, "I16"},    {26, "I32"},
      {27, "I64"},    {28, "F64"},     {29, "IQ1_M"}, {30, "BF16"},   {34, "TQ1_0"},
      {35, "TQ2_0"},  {39, "MXFP4"}};
  for (const auto& [t, name] : names) EXPECT_STREQ(ggml_type_name(t), name) << t;
  EXPECT_STREQ(ggml_type_name(99), "type 99");
  EXPECT_STREQ(ggml_type_name(4), "Q4_2");  // removed, but named in messages
  EXPECT_EQ(ggml_type_block_values(4), 0u);
  for (std::uint32_t t : {0u,  1u,  2u,  3u,  6u,  7u,  8u,  9u,  10u, 11u, 12u, 13u,
                          14u, 15u, 16u, 20u, 23u, 24u, 26u, 28u, 30u, 34u, 39u}) {
    EXPECT_EQ(ggml_type_block_values(t), test::ggml_block(t).values) << t;
    EXPECT_EQ(ggml_type_block_bytes(t), test::ggml_block(t).bytes) << t;
  }
  EXPECT_EQ(ggml_type_block_values(1000), 0u);
}

TEST(GgufTypes, DTypesAttnscopeComputesWith) {
  // The list of tensor types, by ggml_type number; each one's block as core/backend/dtype.h
  // has it must be ggml's.
  const std::vector<std::pair<std::uint32_t, DType>> computed = {
      {0, DType::kF32},   {1, DType::kF16},     {30, DType::kBF16},  {2, DType::kQ4_0},
      {3, DType::kQ4_1},  {6, DType::kQ5_0},    {7, DType::kQ5_1},   {8, DType::kQ8_0},
      {10, DType::kQ2_K}, {11, DType::kQ3_K},   {12, DType::kQ4_K},  {13, DType::kQ5_K},
      {14, DType::kQ6_K}, {20, DType::kIQ4_NL}, {23, DType::kIQ4_XS}};
  for (const auto& [t, d] : computed) {
    EXPECT_EQ(dtype_of_ggml_type(t), d) << t;
    EXPECT_STREQ(dtype_name(d), ggml_type_name(t));
    EXPECT_EQ(static_cast<std::uint32_t>(dtype_block_values(d)), test::ggml_block(t).values) << t;
    EXPECT_EQ(static_cast<std::uint32_t>(dtype_block_bytes(d)), test::ggml_block(t).bytes) << t;
  }
  for (std::uint32_t t : {9u, 15u, 16u, 17u, 18u, 19u, 21u, 22u, 24u, 25u, 26u, 27u, 28u, 29u, 34u,
                          35u, 39u, 4u, 99u})
    EXPECT_EQ(dtype_of_ggml_type(t), std::nullopt) << t;
}

TEST(GgufTypes, LlamaFileTypeNames) {
  // include/llama.h, enum llama_ftype.
  const std::vector<std::pair<int, const char*>> names = {
      {0, "F32"},      {1, "F16"},      {2, "Q4_0"},      {3, "Q4_1"},    {7, "Q8_0"},
      {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},     {11, "Q3_K_S"}, {12, "Q3_K_M"},
      {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"},   {16, "Q5_K_S"}, {17, "Q5_K_M"},
      {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"},   {21, "Q2_K_S"}, {22, "IQ3_XS"},
      {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"},   {26, "IQ3_S"},  {27, "IQ3_M"},
      {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"},   {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"}};
  for (const auto& [t, name] : names) {
    EXPECT_EQ(llama_file_type_name(t), name) << t;
    EXPECT_EQ(llama_file_type_name(t + 1024), name) << t << " guessed";
  }
  for (int t : {4, 5, 6, 33, 34, 35, -1, 1000, 5000}) EXPECT_EQ(llama_file_type_name(t), "") << t;
}

TEST(GgufTypes, ValueTypeNames) {
  EXPECT_STREQ(gguf_type_name(GgufType::kUint32), "uint32");
  EXPECT_STREQ(gguf_type_name(GgufType::kString), "string");
  EXPECT_STREQ(gguf_type_name(GgufType::kArray), "array");
  EXPECT_STREQ(gguf_type_name(GgufType::kFloat64), "float64");
  EXPECT_STREQ(gguf_type_name(GgufType::kBool), "bool");
}

}  // namespace
}  // namespace attnscope

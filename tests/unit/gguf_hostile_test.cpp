// Hostile and broken GGUF files: each is refused with one line that names the file and what is
// wrong, in well under a second and without allocating what the file merely claims (a count of
// 2^64, a 10^9-element array in a small file). Every prefix of a valid file and every byte of its
// header changed fail cleanly or read; paths that are not regular files are refused by name.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <new>

#include "core/model/gguf/gguf_file.h"
#include "core/util/error.h"
#include "tests/common/gguf_bytes.h"

// Live and peak heap bytes of this process, to hold the reader to memory in proportion to the file.
// The sanitizer build keeps its own allocator (replacing operator new there is not portable); the
// default build runs the measurement.
#if defined(__SANITIZE_ADDRESS__)
#define GGUF_TEST_COUNTS_HEAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GGUF_TEST_COUNTS_HEAP 0
#endif
#endif
#ifndef GGUF_TEST_COUNTS_HEAP
#define GGUF_TEST_COUNTS_HEAP 1
#endif

#if GGUF_TEST_COUNTS_HEAP
namespace {
std::atomic<std::size_t> g_live{0}, g_peak{0};
void* counted_alloc(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  const std::size_t now = g_live += malloc_usable_size(p);
  std::size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}
void counted_free(void* p) {
  if (!p) return;
  g_live -= malloc_usable_size(p);
  std::free(p);
}
}  // namespace
void* operator new(std::size_t n) {
  return counted_alloc(n);
}
void* operator new[](std::size_t n) {
  return counted_alloc(n);
}
void operator delete(void* p) noexcept {
  counted_free(p);
}
void operator delete[](void* p) noexcept {
  counted_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  counted_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  counted_free(p);
}
#endif

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::GgufBytes;
using test::gstr;
using test::le;

const fs::path& temp_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("gguf_hostile_test-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Opens `bytes` as a file; returns the error message ("" when it opened). Checks the message is
// one line naming the file, and that refusing took under a second.
std::string refuse(const std::string& bytes, const std::string& name = "hostile.gguf") {
  const fs::path p = temp_dir() / name;
  GgufBytes::write_bytes(p, bytes);
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    (void)GgufFile::open(p);
  } catch (const ModelError& e) {
    message = e.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0) << name;
  if (!message.empty()) {
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(p.string() + ": ", 0), 0u) << message;
    EXPECT_LT(message.size(), 400u) << message;
  }
  return message;
}

// A small valid file to break: two keys, two tensors.
GgufBytes valid() {
  GgufBytes b;
  b.str("general.architecture", "llama").u32("llama.block_count", 1);
  b.tensor("token_embd.weight", {32, 2}, 8).tensor("output_norm.weight", {32}, 0);
  return b;
}

// The header up to (not including) the tensor count, so a test can write its own counts.
std::string magic_and_version(std::uint32_t v = 3) {
  return "GGUF" + le<std::uint32_t>(v);
}

#define EXPECT_REFUSED(bytes, ...)                                                  \
  do {                                                                              \
    const std::string m_ = refuse(bytes);                                           \
    ASSERT_FALSE(m_.empty()) << "opened";                                           \
    for (const std::string& part : std::initializer_list<std::string>{__VA_ARGS__}) \
      EXPECT_NE(m_.find(part), std::string::npos) << m_;                            \
  } while (0)

TEST(GgufHostile, ValidBaseOpens) {
  EXPECT_EQ(refuse(valid().bytes()), "");
}

TEST(GgufHostile, BadMagic) {
  std::string b = valid().bytes();
  b[3] = 'L';
  EXPECT_REFUSED(b, "not a GGUF file");
  EXPECT_REFUSED(std::string("PK\x03\x04 a zip file, not a model"), "not a GGUF file");
  EXPECT_REFUSED(std::string("GG"), "not a GGUF file");
}

TEST(GgufHostile, Versions) {
  for (std::uint32_t v : {0u, 4u, 0xffffffffu}) {
    GgufBytes b = valid();
    b.version = v;
    EXPECT_REFUSED(b.bytes(), "GGUF version", std::to_string(v).c_str(), "expected 2 or 3");
  }
  GgufBytes b1 = valid();
  b1.version = 1;
  EXPECT_REFUSED(b1.bytes(), "GGUF version 1 is not supported");
  GgufBytes be = valid();
  be.version = 0x03000000u;
  EXPECT_REFUSED(be.bytes(), "big-endian");
}

TEST(GgufHostile, HugeCountsFailBeforeAllocating) {
  for (std::uint64_t n : {1ull << 63, ~0ull, 1000000000ull}) {
    GgufBytes t = valid();
    t.tensor_count = n;
    EXPECT_REFUSED(t.bytes(), "the header declares", std::to_string(n).c_str(), "tensors");
    GgufBytes k = valid();
    k.kv_count = n;
    EXPECT_REFUSED(k.bytes(), "the header declares", std::to_string(n).c_str(), "metadata keys");
  }
  // Counts a small file could hold, but a real model never has.
  std::string many = magic_and_version() + le<std::uint64_t>(0) + le<std::uint64_t>(70000);
  many.resize(many.size() + 70000 * 14, 'x');
  EXPECT_REFUSED(many, "70000 metadata keys", "at most 65536");
}

TEST(GgufHostile, StringLengthsBeyondTheFile) {
  // The first key's length.
  std::string b = magic_and_version() + le<std::uint64_t>(0) + le<std::uint64_t>(1) +
                  le<std::uint64_t>(~0ull) + "key";
  b.resize(64, '\0');
  EXPECT_REFUSED(b, "metadata key 0 of 1", "18446744073709551615 bytes long", "left");
  // A string value.
  GgufBytes v;
  v.raw_kv("general.name", test::kStr, le<std::uint64_t>(1ull << 40) + "tiny");
  EXPECT_REFUSED(v.bytes(), "metadata key 'general.name'", "1099511627776 bytes long");
  // A tensor's name.
  GgufBytes t = valid();
  std::string bytes = t.bytes();
  const std::string name = gstr("token_embd.weight");
  const std::size_t at = bytes.find(name);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 8, le<std::uint64_t>(1ull << 62));
  EXPECT_REFUSED(bytes, "tensor 0 of 2's name", "bytes long");
}

TEST(GgufHostile, ArraysLongerThanTheFile) {
  for (std::uint32_t element : {test::kU8, test::kStr, test::kF64, test::kBool}) {
    GgufBytes b;
    b.raw_kv("tokenizer.ggml.tokens", test::kArr,
             le<std::uint32_t>(element) + le<std::uint64_t>(1000000000ull) + std::string(64, 'a'));
    EXPECT_REFUSED(b.bytes(), "metadata key 'tokenizer.ggml.tokens' declares 1000000000",
                   "elements", "can hold at most");
  }
  // A string element whose length runs past the end.
  GgufBytes s;
  s.raw_kv("tokenizer.ggml.tokens", test::kArr,
           le<std::uint32_t>(test::kStr) + le<std::uint64_t>(2) + gstr("ok") +
               le<std::uint64_t>(1000) + "short");
  EXPECT_REFUSED(s.bytes(), "metadata key 'tokenizer.ggml.tokens' element 1", "1000 bytes long");
}

TEST(GgufHostile, UnknownValueTypesAndNestedArrays) {
  for (std::uint32_t t : {13u, 255u, 0xffffffffu}) {
    GgufBytes b;
    b.raw_kv("general.name", t, "xxxxxxxx");
    EXPECT_REFUSED(b.bytes(), "metadata key 'general.name'", "unknown value type",
                   std::to_string(t).c_str());
    GgufBytes a;
    a.raw_kv("general.tags", test::kArr, le<std::uint32_t>(t) + le<std::uint64_t>(1) + "xxxxxxxx");
    EXPECT_REFUSED(a.bytes(), "metadata key 'general.tags''s elements", "unknown value type");
  }
  GgufBytes nested;
  nested.raw_kv("general.tags", test::kArr,
                le<std::uint32_t>(test::kArr) + le<std::uint64_t>(1) +
                    le<std::uint32_t>(test::kU8) + le<std::uint64_t>(1) + "x");
  EXPECT_REFUSED(nested.bytes(), "metadata key 'general.tags' is an array of arrays");
}

TEST(GgufHostile, KeysEmptyDuplicatedOrOutOfRange) {
  GgufBytes dup = valid();
  dup.u32("llama.block_count", 2);
  EXPECT_REFUSED(dup.bytes(), "metadata key 'llama.block_count' appears twice (keys 1 and 2)");
  GgufBytes empty;
  empty.u32("", 1);
  EXPECT_REFUSED(empty.bytes(), "metadata key 0 of 1 is empty");
  GgufBytes big;
  big.u64("general.size", 1ull << 63);
  EXPECT_REFUSED(big.bytes(), "metadata key 'general.size' is the uint64 9223372036854775808");
  GgufBytes big_array;
  big_array.array<std::uint64_t>("ids", test::kU64, {1, ~0ull});
  EXPECT_REFUSED(big_array.bytes(), "metadata key 'ids' element 1 is the uint64");
  // A key that is not text: refused elsewhere, but its message stays printable text.
  GgufBytes control;
  control.u32(std::string("a\nb\xff", 4), 1).u32(std::string("a\nb\xff", 4), 2);
  EXPECT_REFUSED(control.bytes(), "metadata key 'a?b?' appears twice");
}

TEST(GgufHostile, Alignment) {
  for (std::uint32_t a : {0u, 3u, 48u, 0x80000001u}) {
    GgufBytes b = valid();
    b.u32("general.alignment", a);
    EXPECT_REFUSED(b.bytes(), "general.alignment is", std::to_string(a).c_str(),
                   "expected a power of two");
  }
  GgufBytes typed = valid();
  typed.i32("general.alignment", 32);
  EXPECT_REFUSED(typed.bytes(), "'general.alignment' is int32, expected uint32");
}

TEST(GgufHostile, TensorShapes) {
  for (std::uint64_t n_dims : {0u, 5u, 0xffffffffu}) {
    GgufBytes b = valid();
    std::string bytes = b.bytes();
    const std::string name = gstr("output_norm.weight");
    const std::size_t at = bytes.find(name) + name.size();
    bytes.replace(at, 4, le<std::uint32_t>(static_cast<std::uint32_t>(n_dims)));
    EXPECT_REFUSED(bytes, "tensor 'output_norm.weight' has", std::to_string(n_dims).c_str(),
                   "dimensions, expected 1 to 4");
  }
  GgufBytes zero;
  zero.tensor_data("w", {32, 0}, 0, std::string());
  EXPECT_REFUSED(zero.bytes(), "tensor 'w' has dimension 1 = 0");
  GgufBytes overflow;
  overflow.tensor_data("w", {1ull << 32, 1ull << 32}, 0, std::string(64, 'x'));
  EXPECT_REFUSED(overflow.bytes(), "tensor 'w'", "multiply to more than 2^63");
  GgufBytes overflow4;
  overflow4.tensor_data("w", {1 << 16, 1 << 16, 1 << 16, 1 << 16}, 0, std::string(64, 'x'));
  EXPECT_REFUSED(overflow4.bytes(), "tensor 'w'", "multiply to more than 2^63");
  // Fits in int64 elements, not in bytes (F64: 8 bytes each).
  GgufBytes bytes_overflow;
  bytes_overflow.tensor_data("w", {1ull << 62}, 28, std::string(64, 'x'));
  EXPECT_REFUSED(bytes_overflow.bytes(), "tensor 'w' needs", "more than the whole file");
  GgufBytes block;
  block.tensor_data("w", {100, 2}, 12, std::string(288, 'x'));  // Q4_K rows of 100
  EXPECT_REFUSED(block.bytes(), "tensor 'w' of type Q4_K has rows of 100 values",
                 "not a multiple of its block of 256");
}

TEST(GgufHostile, TensorTypes) {
  for (std::uint32_t t : {43u, 99u, 0xffffffffu}) {
    GgufBytes b;
    b.tensor_data("w", {32}, t, std::string(32, 'x'));
    EXPECT_REFUSED(b.bytes(), "tensor 'w' has the unknown ggml type", std::to_string(t).c_str());
  }
  for (std::uint32_t t : {4u, 5u, 31u, 36u}) {
    GgufBytes b;
    b.tensor_data("w", {32}, t, std::string(32, 'x'));
    EXPECT_REFUSED(b.bytes(), "tensor 'w' has the removed ggml type");
  }
}

TEST(GgufHostile, TensorPlacement) {
  GgufBytes misaligned;
  misaligned.tensor("a", {4}, 0, 16);
  EXPECT_REFUSED(misaligned.bytes(),
                 "tensor 'a''s data offset 16 is not a multiple of the alignment 32");
  GgufBytes overlap;
  overlap.tensor("a", {32}, 0).tensor("b", {16}, 0, 64);  // a is [0, 128)
  EXPECT_REFUSED(overlap.bytes(), "tensors 'a' and 'b' overlap", "[0, 128) and [64, 128)");
  GgufBytes same;
  same.tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 0);
  EXPECT_REFUSED(same.bytes(), "overlap");
  GgufBytes beyond;
  beyond.tensor("a", {8}, 0, 1ull << 40);
  beyond.omit_data = true;
  EXPECT_REFUSED(beyond.bytes(), "tensor 'a''s data [1099511627776,", "beyond the end");
  GgufBytes far;
  far.tensor("a", {8}, 0, ~0ull - 31);
  far.omit_data = true;
  EXPECT_REFUSED(far.bytes(), "tensor 'a''s data", "beyond the end");
  GgufBytes cut = valid();
  std::string bytes = cut.bytes();
  bytes.resize(bytes.size() - 40);  // the last tensor loses its end
  EXPECT_REFUSED(bytes, "tensor 'output_norm.weight''s data", "beyond the end", "truncated file?");
  GgufBytes no_data = valid();
  no_data.omit_data = true;
  std::string header_only = no_data.header();  // not even the padding before the data
  EXPECT_REFUSED(header_only, "truncated");
  GgufBytes dup = valid();
  dup.tensor("token_embd.weight", {32}, 0);
  EXPECT_REFUSED(dup.bytes(), "tensor name 'token_embd.weight' appears twice (tensors 0 and 2)");
}

TEST(GgufHostile, EveryPrefixFailsCleanlyOrReads) {
  GgufBytes b;
  b.str("general.architecture", "llama").u32("llama.block_count", 1).f32("eps", 1e-5f);
  b.strings("tokenizer.ggml.tokens", {"<s>", "a",
                                      "\xE2\x96\x81"
                                      "b"});
  b.array<float>("tokenizer.ggml.scores", test::kF32, {0, -1, -2});
  b.tensor("token_embd.weight", {32, 3}, 2).tensor("output_norm.weight", {8}, 0);
  const std::string full = b.bytes();
  const auto offs = b.offsets();
  const std::uint64_t data_end = b.data_start() + offs[1] + b.tensors()[1].data.size();
  int opened = 0;
  for (std::size_t n = 0; n < full.size(); ++n) {
    const std::string m = refuse(full.substr(0, n), "prefix.gguf");
    if (m.empty()) {
      ++opened;
      EXPECT_GE(n, data_end) << "a prefix without all tensor data opened";
    }
  }
  EXPECT_EQ(opened, static_cast<int>(full.size() - data_end));  // only the last padding may go
  EXPECT_EQ(refuse(full), "");
}

TEST(GgufHostile, EveryHeaderByteChangedFailsCleanlyOrReads) {
  // Runs under the sanitizers too: no read outside the mapping, no overflow, whatever the byte.
  const GgufBytes b = valid();
  const std::string full = b.bytes();
  const std::size_t header = b.header().size();
  for (std::size_t i = 0; i < header; ++i)
    for (const unsigned char v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::string bytes = full;
      bytes[i] = static_cast<char>(v);
      (void)refuse(bytes, "mutated.gguf");
    }
}

TEST(GgufHostile, NotRegularFiles) {
  const fs::path dir = temp_dir() / "folder.gguf";
  fs::create_directories(dir);
  auto message = [](const fs::path& p) {
    try {
      (void)GgufFile::open(p);
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string("(opened)");
  };
  EXPECT_NE(message(dir).find("is a directory"), std::string::npos) << message(dir);
  const fs::path fifo = temp_dir() / "pipe.gguf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::string m = message(fifo);  // must not block waiting for a writer
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_NE(m.find("FIFO"), std::string::npos) << m;
  EXPECT_EQ(refuse("", "empty.gguf"),
            (temp_dir() / "empty.gguf").string() + ": is empty, not a GGUF file");
  EXPECT_NE(message(temp_dir() / "missing.gguf").find("does not exist"), std::string::npos);
  const fs::path loop = temp_dir() / "loop.gguf";
  fs::create_symlink(loop, loop);
  EXPECT_NE(message(loop).find("symlink loop"), std::string::npos) << message(loop);
}

TEST(GgufHostile, UnreadableFile) {
  const fs::path p = temp_dir() / "secret.gguf";
  valid().write(p);
  ASSERT_EQ(::chmod(p.c_str(), 0), 0);
  fs::permissions(temp_dir(), fs::perms::all);  // others may enter the folder
  // As root, drop to nobody in a child so that the permission bits apply.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    std::string m = "(opened)";
    try {
      (void)GgufFile::open(p);
    } catch (const ModelError& e) {
      m = e.what();
    }
    if (::write(pipe_fds[1], m.data(), m.size()) < 0) ::_exit(4);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string m;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) m.append(buf, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(m, p.string() + ": cannot be read (permission denied)");
}

#if GGUF_TEST_COUNTS_HEAP
// Peak heap while opening `bytes` (written to a file first), the mapping not counted.
std::size_t peak_heap_opening(const std::string& bytes, const std::string& name, bool expect_ok) {
  const fs::path p = temp_dir() / name;
  GgufBytes::write_bytes(p, bytes);
  const std::size_t before = g_live.load();
  g_peak = before;
  std::string message;
  {
    try {
      auto f = GgufFile::open(p);
    } catch (const ModelError& e) {
      message = e.what();
    }
  }
  const std::size_t peak = g_peak.load() - before;
  EXPECT_EQ(message.empty(), expect_ok) << message;
  fs::remove(p);
  return peak;
}
#endif

TEST(GgufHostile, MemoryStaysInProportionToTheFile) {
#if !GGUF_TEST_COUNTS_HEAP
  GTEST_SKIP() << "heap counted in the default build only";
#else
  constexpr std::size_t kFile = 10u << 20;
  // Claims: a 10 MB file declaring 2^40-element arrays and 2^60 tensors fails with ~no memory.
  GgufBytes claim;
  claim.raw_kv("a", test::kArr, le<std::uint32_t>(test::kU64) + le<std::uint64_t>(1ull << 40));
  claim.tail = std::string(kFile, '\0');
  EXPECT_LT(peak_heap_opening(claim.bytes(), "claim.gguf", false), 64u << 10);
  // Real content in the worst shapes: empty strings (8 bytes each in the file), 1-byte integers
  // (widened to int64: the 8x that GgufValue's contract costs), minimal tensor descriptions, and
  // as many minimal keys as are accepted.
  GgufBytes strings;
  strings.raw_kv("s", test::kArr,
                 le<std::uint32_t>(test::kStr) + le<std::uint64_t>(kFile / 8) +
                     std::string(kFile / 8 * 8, '\0'));
  const std::size_t s = peak_heap_opening(strings.bytes(), "strings.gguf", true);
  GgufBytes u8s;
  u8s.raw_kv("u", test::kArr,
             le<std::uint32_t>(test::kU8) + le<std::uint64_t>(kFile) + std::string(kFile, '\1'));
  const std::size_t u = peak_heap_opening(u8s.bytes(), "u8s.gguf", true);
  std::string tensors = magic_and_version() + le<std::uint64_t>(kFile / 40) + le<std::uint64_t>(0);
  for (std::size_t i = 0; i < kFile / 40; ++i)  // 8-byte names: 40 bytes per description
    tensors += gstr(std::string(le<std::uint64_t>(i))) + le<std::uint32_t>(1) +
               le<std::uint64_t>(1) + le<std::uint32_t>(24) + le<std::uint64_t>(i * 32);
  tensors.resize((tensors.size() + 31) / 32 * 32 + kFile / 40 * 32, '\0');
  const std::size_t t = peak_heap_opening(tensors, "tensors.gguf", true);
  std::string keys = magic_and_version() + le<std::uint64_t>(0) + le<std::uint64_t>(65536);
  for (std::uint32_t i = 0; i < 65536; ++i)
    keys += gstr(std::string(le<std::uint32_t>(i))) + le<std::uint32_t>(test::kU8) + "x";
  const std::size_t k = peak_heap_opening(keys, "keys.gguf", true);
  std::printf("peak heap: strings %.1fx, uint8 %.1fx, tensors %.1fx of 10 MB; 65536 keys %.1f MB\n",
              double(s) / kFile, double(u) / kFile, double(t) / tensors.size(), k / 1048576.0);
  EXPECT_LT(s, 5 * kFile);
  EXPECT_LT(u, 9 * kFile);
  EXPECT_LT(t, 6 * tensors.size());
  EXPECT_LT(k, 32u << 20);
#endif
}

}  // namespace
}  // namespace attnscope

// Reading traces back (attnscope view FILE): round trips through both readable formats, and
// hostile files, each of which must give one clear error naming the file, the key, what was
// expected and what was found, never a crash or an allocation the file does not pay for.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/trace/json_writer.h"
#include "core/trace/trace_reader.h"
#include "core/trace/trace_writer.h"
#include "tests/common/sample_trace.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

std::string to_json(const AttentionTrace& t) {
  std::ostringstream out;
  write_trace_json(t, out);
  return out.str();
}

std::string to_safetensors(const TraceSlice& slice) {
  std::ostringstream out;
  ExportTarget target{out, nullptr};
  trace_writer("safetensors").write(slice, target);
  return out.str();
}

fs::path write_file(const std::string& name, const std::string& bytes) {
  const fs::path dir = fs::temp_directory_path() / ("trace_reader_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
  return dir / name;
}

void expect_same(const AttentionTrace& a, const AttentionTrace& b) {
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.model.name, b.model.name);
  EXPECT_EQ(a.model.kind, b.model.kind);
  ASSERT_EQ(a.tokens.size(), b.tokens.size());
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    EXPECT_EQ(a.tokens[i].text, b.tokens[i].text);
    EXPECT_EQ(a.tokens[i].id, b.tokens[i].id);
    EXPECT_EQ(a.tokens[i].start, b.tokens[i].start);
    EXPECT_EQ(a.tokens[i].end, b.tokens[i].end);
    EXPECT_EQ(a.tokens[i].special, b.tokens[i].special);
  }
  ASSERT_EQ(a.layers(), b.layers());
  ASSERT_EQ(a.heads(), b.heads());
  for (int l = 0; l < a.layers(); ++l)
    for (int h = 0; h < a.heads(); ++h) EXPECT_EQ(a.attention[l][h], b.attention[l][h]);
}

TEST(TraceReader, JsonRoundTripIsExact) {
  AttentionTrace t = test::sample_trace(3, 2, 6);
  t.tokens[0].special = true;
  t.tokens[0].start = t.tokens[0].end = -1;
  t.truncated_at_byte = 3;
  const AttentionTrace back = read_trace_file(write_file("t.json", to_json(t)));
  expect_same(t, back);
  EXPECT_EQ(back.truncated_at_byte, 3);
  EXPECT_EQ(back.model.layers, 3);
  EXPECT_EQ(back.model.heads, 2);
}

TEST(TraceReader, SafetensorsRoundTripIsExact) {
  const AttentionTrace t = test::sample_trace(2, 3, 5);
  expect_same(t, read_trace_file(write_file("t.safetensors", to_safetensors(whole_trace(t)))));
}

TEST(TraceReader, ASelectionReadsAsThatManyLayersAndHeads) {
  const AttentionTrace t = test::sample_trace(4, 3, 4);
  std::ostringstream out;
  write_trace_json(select_trace(t, "1,3", "2"), out);
  const AttentionTrace back = read_trace_file(write_file("sel.json", out.str()));
  EXPECT_EQ(back.model.layers, 2);
  EXPECT_EQ(back.model.heads, 1);
  EXPECT_EQ(back.attention[1][0], t.attention[3][2]);
  const AttentionTrace back2 =
      read_trace_file(write_file("sel.safetensors", to_safetensors(select_trace(t, "0", "1"))));
  EXPECT_EQ(back2.attention[0][0], t.attention[0][1]);
}

// The message of the TraceError that reading `bytes` throws ("" if none).
std::string error_of(const std::string& bytes, const std::string& name = "bad.json") {
  try {
    read_trace_file(write_file(name, bytes));
  } catch (const TraceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("WRONG EXCEPTION TYPE: ") + e.what();
  }
  return "";
}

void expect_error(const std::string& bytes, std::initializer_list<const char*> parts,
                  const std::string& name = "bad.json") {
  const std::string message = error_of(bytes, name);
  ASSERT_FALSE(message.empty()) << "no error for: " << bytes.substr(0, 200);
  EXPECT_NE(message.find(name), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const char* p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << p << " in: " << message;
}

// A valid 2-token document with `attention` and `tokens` replaced as given.
std::string doc(
    const std::string& attention,
    const std::string& tokens = R"([{"id":1,"text":"a","start":0,"end":1,"special":false},
                                     {"id":2,"text":"b","start":2,"end":3,"special":false}])",
    const std::string& model = R"({"name":"m","kind":"gpt2","layers":1,"heads":1})") {
  return R"({"format":"attnscope-trace/1","model":)" + model + R"(,"backend":"cpu","text":"a b",)" +
         R"("tokens":)" + tokens + R"(,"attention":)" + attention + "}";
}

TEST(HostileTrace, AValidMinimalDocumentReads) {
  EXPECT_EQ(error_of(doc("[[[[1,0],[0.5,0.5]]]]")), "");
}

TEST(HostileTrace, NotAnObject) {
  expect_error("[1,2,3]", {"expected a JSON object", "found an array"});
  expect_error("\"attnscope\"", {"expected a JSON object", "found a string"});
  expect_error("{\"format\": ", {"not valid JSON"});
  expect_error("", {"empty"});
  expect_error("garbage that is not JSON nor safetensors", {"safetensors"}, "bad.bin");
}

TEST(HostileTrace, WrongFormatOrMissingKeys) {
  std::string d = doc("[[[[1,0],[0,1]]]]");
  expect_error(std::string(d).replace(d.find("attnscope-trace/1"), 17, "other/9"),
               {"'format'", "expected \"attnscope-trace/1\"", "other/9"});
  expect_error(R"({"format":"attnscope-trace/1"})", {"'model'", "expected an object"});
  expect_error(doc("[[[[1,0],[0,1]]]]", "{}"), {"'tokens'", "expected an array"});
  expect_error(doc("[[[[1,0],[0,1]]]]", R"([{"id":1},{"text":"b"}])"),
               {"'tokens[0].text'", "expected a string"});
  expect_error(doc("[[[[1,0],[0,1]]]]", R"([{"text":"a","start":0,"end":99},{"text":"b"}])"),
               {"'tokens[0]'", "inside the text"});
}

TEST(HostileTrace, WrongShapes) {
  expect_error(doc("[[[[1,0],[0.5]]]]"), {"'attention[0][0][1]'", "expected 2 numbers", "found 1"});
  expect_error(doc("[[[[1,0]]]]"), {"'attention'", "2x2", "found 1x2"});
  expect_error(doc("[[[1,0],[0,1]]]"),
               {"'attention[0][0][0]'", "4 nested arrays", "where an array belongs"});
  expect_error(doc("[[[[[1],0],[0,1]]]]"), {"fifth nested array"});
  expect_error(doc("[[[[1,0],[0,1]]],[[[1,0],[0,1]]]]"), {"'model'", "1 layers", "holds 2"});
  expect_error(doc("[[[[1,0],[0,1]],[[1,0],[0,1]]]]"), {"'model'", "1 heads", "x 2"});
  expect_error(doc("[[[[1,0],[0,1]]],[]]"), {"'attention[1]'", "expected 1 heads", "found 0"});
  expect_error(doc("[]"), {"'attention'", "found an empty array"});
  expect_error(doc("{\"a\":1}"), {"'attention'", "found an object"});
  expect_error(doc("[[[[1,\"0\"],[0,1]]]]"), {"'attention[0][0][0][1]'", "found a string"});
}

TEST(HostileTrace, TokenCountsThatDisagree) {
  expect_error(doc("[[[[1,0,0],[0,1,0],[0,0,1]]]]"),
               {"'attention'", "2x2", "'tokens' has 2", "found 3x3"});
}

TEST(HostileTrace, BadWeights) {
  expect_error(doc("[[[[1,0],[0.6,0.6]]]]"), {"'attention[0][0][1]'", "sums to 1", "1.2"});
  expect_error(doc("[[[[1,0],[null,1]]]]"), {"'attention[0][0][1][0]'", "null"});
  expect_error(doc("[[[[1,0],[1e999,0]]]]"), {"'attention[0][0][1][0]'", "overflow"});
  // Python's json.dump writes NaN as a bare word, which is not JSON.
  expect_error(doc("[[[[1,0],[NaN,1]]]]"), {"not valid JSON", "'attention[0][0][1][0]'"});
  expect_error(doc("[[[[2,-1],[0,1]]]]"), {"'attention[0][0][0][0]'", "[0, 1]", "found 2"});
  // Within the tolerance (1e-3) is accepted, a fully masked (all-zero) row too.
  EXPECT_EQ(error_of(doc("[[[[0.9995,0],[0,0]]]]")), "");
}

TEST(HostileTrace, DuplicateKeysAndDeepNesting) {
  std::string d = doc("[[[[1,0],[0,1]]]]");
  expect_error(d.substr(0, d.size() - 1) + R"(,"attention":[[[[1,0],[0,1]]]]})",
               {"'attention' appears twice"});
  std::string deep = R"({"junk":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  expect_error(deep, {"'junk'", "nested deeper"});
}

TEST(HostileTrace, HugeDeclaredSizesAllocateNothing) {
  // The model claims a billion layers: nothing is allocated from that number, it only disagrees.
  expect_error(doc("[[[[1,0],[0,1]]]]", R"([{"text":"a"},{"text":"b"}])",
                   R"({"name":"m","kind":"gpt2","layers":1000000000,"heads":1})"),
               {"'model'", "1000000000 layers"});
  // A safetensors header that declares a [65536, 65536, 65536, 65536] tensor in a tiny file.
  const AttentionTrace t = test::sample_trace(1, 1, 2);
  std::string st = to_safetensors(whole_trace(t));
  const size_t shape = st.find("[1,1,2,2]");
  ASSERT_NE(shape, std::string::npos);
  std::string huge = st;
  huge.replace(shape, 9, "[65536,65536,65536,65536]");
  // Keep the header length field in step with the longer header.
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(huge[i]);
  len += 16;
  for (int i = 0; i < 8; ++i) huge[i] = static_cast<char>(len >> (8 * i));
  expect_error(huge, {"attention"}, "huge.safetensors");
  // A header length beyond the end of the file.
  std::string cut = st.substr(0, 8) + "{}";
  expect_error(cut, {"header length"}, "cut.safetensors");
}

TEST(HostileTrace, SafetensorsWithWrongRankOrMetadata) {
  const AttentionTrace t = test::sample_trace(1, 1, 2);
  std::string st = to_safetensors(whole_trace(t));
  std::string rank = st;
  rank.replace(rank.find("[1,1,2,2]"), 9, "[1,1,1,4]");  // same byte count, wrong matrix shape
  expect_error(rank, {"'attention'", "2x2", "found 1x4"}, "rank.safetensors");
  std::string meta = st;
  const size_t fmt = meta.find("attnscope-trace/1");
  meta.replace(fmt, 17, "attnscope-trace/X");
  expect_error(meta, {"'format'", "attnscope-trace/X"}, "meta.safetensors");
}

// JSON cannot hold a NaN, but a safetensors file can: raw float bytes, checked like JSON numbers.
TEST(HostileTrace, SafetensorsWithNaNOrUnnormalisedRows) {
  const AttentionTrace t = test::sample_trace(1, 2, 3);
  const std::string st = to_safetensors(whole_trace(t));
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | static_cast<unsigned char>(st[i]);
  // The float at attention[0][h][i][j] (row-major [layers, heads, n, n]).
  auto with_value = [&](int h, int i, int j, float v) {
    std::string bytes = st;
    std::memcpy(&bytes[8 + header + ((h * 3 + i) * 3 + j) * sizeof(float)], &v, sizeof v);
    return bytes;
  };
  expect_error(with_value(1, 2, 0, std::nanf("")), {"'attention[0][1][2][0]'", "found NaN"},
               "nan.safetensors");
  expect_error(with_value(0, 1, 1, INFINITY), {"'attention[0][0][1][1]'", "found infinity"},
               "inf.safetensors");
  expect_error(with_value(0, 0, 0, -0.25f), {"'attention[0][0][0][0]'", "[0, 1]"},
               "negative.safetensors");
  const float first = t.attention[0][1](1, 0);
  expect_error(with_value(1, 1, 0, first > 0.5f ? first - 0.3f : first + 0.3f),
               {"'attention[0][1][1]'", "sums to 1"}, "sum.safetensors");
}

TEST(HostileTrace, FoldersAndMissingFiles) {
  try {
    read_trace_file("/no/such/trace.json");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/trace.json"), std::string::npos);
  }
  EXPECT_THROW(read_trace_file(fs::temp_directory_path()), TraceError);
}

}  // namespace
}  // namespace attnscope

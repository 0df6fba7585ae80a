// Every exporter of core/trace (export --format): the numbers read back equal the trace's, with a
// reader that shares no code with the writer (nlohmann's DOM for JSON, numpy for npy, a CSV parser
// here, the safetensors layout parsed by hand).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/trace/json_writer.h"
#include "core/trace/trace_writer.h"
#include "core/util/error.h"
#include "tests/common/sample_trace.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

// The JSON document exactly as the first (in-memory) writer built it: the byte contract.
nlohmann::ordered_json reference_document(const AttentionTrace& trace) {
  nlohmann::ordered_json model = {{"name", trace.model.name},
                                  {"kind", trace.model.kind},
                                  {"layers", trace.layers()},
                                  {"heads", trace.heads()}};
  if (!trace.model.options.empty()) model["options"] = trace.model.options;
  nlohmann::ordered_json attention = nlohmann::ordered_json::array();
  for (const auto& layer : trace.attention) {
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const Matrix& w : layer) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (Eigen::Index i = 0; i < w.rows(); ++i) {
        nlohmann::ordered_json row = nlohmann::ordered_json::array();
        for (Eigen::Index j = 0; j < w.cols(); ++j) row.push_back(w(i, j));
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    attention.push_back(std::move(heads));
  }
  nlohmann::ordered_json doc = {{"format", "attnscope-trace/1"},
                                {"model", model},
                                {"backend", trace.backend},
                                {"text", trace.text},
                                {"tokens", tokens_to_json(trace.tokens, true)},
                                {"attention", std::move(attention)}};
  if (trace.truncated_at_byte >= 0) doc["truncated_at_byte"] = trace.truncated_at_byte;
  if (!trace.predictions.empty()) {
    nlohmann::ordered_json preds = nlohmann::ordered_json::array();
    for (const Prediction& p : trace.predictions)
      preds.push_back({{"id", p.id}, {"text", p.text}, {"probability", p.probability}});
    doc["predictions"] = preds;
  }
  return doc;
}

struct Written {
  std::string main;
  std::map<std::string, std::string> sidecars;
};

Written write(const std::string& format, const TraceSlice& slice) {
  std::ostringstream out;
  Written w;
  ExportTarget target{out,
                      [&](const std::string& suffix, const std::function<void(std::ostream&)>& fn) {
                        std::ostringstream side;
                        fn(side);
                        w.sidecars[suffix] = side.str();
                      }};
  const TraceWriter& writer = trace_writer(format);
  if (writer.check) writer.check(slice);
  writer.write(slice, target);
  w.main = out.str();
  return w;
}

TEST(JsonWriter, BytesEqualTheInMemoryDocument) {
  AttentionTrace t = test::sample_trace(2, 3, 7);
  t.model.options = {{"beta", 5.0}, {"mask_self", true}};
  t.truncated_at_byte = 4;
  t.predictions = {{42, " bank", 0.25f}, {7, "\xff bad utf8", 0.125f}};
  t.tokens[2].unknown = true;
  t.tokens[3].text = "bad \xC3 utf8";  // replaced, never thrown
  // Numbers nlohmann prints in each of its notations: whole, tiny (exponent), zero, shortest.
  t.attention[0][0](0, 0) = 1.0f;
  t.attention[0][0](0, 1) = 1e-12f;
  t.attention[0][0](0, 2) = 0.0f;
  t.attention[0][0](0, 3) = 0.1f;
  const std::string expected =
      reference_document(t).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
      "\n";
  EXPECT_EQ(write("json", whole_trace(t)).main, expected);
}

TEST(JsonWriter, ASelectionWritesThoseMatricesAndSaysWhich) {
  const AttentionTrace t = test::sample_trace(4, 3, 5);
  const nlohmann::json doc =
      nlohmann::json::parse(write("json", select_trace(t, "0,2-3", "1")).main);
  EXPECT_EQ(doc["model"]["layers"], 4);  // the model's, not the selection's
  EXPECT_EQ(doc["selection"]["layers"], nlohmann::json({0, 2, 3}));
  EXPECT_EQ(doc["selection"]["heads"], nlohmann::json({1}));
  ASSERT_EQ(doc["attention"].size(), 3u);
  const int layers[] = {0, 2, 3};
  for (int l = 0; l < 3; ++l) {
    ASSERT_EQ(doc["attention"][l].size(), 1u);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j)
        EXPECT_EQ(doc["attention"][l][0][i][j].get<float>(), t.attention[layers[l]][1](i, j));
  }
}

TEST(TraceSlice, SelectionsParseAndBadOnesAreUsageErrors) {
  EXPECT_EQ(parse_index_list("", 3, "--layers"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_index_list("2,0-1,1", 4, "--layers"), (std::vector<int>{2, 0, 1}));
  for (const char* bad : {"4", "-1", "a", "1-", "3-1", "1,,2", "1.5"})
    EXPECT_THROW(parse_index_list(bad, 4, "--layers"), UsageError) << bad;
  try {
    parse_index_list("7", 4, "--heads");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--heads: 7 is out of range"), std::string::npos)
        << e.what();
  }
}

// Minimal RFC 4180 reader: quoted fields with doubled quotes, CRLF records.
std::vector<std::vector<std::string>> parse_csv(const std::string& s) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
    } else if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(CsvWriter, OneMatrixWithQuotedLabelsReadsBackExactly) {
  const AttentionTrace t = test::sample_trace(3, 2, 8);
  const auto rows = parse_csv(write("csv", select_trace(t, "2", "1")).main);
  ASSERT_EQ(rows.size(), 9u);
  ASSERT_EQ(rows[0].size(), 9u);
  // Headers are the tokens' labels (" sat" is shown "sat"), uncut.
  for (int j = 0; j < 8; ++j) EXPECT_EQ(rows[0][j + 1], token_label(t, j, 1000));
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(rows[i + 1].size(), 9u);
    EXPECT_EQ(rows[i + 1][0], token_label(t, i, 1000));
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(std::strtof(rows[i + 1][j + 1].c_str(), nullptr), t.attention[2][1](i, j));
  }
}

TEST(CsvWriter, MoreThanOneMatrixIsAClearUsageError) {
  const AttentionTrace t = test::sample_trace(3, 2, 4);
  try {
    write("csv", select_trace(t, "", "1"));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("one layer and one head"), std::string::npos);
  }
}

TEST(SafetensorsWriter, LayoutTensorAndMetadataReadBack) {
  const AttentionTrace t = test::sample_trace(2, 3, 6);
  const std::string file = write("safetensors", select_trace(t, "1", "0,2")).main;
  ASSERT_GE(file.size(), 8u);
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(file[i]);
  ASSERT_EQ((8 + len) % 8, 0u);
  const nlohmann::json header = nlohmann::json::parse(file.substr(8, len));
  const auto& meta = header["__metadata__"];
  for (auto it = meta.begin(); it != meta.end(); ++it) EXPECT_TRUE(it->is_string()) << it.key();
  EXPECT_EQ(meta["format"], "attnscope-trace/1");
  EXPECT_EQ(meta["text"], t.text);
  EXPECT_EQ(nlohmann::json::parse(meta["tokens"].get<std::string>())[4]["text"], t.tokens[4].text);
  EXPECT_EQ(nlohmann::json::parse(meta["model"].get<std::string>())["heads"], 3);
  const auto& att = header["attention"];
  EXPECT_EQ(att["dtype"], "F32");
  EXPECT_EQ(att["shape"], nlohmann::json({1, 2, 6, 6}));
  const std::uint64_t begin = att["data_offsets"][0], end = att["data_offsets"][1];
  ASSERT_EQ(end - begin, 2u * 36 * 4);
  ASSERT_EQ(file.size(), 8 + len + end);
  const int heads[] = {0, 2};
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 36; ++i) {
      float v;
      std::memcpy(&v, file.data() + 8 + len + begin + (h * 36 + i) * 4, 4);
      EXPECT_EQ(v, t.attention[1][heads[h]](i / 6, i % 6));
    }
}

bool have_numpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

TEST(NpyWriter, NumpyLoadsTheArrayAndTheSidecarHasTheTokens) {
  if (!have_numpy()) GTEST_SKIP() << "python3-numpy is not installed";
  const AttentionTrace t = test::sample_trace(3, 2, 5);
  const Written w = write("npy", select_trace(t, "0,2", ""));
  const fs::path dir = fs::temp_directory_path() / ("npy_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "att.npy", std::ios::binary) << w.main;
  ASSERT_EQ(w.sidecars.count(".tokens.json"), 1u);
  const nlohmann::json side = nlohmann::json::parse(w.sidecars.at(".tokens.json"));
  EXPECT_EQ(side["shape"], nlohmann::json({2, 2, 5, 5}));
  EXPECT_EQ(side["tokens"][3]["text"], t.tokens[3].text);
  EXPECT_EQ(side["selection"]["layers"], nlohmann::json({0, 2}));
  // numpy prints every value with repr (shortest round trip of the float32).
  const std::string cmd = "/usr/bin/python3 -c \"import numpy as np; a = np.load('" +
                          (dir / "att.npy").string() +
                          "'); print(a.dtype, a.shape); print(' '.join(repr(float(x)) for x in "
                          "a.ravel()))\"";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  std::istringstream in(out);
  std::string dtype, shape;
  std::getline(in, dtype, ' ');
  std::getline(in, shape);
  EXPECT_EQ(dtype, "float32");
  EXPECT_EQ(shape, "(2, 2, 5, 5)");
  const int layers[] = {0, 2};
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 25; ++i) {
        double v = 0;
        ASSERT_TRUE(in >> v);
        EXPECT_EQ(static_cast<float>(v), t.attention[layers[l]][h](i / 5, i % 5));
      }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnscope

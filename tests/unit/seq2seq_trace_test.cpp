// Encoder–decoder traces in files (issue 24): the "decoder" object of the JSON
// trace and the decoder tensors of the safetensors trace round trip exactly;
// the fake encoder–decoder's matrices (tests/common/fake_seq2seq_model.h, a
// softmax of fixed scores recomputed here) are what the JSON holds; hostile
// decoder sections are refused with a message naming the key path; a trace
// without a decoder reads as before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/trace/json_writer.h"
#include "core/trace/trace_reader.h"
#include "core/trace/trace_writer.h"
#include "tests/common/fake_seq2seq_model.h"
#include "tests/common/sample_trace.h"
#include "tests/common/shell.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::FakeSeq2SeqModel;

AttentionTrace translation(const std::optional<std::string>& target = std::nullopt) {
  const std::unique_ptr<Backend> cpu = make_cpu_backend();
  return FakeSeq2SeqModel().run_translation("the cat sat on the mat", target, *cpu);
}

std::string write(const std::string& format, const TraceSlice& slice) {
  std::ostringstream out;
  ExportTarget target{out, nullptr};
  trace_writer(format).write(slice, target);
  return out.str();
}

fs::path write_file(const std::string& name, const std::string& bytes) {
  const fs::path dir = fs::temp_directory_path() / ("seq2seq_trace_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
  return dir / name;
}

AttentionTrace read_json_text(const std::string& text) {
  std::istringstream in(text);
  return read_trace_json(in, "t.json");
}

std::string error_of(const std::string& text) {
  try {
    read_json_text(text);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const nlohmann::json& doc, const std::vector<std::string>& parts) {
  const std::string message = error_of(doc.dump());
  ASSERT_FALSE(message.empty()) << "accepted; expected: " << parts[0];
  for (const std::string& p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

void expect_same_decoder(const DecoderTrace& a, const DecoderTrace& b) {
  ASSERT_EQ(a.tokens.size(), b.tokens.size());
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    EXPECT_EQ(a.tokens[i].text, b.tokens[i].text);
    EXPECT_EQ(a.tokens[i].id, b.tokens[i].id);
    EXPECT_EQ(a.tokens[i].special, b.tokens[i].special);
    EXPECT_EQ(a.tokens[i].generated, b.tokens[i].generated);
    EXPECT_EQ(a.tokens[i].start, b.tokens[i].start);
  }
  ASSERT_EQ(a.layers(), b.layers());
  ASSERT_EQ(a.heads(), b.heads());
  for (int l = 0; l < a.layers(); ++l)
    for (int h = 0; h < a.heads(); ++h) {
      EXPECT_EQ(a.attention[l][h], b.attention[l][h]) << l << "." << h;
      EXPECT_EQ(a.cross_attention[l][h], b.cross_attention[l][h]) << l << "." << h;
    }
  ASSERT_EQ(a.predictions.size(), b.predictions.size());
  for (size_t i = 0; i < a.predictions.size(); ++i) {
    ASSERT_EQ(a.predictions[i].size(), b.predictions[i].size());
    for (size_t k = 0; k < a.predictions[i].size(); ++k) {
      EXPECT_EQ(a.predictions[i][k].id, b.predictions[i][k].id);
      EXPECT_EQ(a.predictions[i][k].text, b.predictions[i][k].text);
      EXPECT_EQ(a.predictions[i][k].probability, b.predictions[i][k].probability);
    }
  }
}

void expect_same(const AttentionTrace& a, const AttentionTrace& b) {
  EXPECT_EQ(a.text, b.text);
  ASSERT_EQ(a.tokens.size(), b.tokens.size());
  ASSERT_EQ(a.layers(), b.layers());
  for (int l = 0; l < a.layers(); ++l)
    for (int h = 0; h < a.heads(); ++h) EXPECT_EQ(a.attention[l][h], b.attention[l][h]);
  EXPECT_EQ(b.model.decoder_layers, a.decoder->layers());
  EXPECT_EQ(b.model.decoder_heads, a.decoder->heads());
  EXPECT_TRUE(b.model.capabilities.cross_attention);
  ASSERT_TRUE(b.decoder);
  expect_same_decoder(*a.decoder, *b.decoder);
}

TEST(Seq2SeqTrace, TheFakeModelIsASoftmaxOfItsScores) {
  // The double itself, against the formula recomputed here in double precision.
  const AttentionTrace t = translation();
  const DecoderTrace& d = *t.decoder;
  ASSERT_EQ(d.tokens.size(), 8u);  // <pad> le chat assis sur le tapis </s>
  EXPECT_EQ(d.tokens[2].text, " chat");
  EXPECT_TRUE(d.tokens[2].generated);
  for (int i = 0; i < d.targets(); ++i) {
    double denom = 0.0;
    for (size_t j = 0; j < t.tokens.size(); ++j)
      denom += std::exp(
          FakeSeq2SeqModel::score(d.tokens[i], t.tokens[j], i, static_cast<int>(j), 1, 2, true));
    for (size_t j = 0; j < t.tokens.size(); ++j)
      EXPECT_NEAR(d.cross_attention[1][2](i, static_cast<Eigen::Index>(j)),
                  std::exp(FakeSeq2SeqModel::score(d.tokens[i], t.tokens[j], i, static_cast<int>(j),
                                                   1, 2, true)) /
                      denom,
                  1e-6);
  }
  EXPECT_EQ(d.attention[0][0](1, 2), 0.0f);  // causal
}

TEST(Seq2SeqTrace, JsonHoldsTheDecoderAfterTheEncodersKeys) {
  const AttentionTrace t = translation(std::string("le chat est assis"));
  const std::string text = write("json", whole_trace(t));
  const auto doc = nlohmann::ordered_json::parse(text);
  // The decoder comes last; the encoder's keys are those of every trace.
  EXPECT_EQ(std::prev(doc.end()).key(), "decoder");
  EXPECT_LT(text.find("\"attention\""), text.find("\"decoder\""));
  EXPECT_EQ(doc["model"]["layers"], FakeSeq2SeqModel::kLayers);
  EXPECT_EQ(doc["model"]["decoder_layers"], FakeSeq2SeqModel::kDecoderLayers);
  EXPECT_EQ(doc["model"]["decoder_heads"], FakeSeq2SeqModel::kDecoderHeads);
  const auto& dec = doc["decoder"];
  ASSERT_EQ(dec["tokens"].size(), 6u);  // <pad> le chat est assis </s>
  EXPECT_EQ(dec["tokens"][0]["text"], "<pad>");
  EXPECT_EQ(dec["tokens"][2]["start"], 3);  // byte offsets into the target
  ASSERT_EQ(dec["cross_attention"].size(), 3u);
  ASSERT_EQ(dec["cross_attention"][2][3].size(), 6u);
  ASSERT_EQ(dec["cross_attention"][2][3][4].size(), t.tokens.size());
  for (size_t j = 0; j < t.tokens.size(); ++j)
    EXPECT_EQ(dec["cross_attention"][2][3][4][j].get<float>(),
              t.decoder->cross_attention[2][3](4, static_cast<Eigen::Index>(j)));
  EXPECT_EQ(dec["attention"][1][0][2][3].get<float>(), 0.0f);
  ASSERT_EQ(dec["predictions"].size(), 5u);
  EXPECT_EQ(dec["predictions"][1][0]["text"], " chat");
}

TEST(Seq2SeqTrace, JsonRoundTripIsExact) {
  const AttentionTrace t = translation();
  expect_same(t, read_trace_file(write_file("t.json", write("json", whole_trace(t)))));
}

TEST(Seq2SeqTrace, SafetensorsRoundTripIsExact) {
  const AttentionTrace t = translation(std::string("le chat"));
  expect_same(t,
              read_trace_file(write_file("t.safetensors", write("safetensors", whole_trace(t)))));
}

TEST(Seq2SeqTrace, ASelectionAppliesToBothSides) {
  const AttentionTrace t = translation();
  for (const std::string format : {"json", "safetensors"}) {
    const AttentionTrace back =
        read_trace_file(write_file("sel." + format, write(format, select_trace(t, "1", "1"))));
    ASSERT_EQ(back.layers(), 1) << format;
    ASSERT_EQ(back.decoder->layers(), 1) << format;
    ASSERT_EQ(back.decoder->heads(), 1) << format;
    EXPECT_EQ(back.decoder->cross_attention[0][0], t.decoder->cross_attention[1][1]) << format;
    EXPECT_EQ(back.decoder->attention[0][0], t.decoder->attention[1][1]) << format;
    EXPECT_EQ(back.attention[0][0], t.attention[1][1]) << format;
  }
  // Only --heads given: the decoder keeps all of its layers (3, the encoder has
  // 2).
  const AttentionTrace heads = read_json_text(write("json", select_trace(t, "", "0")));
  EXPECT_EQ(heads.layers(), 2);
  EXPECT_EQ(heads.decoder->layers(), 3);
  // An index the decoder lacks is refused, naming the decoder.
  AttentionTrace shallow = t;
  auto d = std::make_shared<DecoderTrace>(*t.decoder);
  d->attention.resize(1);
  d->cross_attention.resize(1);
  shallow.decoder = d;
  try {
    select_trace(shallow, "1", "");
    FAIL() << "accepted layer 1 of a one-layer decoder";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("decoder"), std::string::npos) << e.what();
  }
}

TEST(Seq2SeqTrace, NpyWritesTheDecoderBesideCsvRefuses) {
  const AttentionTrace t = translation();
  std::map<std::string, std::string> sidecars;
  std::ostringstream out;
  ExportTarget target{out,
                      [&](const std::string& suffix, const std::function<void(std::ostream&)>& fn) {
                        std::ostringstream s;
                        fn(s);
                        sidecars[suffix] = s.str();
                      }};
  trace_writer("npy").write(whole_trace(t), target);
  ASSERT_TRUE(sidecars.count(".cross_attention.npy"));
  const std::string& cross = sidecars[".cross_attention.npy"];
  EXPECT_NE(cross.find("'shape': (3, 4, 8, 7)"), std::string::npos);
  // The last float is cross_attention[2][3][7][6].
  float last = 0;
  std::memcpy(&last, cross.data() + cross.size() - 4, 4);
  EXPECT_EQ(last, t.decoder->cross_attention[2][3](7, 6));
  EXPECT_NE(sidecars[".decoder_attention.npy"].find("'shape': (3, 4, 8, 8)"), std::string::npos);
  const auto tokens = nlohmann::json::parse(sidecars[".tokens.json"]);
  EXPECT_EQ(tokens["decoder"]["tokens"].size(), 8u);
  try {
    trace_writer("csv").check(select_trace(t, "0", "0"));
    FAIL() << "csv accepted an encoder-decoder trace";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cross-attention"), std::string::npos);
  }
}

TEST(Seq2SeqTrace, ATraceWithoutADecoderReadsAsBefore) {
  const AttentionTrace t = test::sample_trace(2, 2, 4);
  const std::string text = write("json", whole_trace(t));
  EXPECT_EQ(text.find("decoder"), std::string::npos);
  const AttentionTrace back = read_json_text(text);
  EXPECT_FALSE(back.decoder);
  EXPECT_FALSE(back.model.capabilities.cross_attention);
  EXPECT_EQ(back.model.decoder_layers, 0);
}

// tools/reference/attnscope_trace.py's read_trace() reads both formats' decoder (numpy).
TEST(Seq2SeqTrace, ThePythonReaderReadsTheDecoder) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-numpy is not installed";
  const AttentionTrace t = translation();
  for (const std::string format : {"json", "safetensors"}) {
    const fs::path file = write_file("py." + format, write(format, whole_trace(t)));
    const std::string cmd =
        "cd '" ATTNSCOPE_SOURCE_DIR
        "/tools/reference' && /usr/bin/python3 -c 'import json, "
        "attnscope_trace as a; t = a.read_trace(\"" +
        file.string() +
        "\"); d = t[\"decoder\"]; print(json.dumps({\"self\": list(d[\"attention\"].shape), "
        "\"cross\": [float(x) for x in d[\"cross_attention\"][2, 3, 4]], \"t\": "
        "[k[\"text\"] for k in d[\"tokens\"]]}))'";
    const test::ShellRun run = test::run_shell(cmd);
    ASSERT_EQ(run.exit_code, 0) << format << ": " << run.output;
    const auto got = nlohmann::json::parse(run.output);
    EXPECT_EQ(got["self"], nlohmann::json({3, 4, 8, 8})) << format;
    ASSERT_EQ(got["cross"].size(), t.tokens.size()) << format;
    for (size_t j = 0; j < t.tokens.size(); ++j)
      EXPECT_EQ(got["cross"][j].get<float>(),
                t.decoder->cross_attention[2][3](4, static_cast<Eigen::Index>(j)))
          << format;
    EXPECT_EQ(got["t"][2], " chat") << format;
  }
}

nlohmann::json valid_doc() {
  return nlohmann::json::parse(write("json", whole_trace(translation())));
}

TEST(Seq2SeqHostile, WrongShapes) {
  nlohmann::json d = valid_doc();
  d["decoder"]["cross_attention"][0][0][1].erase(0);
  expect_error(d, {"'decoder.cross_attention[0][0][1]'", "expected 7 numbers", "found 6"});
  d = valid_doc();
  for (auto& layer : d["decoder"]["cross_attention"])
    for (auto& head : layer)
      for (auto& row : head) row.push_back(0.0);
  expect_error(d, {"'decoder.cross_attention[0][0]'", "8x7", "found 8x8", "encoder"});
  d = valid_doc();
  d["decoder"]["tokens"].erase(3);  // 7 decoder tokens, matrices for 8
  expect_error(d, {"'decoder.attention[0][0]'", "7x7", "found 8x8"});
  d = valid_doc();
  d["decoder"]["attention"].erase(2);
  expect_error(d, {"'decoder.attention'", "3 layers", "found 2"});
  d = valid_doc();
  d["decoder"]["cross_attention"][1].erase(0);
  expect_error(d, {"'decoder.cross_attention[1]'", "expected 4 heads"});
  d = valid_doc();
  d["decoder"]["attention"] = nlohmann::json::array();
  for (int l = 0; l < 1025; ++l) d["decoder"]["attention"].push_back(nlohmann::json::array());
  expect_error(d, {"'decoder.attention'", "1025 layers", "more than a trace may hold"});
}

TEST(Seq2SeqHostile, NonCausalSelfAttention) {
  nlohmann::json d = valid_doc();
  auto& row = d["decoder"]["attention"][1][0][1];
  row[0] = row[0].get<double>() - 0.1;
  row[2] = 0.1;
  expect_error(d, {"'decoder.attention[1][0][1][2]'", "causal", "0.1"});
}

TEST(Seq2SeqHostile, RowsNotSummingToOneOrBadWeights) {
  nlohmann::json d = valid_doc();
  d["decoder"]["cross_attention"][1][0][3][0] =
      d["decoder"]["cross_attention"][1][0][3][0].get<double>() + 0.5;
  expect_error(d, {"'decoder.cross_attention[1][0][3]'", "sums to 1"});
  d = valid_doc();
  d["decoder"]["cross_attention"][0][0][0][0] = nullptr;
  expect_error(d, {"'decoder.cross_attention[0][0][0][0]'", "null"});
  d = valid_doc();
  d["decoder"]["attention"][0][1][2][0] = -0.5;
  expect_error(d, {"'decoder.attention[0][1][2][0]'", "[0, 1]"});
}

TEST(Seq2SeqHostile, MissingKeys) {
  nlohmann::json d = valid_doc();
  d["decoder"].erase("cross_attention");
  expect_error(d, {"'decoder.cross_attention'", "found nothing"});
  d = valid_doc();
  d["decoder"].erase("tokens");
  expect_error(d, {"'decoder.tokens'", "expected an array"});
  d = valid_doc();
  d["model"].erase("decoder_heads");
  expect_error(d, {"'model'", "decoder_heads"});
  d = valid_doc();
  d["decoder"]["tokens"][1].erase("text");
  expect_error(d, {"'decoder.tokens[1].text'", "expected a string"});
  d = valid_doc();
  d["decoder"] = nlohmann::json::array({1, 2});
  expect_error(d, {"'decoder'", "expected an object"});
  d = valid_doc();
  d["decoder"]["predictions"][0][0]["probability"] = 7;
  expect_error(d, {"'decoder.predictions[0][0].probability'", "[0, 1]"});
}

TEST(Seq2SeqHostile, ADecoderWithoutEncoderTokens) {
  nlohmann::json d = valid_doc();
  d["tokens"] = nlohmann::json::array();
  expect_error(d, {"'tokens'", "encoder's tokens", "beside 'decoder'"});
}

TEST(Seq2SeqHostile, SafetensorsDecoderChecked) {
  // The safetensors reader runs the same checks: a cross-attention for the
  // wrong source length and a self-attention that looks ahead, written by the
  // writer from doctored traces.
  AttentionTrace t = translation();
  auto d = std::make_shared<DecoderTrace>(*t.decoder);
  for (auto& layer : d->cross_attention)
    for (Matrix& w : layer) w.conservativeResize(w.rows(), w.cols() - 1);
  t.decoder = d;
  std::string message;
  try {
    read_trace_file(write_file("bad.safetensors", write("safetensors", whole_trace(t))));
  } catch (const TraceError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("'decoder.cross_attention[0][0]'"), std::string::npos) << message;
  EXPECT_NE(message.find("8x7"), std::string::npos) << message;

  t = translation();
  d = std::make_shared<DecoderTrace>(*t.decoder);
  d->attention[2][3](0, 0) = 0.5f;
  d->attention[2][3](0, 5) = 0.5f;
  t.decoder = d;
  message.clear();
  try {
    read_trace_file(write_file("ahead.safetensors", write("safetensors", whole_trace(t))));
  } catch (const TraceError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("'decoder.attention[2][3][0][5]'"), std::string::npos) << message;
  EXPECT_NE(message.find("causal"), std::string::npos) << message;
}

}  // namespace
}  // namespace attnscope

// The lesson model's trace through the JSON writer (attnscope-trace/1, shared/DESIGN.md).
#include <gtest/gtest.h>

#include <sstream>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/lesson/lesson_model.h"
#include "core/trace/json_writer.h"

namespace attnscope {
namespace {

nlohmann::json export_json(const std::string& text, const LessonOptions& o = {}) {
  auto cpu = make_cpu_backend();
  AttentionTrace t = make_lesson_model(o)->run(text, *cpu);
  std::ostringstream out;
  write_trace_json(t, out);
  return nlohmann::json::parse(out.str());
}

TEST(LessonExport, DocumentFollowsTheContract) {
  const std::string text = "She withdrew money from the Bank, yesterday.";
  LessonOptions o;
  o.heads = 2;
  nlohmann::json doc = export_json(text, o);
  EXPECT_EQ(doc["format"], "attnscope-trace/1");
  EXPECT_EQ(doc["model"]["name"], "lesson");
  EXPECT_EQ(doc["model"]["kind"], "lesson");
  EXPECT_EQ(doc["model"]["layers"], 1);
  EXPECT_EQ(doc["model"]["heads"], 2);
  EXPECT_EQ(doc["model"]["options"]["beta"], 5.0);
  EXPECT_EQ(doc["model"]["options"]["mask_self"], true);
  EXPECT_EQ(doc["backend"], "cpu");
  EXPECT_EQ(doc["text"], text);
  EXPECT_FALSE(doc.contains("truncated_at_byte"));

  const auto& tokens = doc["tokens"];
  ASSERT_EQ(tokens.size(), 9u);
  for (const auto& tok : tokens) {
    const int start = tok["start"], end = tok["end"];
    ASSERT_GE(start, 0);
    ASSERT_LE(end, static_cast<int>(text.size()));
    std::string spelled = text.substr(start, end - start);
    for (char& c : spelled) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(spelled, tok["text"]);
    EXPECT_EQ(tok["special"], false);
  }
  EXPECT_EQ(tokens[5]["text"], "bank");
  EXPECT_GE(tokens[5]["id"].get<int>(), 0);
  EXPECT_EQ(tokens[6]["text"], ",");
  EXPECT_EQ(tokens[6]["id"], -1);
  EXPECT_EQ(tokens[6]["unknown"], true);

  const auto& attention = doc["attention"];
  ASSERT_EQ(attention.size(), 1u);
  ASSERT_EQ(attention[0].size(), 2u);
  for (const auto& head : attention[0]) {
    ASSERT_EQ(head.size(), tokens.size());
    for (size_t i = 0; i < head.size(); ++i) {
      ASSERT_EQ(head[i].size(), tokens.size());
      double sum = 0;
      for (size_t j = 0; j < head[i].size(); ++j) {
        const double w = head[i][j];
        EXPECT_GE(w, 0.0);
        if (i == j || tokens[j].value("unknown", false)) {
          EXPECT_EQ(w, 0.0);  // self and unknown keys
        }
        sum += w;
      }
      EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << i;
    }
  }
}

TEST(LessonExport, TruncationAndInvalidUtf8AreVisible) {
  std::string text = "bad \xff byte ";
  for (int i = 0; i < 600; ++i) text += "word ";
  nlohmann::json doc = export_json(text);
  EXPECT_EQ(doc["tokens"].size(), static_cast<size_t>(kLessonMaxTokens));
  EXPECT_EQ(doc["truncated_at_byte"], 11 + 5 * (kLessonMaxTokens - 3));
  EXPECT_EQ(doc["tokens"][1]["text"], "\xEF\xBF\xBD");
  EXPECT_EQ(doc["attention"][0][0].size(), static_cast<size_t>(kLessonMaxTokens));
}

TEST(LessonExport, EmptyTextIsAValidDocument) {
  nlohmann::json doc = export_json("");
  EXPECT_TRUE(doc["tokens"].empty());
  EXPECT_EQ(doc["model"]["layers"], 1);
  EXPECT_EQ(doc["model"]["heads"], 1);
  EXPECT_TRUE(doc["attention"][0][0].empty());
}

}  // namespace
}  // namespace attnscope

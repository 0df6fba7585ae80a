// A trace written by Python (tools/reference/attnscope_trace.py, the README's snippet) from our
// float64 PyTorch reference model: attnscope reads it, and its numbers are the ones attnscope's own
// forward pass computes for the same text on the same fixture model.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/backend/cpu/cpu_backend.h"
#include "core/model/registry.h"
#include "core/trace/trace_reader.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;

const std::string kCommitted = ATTNSCOPE_TEST_DATA "/python_trace/gpt2-tiny-f32.json";

void expect_matches_our_forward(const AttentionTrace& t) {
  auto model = open_model(ATTNSCOPE_FIXTURES "/gpt2-tiny-f32");
  auto cpu = make_cpu_backend();
  const AttentionTrace ours = model->run(t.text, *cpu);
  ASSERT_EQ(ours.tokens.size(), t.tokens.size());
  for (size_t i = 0; i < t.tokens.size(); ++i) {
    EXPECT_EQ(ours.tokens[i].text, t.tokens[i].text);
    EXPECT_EQ(ours.tokens[i].id, t.tokens[i].id);
    EXPECT_EQ(ours.tokens[i].start, t.tokens[i].start);
    EXPECT_EQ(ours.tokens[i].end, t.tokens[i].end);
  }
  ASSERT_EQ(ours.layers(), t.layers());
  ASSERT_EQ(ours.heads(), t.heads());
  for (int l = 0; l < t.layers(); ++l)
    for (int h = 0; h < t.heads(); ++h)
      EXPECT_LT((ours.attention[l][h] - t.attention[l][h]).cwiseAbs().maxCoeff(), 1e-4f)
          << "layer " << l << " head " << h;
}

TEST(PythonTrace, TheCommittedFileReadsAndMatchesOurForwardPass) {
  const AttentionTrace t = read_trace_file(kCommitted);
  EXPECT_EQ(t.text, "The cat sat on the mat.");
  EXPECT_EQ(t.backend, "pytorch");
  EXPECT_EQ(t.model.layers, 2);
  EXPECT_EQ(t.model.heads, 4);
  expect_matches_our_forward(t);
}

// The script still writes what is committed (skipped where Debian's python3-torch is missing).
TEST(PythonTrace, TheScriptWritesTheSameFile) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-torch is not installed";
  const fs::path out =
      fs::temp_directory_path() / ("py_trace_" + std::to_string(getpid()) + ".json");
  const std::string cmd = "/usr/bin/python3 '" ATTNSCOPE_SOURCE_DIR
                          "/tools/reference/attnscope_trace.py' '" ATTNSCOPE_FIXTURES
                          "/gpt2-tiny-f32' '" +
                          out.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const AttentionTrace fresh = read_trace_file(out);
  const AttentionTrace committed = read_trace_file(kCommitted);
  ASSERT_EQ(fresh.layers(), committed.layers());
  for (int l = 0; l < fresh.layers(); ++l)
    for (int h = 0; h < fresh.heads(); ++h)
      EXPECT_LT((fresh.attention[l][h] - committed.attention[l][h]).cwiseAbs().maxCoeff(), 1e-6f);
  expect_matches_our_forward(fresh);
  fs::remove(out);
}

// The README's snippet itself, run as written (tools/reference/run_readme_snippet.py stands in for
// transformers with the same reference model): the file it writes opens and holds our numbers.
TEST(PythonTrace, TheReadmeSnippetRunsAsWritten) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-torch is not installed";
  const fs::path dir = fs::temp_directory_path() / ("readme_snippet_" + std::to_string(getpid()));
  const std::string cmd = "/usr/bin/python3 '" ATTNSCOPE_SOURCE_DIR
                          "/tools/reference/run_readme_snippet.py' '" ATTNSCOPE_SOURCE_DIR
                          "/README.md' '" ATTNSCOPE_FIXTURES "/gpt2-tiny-f32' '" +
                          dir.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const AttentionTrace t = read_trace_file(dir / "trace.json");
  EXPECT_EQ(t.text, "The cat sat on the mat.");
  EXPECT_EQ(t.model.name, "gpt2");
  EXPECT_EQ(t.model.kind, "gpt2");
  expect_matches_our_forward(t);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnscope

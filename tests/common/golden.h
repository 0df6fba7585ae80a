#pragma once
// Helpers of the GPT-2 and BERT tests: the golden files that tools/reference/make_golden.py writes
// into tests/data/golden/, and fixture model folders with an edited config.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/util/matrix.h"

namespace attnscope::test {

inline nlohmann::json golden(const std::string& name) {
  std::ifstream in(std::filesystem::path(ATTNSCOPE_TEST_DATA) / "golden" / (name + ".json"));
  EXPECT_TRUE(in) << "missing golden file for " << name;
  return nlohmann::json::parse(in);
}

inline Matrix to_matrix(const nlohmann::json& rows) {
  Matrix m(rows.size(), rows.empty() ? 0 : rows[0].size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i].size(); ++j) m(i, j) = rows[i][j].get<float>();
  return m;
}

inline float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return (a - b).cwiseAbs().maxCoeff();
}

}  // namespace attnscope::test

namespace attnscope::test {

// A copy of a fixture model folder (tools/make_fixture_models) whose config.json a test edits, to
// provoke the loader's errors. `Network` has a static load(folder): BertNetwork, or a decoder
// family's loader.
template <class Network>
class BrokenFolderTest : public ::testing::Test {
 protected:
  BrokenFolderTest(const std::string& fixture, const std::string& tag)
      : fixture_(fixture), tag_(tag) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("attnscope_" + tag_ + "_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    std::filesystem::copy_file(
        std::filesystem::path(ATTNSCOPE_FIXTURES) / fixture_ / "model.safetensors",
        dir_ / "model.safetensors");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The ModelError message of loading with `config`, or "(no error)".
  std::string load_error(const nlohmann::json& config) {
    std::ofstream(dir_ / "config.json") << config.dump();
    try {
      Network::load(dir_);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "(no error)";
  }
  std::string fixture_, tag_;
  std::filesystem::path dir_;
};

}  // namespace attnscope::test

#pragma once
// Reading the golden files that tools/reference/make_golden.py writes into tests/data/golden/.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

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

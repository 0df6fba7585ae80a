#pragma once
// Dense float matrices used everywhere in the core. Row-major, because that is how safetensors,
// cuBLAS-with-swapped-operands and the JSON trace all lay data out: row i of a [n x d] matrix is
// one token's vector.
#include <Eigen/Dense>

namespace attnscope {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;
using RowVector = Eigen::RowVectorXf;

}  // namespace attnscope

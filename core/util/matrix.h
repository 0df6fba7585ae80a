#pragma once
// Dense float matrices used everywhere in the core. Row-major, because that is how safetensors,
// cuBLAS-with-swapped-operands and the JSON trace all lay data out: row i of a [n x d] matrix is
// one token's vector.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512 intrinsic headers when Eigen
// is built for AVX-512 (GCC bug 105593, fixed in GCC 13). Those headers are first included here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Dense>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace attnscope {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;
using RowVector = Eigen::RowVectorXf;

}  // namespace attnscope

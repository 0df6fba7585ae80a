// build_word_vectors: English word vectors for attnscope's lesson model, built from text that
// Debian ships (dict-gcide, wordnet-base, fortunes, dict-devil) with the classic count recipe:
//   co-occurrence counts (window ±5, weights (W-d+1)/W) after frequent-word subsampling (1e-4)
//   → PPMI with context smoothing α = 0.75 → randomized truncated SVD, d = 128, U only (p = 0)
//   → rows L2-normalised → int8 with a per-row float scale (assets/lesson_vectors.bin).
// Single-threaded and seeded: the same inputs give the same bytes (assets/lesson_vectors.md).
//
// Output format (little-endian), read by core/model/lesson/word_vectors.cpp:
//   char[4] "ATWV", uint32 version = 1, uint32 vocab, uint32 dim,
//   vocab × { uint8 length, bytes[length] }            (row order = frequency rank)
//   vocab × { float32 scale, int8[dim] }                (row i ≈ scale · values)
#include <Eigen/Dense>
#include <Eigen/Sparse>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "corpus.h"

namespace {

struct Options {
  std::string gcide = "/usr/share/dictd/gcide.dict.dz";
  std::string wordnet = "/usr/share/wordnet";
  std::string fortunes = "/usr/share/games/fortunes";
  std::string devil = "/usr/share/dictd/devil.dict.dz";
  std::string out = "assets/lesson_vectors.bin";
  int vocab = 40000;
  int dim = 128;
  int window = 5;
  double alpha = 0.75;
  double subsample = 1e-4;
  int oversample = 16;
  int power_iterations = 3;
  std::uint64_t seed = 20240601;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Uniform in [0, 1) from the top 53 bits: the same numbers on every standard library, unlike
// std::uniform_real_distribution.
double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}
double gaussian(std::mt19937_64& rng) {  // Box–Muller, for the same reason
  double u1 = uniform01(rng), u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
}

using SparseRows = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
using Dense = Eigen::MatrixXd;

// Orthonormal basis of the columns of y [n x k] (thin Householder QR).
Dense orthonormalize(const Dense& y) {
  Eigen::HouseholderQR<Dense> qr(y);
  return qr.householderQ() * Dense::Identity(y.rows(), y.cols());
}

int usage() {
  std::fprintf(stderr,
               "usage: build_word_vectors [--out FILE] [--gcide F] [--wordnet DIR] "
               "[--fortunes DIR] [--devil F]\n"
               "       [--vocab N] [--dim D] [--window W] [--alpha A] [--subsample T] "
               "[--power-iterations Q] [--seed S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    std::string v = argv[++i];
    if (a == "--out")
      o.out = v;
    else if (a == "--gcide")
      o.gcide = v;
    else if (a == "--wordnet")
      o.wordnet = v;
    else if (a == "--fortunes")
      o.fortunes = v;
    else if (a == "--devil")
      o.devil = v;
    else if (a == "--vocab")
      o.vocab = std::stoi(v);
    else if (a == "--dim")
      o.dim = std::stoi(v);
    else if (a == "--window")
      o.window = std::stoi(v);
    else if (a == "--alpha")
      o.alpha = std::stod(v);
    else if (a == "--subsample")
      o.subsample = std::stod(v);
    else if (a == "--power-iterations")
      o.power_iterations = std::stoi(v);
    else if (a == "--seed")
      o.seed = std::stoull(v);
    else
      return usage();
  }
  if (o.vocab < 2 || o.vocab > 65535 || o.dim < 1 || o.dim > o.vocab || o.window < 1 ||
      o.window > 7)
    return usage();
  const auto t0 = Clock::now();

  // 1. Read every corpus into one id stream; -1 separates documents.
  std::unordered_map<std::string, int> ids;
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;
  std::vector<int> stream;
  auto sink = [&](const std::vector<std::string>& doc) {
    for (const std::string& w : doc) {
      auto [it, fresh] = ids.try_emplace(w, static_cast<int>(words.size()));
      if (fresh) words.push_back(w), counts.push_back(0);
      ++counts[it->second];
      stream.push_back(it->second);
    }
    stream.push_back(-1);
  };
  try {
    long g = wordvec::read_gcide(o.gcide, sink);
    long w = wordvec::read_wordnet(o.wordnet, sink);
    long f = wordvec::read_fortunes(o.fortunes, sink);
    long d = wordvec::read_devil(o.devil, sink);
    std::fprintf(stderr, "documents: gcide %ld, wordnet %ld, fortunes %ld, devil %ld\n", g, w, f,
                 d);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "build_word_vectors: %s\n", e.what());
    return 1;
  }
  const std::int64_t total_tokens = static_cast<std::int64_t>(stream.size()) - 0;
  std::fprintf(stderr, "tokens: %lld, distinct words: %zu (%.1f s)\n",
               static_cast<long long>(total_tokens), words.size(), seconds_since(t0));

  // 2. Vocabulary: the most frequent words, ties broken alphabetically (deterministic).
  std::vector<int> order(words.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return counts[a] != counts[b] ? counts[a] > counts[b] : words[a] < words[b];
  });
  const int n = std::min<int>(o.vocab, static_cast<int>(order.size()));
  std::vector<int> rank(words.size(), -1);
  for (int r = 0; r < n; ++r) rank[order[r]] = r;
  std::int64_t corpus_words = 0;
  for (std::int64_t c : counts) corpus_words += c;

  // 3. Subsampling (word2vec): keep a word of frequency f with probability min(1, sqrt(t/f)).
  std::mt19937_64 rng(o.seed);
  std::vector<double> keep(n);
  for (int r = 0; r < n; ++r) {
    double f = static_cast<double>(counts[order[r]]) / static_cast<double>(corpus_words);
    keep[r] = std::min(1.0, std::sqrt(o.subsample / f));
  }
  std::vector<int> kept;  // vocabulary ranks, -1 between documents
  kept.reserve(stream.size());
  for (int id : stream) {
    if (id < 0) {
      if (!kept.empty() && kept.back() != -1) kept.push_back(-1);
      continue;
    }
    int r = rank[id];
    if (r < 0) continue;
    if (keep[r] < 1.0 && uniform01(rng) >= keep[r]) continue;
    kept.push_back(r);
  }
  std::vector<int>().swap(stream);

  // 4. Co-occurrence pairs (a, b) with a before b at distance d, weight W-d+1 (integers, so the
  // sums do not depend on the summation order). Packed: (a << 16 | b) << 3 | weight.
  std::vector<std::uint64_t> pairs;
  pairs.reserve(kept.size() * o.window);
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i] < 0) continue;
    for (int d = 1; d <= o.window && i + d < kept.size() && kept[i + d] >= 0; ++d) {
      std::uint64_t a = kept[i], b = kept[i + d];
      if (a > b) std::swap(a, b);
      pairs.push_back(((a << 16 | b) << 3) | static_cast<std::uint64_t>(o.window - d + 1));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<Eigen::Triplet<double, int>> triplets;
  for (size_t i = 0; i < pairs.size();) {
    std::uint64_t key = pairs[i] >> 3;
    std::int64_t sum = 0;
    for (; i < pairs.size() && (pairs[i] >> 3) == key; ++i)
      sum += static_cast<std::int64_t>(pairs[i] & 7);
    int a = static_cast<int>(key >> 16), b = static_cast<int>(key & 0xffff);
    double c = static_cast<double>(sum) / o.window;
    // Symmetric window: b is a context of a and a of b.
    if (a == b) {
      triplets.emplace_back(a, a, 2 * c);
    } else {
      triplets.emplace_back(a, b, c);
      triplets.emplace_back(b, a, c);
    }
  }
  std::vector<std::uint64_t>().swap(pairs);
  SparseRows m(n, n);
  m.setFromTriplets(triplets.begin(), triplets.end());
  std::vector<Eigen::Triplet<double, int>>().swap(triplets);
  std::fprintf(stderr, "kept tokens: %zu, nonzero pairs: %ld (%.1f s)\n", kept.size(),
               static_cast<long>(m.nonZeros()), seconds_since(t0));

  // 5. PPMI with context distribution smoothing: max(0, log(#(w,c) / (#(w) · P_α(c)))).
  Eigen::VectorXd row_sum = Eigen::VectorXd::Zero(n);
  for (int r = 0; r < n; ++r)
    for (SparseRows::InnerIterator it(m, r); it; ++it) row_sum[r] += it.value();
  Eigen::VectorXd context_p(n);
  for (int c = 0; c < n; ++c) context_p[c] = std::pow(row_sum[c], o.alpha);  // symmetric counts
  context_p /= context_p.sum();
  for (int r = 0; r < n; ++r)
    for (SparseRows::InnerIterator it(m, r); it; ++it)
      it.valueRef() = std::max(0.0, std::log(it.value() / (row_sum[r] * context_p[it.col()])));
  m.prune(0.0);
  std::fprintf(stderr, "PPMI nonzeros: %ld (%.1f s)\n", static_cast<long>(m.nonZeros()),
               seconds_since(t0));

  // 6. Randomized truncated SVD (Halko, Martinsson, Tropp 2011) with power iterations.
  const int k = std::min(n, o.dim + o.oversample);
  Dense omega(n, k);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < n; ++i) omega(i, j) = gaussian(rng);
  Dense q = orthonormalize(m * omega);
  for (int it = 0; it < o.power_iterations; ++it) {
    q = orthonormalize(m.transpose() * q);
    q = orthonormalize(m * q);
  }
  Dense bt = m.transpose() * q;                                   // Bᵀ [n x k], B = Qᵀ M
  Eigen::SelfAdjointEigenSolver<Dense> eig(bt.transpose() * bt);  // B Bᵀ = U_b Σ² U_bᵀ
  Dense u(n, o.dim);  // left singular vectors, largest singular value first
  for (int j = 0; j < o.dim; ++j) {
    u.col(j) = q * eig.eigenvectors().col(k - 1 - j);
    Eigen::Index at;
    u.col(j).cwiseAbs().maxCoeff(&at);
    if (u(at, j) < 0) u.col(j) = -u.col(j);  // a fixed sign convention
  }
  std::fprintf(stderr, "SVD: top singular values %.2f %.2f … %.2f (%.1f s)\n",
               std::sqrt(eig.eigenvalues()[k - 1]), std::sqrt(eig.eigenvalues()[k - 2]),
               std::sqrt(std::max(0.0, eig.eigenvalues()[k - o.dim])), seconds_since(t0));

  // 7. Rows L2-normalised, int8 with a per-row scale.
  std::ofstream f(o.out, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "build_word_vectors: cannot write %s\n", o.out.c_str());
    return 1;
  }
  auto put_u32 = [&](std::uint32_t x) {
    unsigned char b[4] = {static_cast<unsigned char>(x), static_cast<unsigned char>(x >> 8),
                          static_cast<unsigned char>(x >> 16), static_cast<unsigned char>(x >> 24)};
    f.write(reinterpret_cast<char*>(b), 4);
  };
  f.write("ATWV", 4);
  put_u32(1);
  put_u32(static_cast<std::uint32_t>(n));
  put_u32(static_cast<std::uint32_t>(o.dim));
  for (int r = 0; r < n; ++r) {
    const std::string& w = words[order[r]];
    unsigned char len = static_cast<unsigned char>(std::min<size_t>(w.size(), 255));
    f.put(static_cast<char>(len));
    f.write(w.data(), len);
  }
  double max_error = 0.0;
  for (int r = 0; r < n; ++r) {
    Eigen::VectorXd row = u.row(r).transpose();
    double norm = row.norm();
    if (norm > 0) row /= norm;
    float scale = static_cast<float>(row.cwiseAbs().maxCoeff() / 127.0);
    std::uint32_t scale_bits;
    std::memcpy(&scale_bits, &scale, 4);
    put_u32(scale_bits);
    for (int j = 0; j < o.dim; ++j) {
      double q8 = scale > 0 ? std::round(row[j] / scale) : 0.0;
      max_error = std::max(max_error, std::abs(q8 * scale - row[j]));
      f.put(static_cast<char>(static_cast<signed char>(q8)));
    }
  }
  if (!f) {
    std::fprintf(stderr, "build_word_vectors: writing %s failed\n", o.out.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s: %d words × %d, max int8 error %.4f (%.1f s)\n", o.out.c_str(), n,
               o.dim, max_error, seconds_since(t0));
  return 0;
}

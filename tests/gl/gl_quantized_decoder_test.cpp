// A decoder on quantised weights (ggml's block formats, random valid blocks, as a GGUF holds them)
// on the opengl backend (which dequantises on upload) against the CPU (which dequantises inside
// its GEMM's packing), and the CPU's quantised path against the same network on the dequantised
// weights as F32 (quant.h's values, held bit for bit against numpy in quant_test): every head's
// attention within 1e-4, the logits within 1e-4 of their size. Runs in CI on llvmpipe; a missing
// OpenGL fails, never skips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/quant.h"
#include "core/backend/select.h"
#include "core/model/decoder/decoder_network.h"
#include "core/model/decoder/decoder_spec.h"

namespace attnscope {
namespace {

// [rows x cols] of `t`: random bytes with f16 scales that keep the values near N(0, 0.05²).
WeightView random_quantized(DType t, int rows, int cols, std::mt19937& rng) {
  const std::size_t row_bytes = dtype_row_bytes(t, static_cast<std::size_t>(cols));
  auto mem = std::make_shared<std::vector<unsigned char>>(row_bytes * rows);
  for (unsigned char& b : *mem) b = static_cast<unsigned char>(rng() >> 24);
  float d = 0.0f, m = 0.0f;
  switch (t) {
    case DType::kQ8_0:
      d = 0.05f / 64;
      break;
    case DType::kQ4_K:
      d = 0.05f / 120, m = 7.5f * d;
      break;
    case DType::kQ5_K:
      d = 0.05f / 240, m = 15.5f * d;
      break;
    case DType::kQ6_K:
      d = 0.05f / 1200;
      break;
    case DType::kQ3_K:
      d = 0.05f / 40;
      break;
    case DType::kQ2_K:
      d = 0.05f / 12, m = 0.3f * d;
      break;
    case DType::kIQ4_XS:
      d = 0.05f / 1000;
      break;
    case DType::kQ4_0:
    case DType::kIQ4_NL:
      d = t == DType::kQ4_0 ? 0.05f / 4 : 0.05f / 64;
      break;
    default:
      d = 0.01f;
      break;
  }
  const quant::ScaleOffsets o = quant::scale_offsets(t);
  const std::size_t block = dtype_block_bytes(t);
  for (std::size_t b = 0; b < mem->size(); b += block) {
    const std::uint16_t hd = float_to_f16(d * (0.7f + 0.6f * (rng() % 100) / 100.0f));
    const std::uint16_t hm = float_to_f16(m);
    std::memcpy(mem->data() + b + o.first, &hd, 2);
    if (o.second >= 0) std::memcpy(mem->data() + b + o.second, &hm, 2);
  }
  WeightView w;
  w.data = mem->data();
  w.dtype = t;
  w.rows = rows;
  w.cols = cols;
  w.owner = mem;
  return w;
}

// The same matrix dequantised to an F32 view.
WeightView as_f32(const WeightView& q) {
  auto m = std::make_shared<Matrix>(widen(q));
  WeightView w;
  w.data = m->data();
  w.dtype = DType::kF32;
  w.rows = q.rows;
  w.cols = q.cols;
  w.owner = m;
  return w;
}

Tensor norm_weight(int n, std::mt19937& rng) {
  std::normal_distribution<float> dist(1.0f, 0.1f);
  Matrix m(1, n);
  for (int i = 0; i < n; ++i) m(0, i) = dist(rng);
  return host_tensor(std::move(m));
}

// A Llama-architecture decoder (hidden 256 = one K-quant block per row, 4 heads and 2 KV heads of
// 64, MLP 512, vocab 96, 2 layers) with every matrix in one of ggml's formats; `f32` gives the same
// network on the dequantised values.
DecoderNetwork make_decoder(bool f32) {
  const nlohmann::json config = {{"model_type", "llama"},      {"hidden_size", 256},
                                 {"num_hidden_layers", 2},     {"num_attention_heads", 4},
                                 {"num_key_value_heads", 2},   {"intermediate_size", 512},
                                 {"vocab_size", 96},           {"max_position_embeddings", 128},
                                 {"rms_norm_eps", 1e-5},       {"rope_theta", 10000.0},
                                 {"tie_word_embeddings", true}};
  DecoderSpec s = llama_spec(config, "quantized/config.json");
  std::mt19937 rng(26);
  auto w = std::make_shared<DecoderFileWeights>();
  auto mat = [&](DType t, int rows, int cols) {
    const WeightView q = random_quantized(t, rows, cols, rng);
    return f32 ? as_f32(q) : q;
  };
  const int d = s.hidden, dq = s.heads * s.head_dim, dkv = s.kv_heads * s.head_dim;
  w->embed = mat(DType::kQ6_K, s.vocab, d);
  w->lm_head = w->embed;
  w->dtype = w->embed.dtype;
  const DType types[2][7] = {{DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ8_0, DType::kQ4_K,
                              DType::kQ3_K, DType::kQ6_K},
                             {DType::kIQ4_XS, DType::kQ2_K, DType::kQ4_0, DType::kIQ4_NL,
                              DType::kQ5_K, DType::kQ4_K, DType::kQ8_0}};
  for (int l = 0; l < s.layers; ++l) {
    DecoderLayerFileWeights t;
    t.input_norm = norm_weight(d, rng);
    t.post_attention_norm = norm_weight(d, rng);
    t.q = mat(types[l][0], dq, d);
    t.k = mat(types[l][1], dkv, d);
    t.v = mat(types[l][2], dkv, d);
    t.o = mat(types[l][3], d, dq);
    t.gate = mat(types[l][4], s.ff, d);
    t.up = mat(types[l][5], s.ff, d);
    t.down = mat(types[l][6], d, s.ff);
    w->layers.push_back(std::move(t));
  }
  w->final_norm = norm_weight(d, rng);
  return DecoderNetwork::from_weights(std::move(s), std::move(w));
}

float max_abs_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return a.size() ? (a - b).cwiseAbs().maxCoeff() : 0.0f;
}

void expect_same_outputs(const DecoderOutputs& want, const DecoderOutputs& got,
                         const DecoderSpec& s, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.attention.size(), static_cast<std::size_t>(s.layers));
  float worst = 0;
  for (int l = 0; l < s.layers; ++l)
    for (int h = 0; h < s.heads; ++h)
      worst = std::max(worst, max_abs_diff(want.attention[l][h], got.attention[l][h]));
  EXPECT_LE(worst, 1e-4f) << "attention";
  EXPECT_LE(max_abs_diff(got.logits, want.logits), 1e-4f * (1 + want.logits.cwiseAbs().maxCoeff()))
      << "logits";
}

TEST(QuantizedDecoder, OpenGlAndCpuAgreeAndTheCpuMatchesTheDequantisedFloats) {
  const OpenGlProbe probe = try_opengl_backend();
  ASSERT_TRUE(probe.backend) << "the opengl backend does not work here: " << probe.why;
  const auto cpu = make_cpu_backend(CpuPrecision::kFloat);
  const DecoderNetwork quantized = make_decoder(false), floats = make_decoder(true);
  const DecoderSpec& s = quantized.spec();
  std::vector<int> ids;
  for (int i = 0; i < 19; ++i) ids.push_back((i * 37 + 5) % s.vocab);
  DecoderRequest all;
  all.all_logits = true;
  KvCache c1, c2, c3;
  const DecoderOutputs on_cpu = quantized.forward(ids, c1, *cpu, all);
  const DecoderOutputs on_gl = quantized.forward(ids, c2, *probe.backend, all);
  const DecoderOutputs on_floats = floats.forward(ids, c3, *cpu, all);
  // The random weights must give attention that is not uniform, or the comparison says little.
  EXPECT_GT(on_cpu.attention[1][0].row(18).maxCoeff(), 2.0f / 19);
  expect_same_outputs(on_cpu, on_gl, s, "opengl against the cpu");
  expect_same_outputs(on_floats, on_cpu, s, "cpu quantised against cpu on F32 dequantised");
}

}  // namespace
}  // namespace attnscope

// The opengl backend: every op as a GLSL 4.30 compute shader (shaders/compute/) over shader
// storage buffers, on a headless EGL context (gl_device.h). Each op has the name and meaning of its
// CPU counterpart (core/backend/cpu/cpu_backend.cpp), the reference it is tested against
// (tests/gl/gl_backend_equivalence_test.cpp). Built as libattnscope_gl.so and loaded at run time
// (core/backend/select.cpp), so neither the core nor the executable needs libEGL.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/gl_module.h"
#include "modules/opengl/gl_device.h"
#include "modules/opengl/gl_dispatch.h"
#include "modules/opengl/gl_programs.h"

namespace attnscope::gl {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("opengl backend: ") + what);
}

class GlBackend final : public Backend {
 public:
  explicit GlBackend(std::shared_ptr<GlDevice> device)
      : device_(std::move(device)), gpu_(*device_) {
    device_->run([&] {
      programs_ = std::make_unique<ComputePrograms>();
      programs_->compile_all();
      glGenBuffers(1, &padding_buffer_);
    });
  }
  ~GlBackend() override {
    device_->run([&] {
      programs_.reset();
      glDeleteBuffers(1, &padding_buffer_);
      weights_scratch_ = Tensor();
    });
  }

  std::string name() const override { return "opengl"; }
  std::string description() const override {
    return device_->renderer() + " (OpenGL " + device_->version() + ")";
  }

  Tensor alloc(int rows, int cols) override {
    require(rows >= 0 && cols >= 0, "negative tensor shape");
    return device_->run([&] { return device_->alloc(rows, cols); });
  }
  Tensor upload(const Matrix& m) override {
    return device_->run([&] {
      Tensor t = device_->alloc(static_cast<int>(m.rows()), static_cast<int>(m.cols()));
      if (m.size()) {
        const GlDevice::Located at = device_->locate(t.data, std::size_t(m.size()));
        glBindBuffer(GL_COPY_WRITE_BUFFER, at.buffer);
        glBufferSubData(GL_COPY_WRITE_BUFFER, 0, GLsizeiptr(sizeof(float) * m.size()), m.data());
      }
      return t;
    });
  }
  Matrix download(const Tensor& t) override {
    Matrix m(t.rows, t.cols);
    if (m.size() == 0) return m;
    device_->run([&] {
      const std::size_t n = span(t);
      const GlDevice::Located at = device_->locate(t.data, n);
      glBindBuffer(GL_COPY_READ_BUFFER, at.buffer);
      const GLintptr offset = GLintptr(at.first * sizeof(float));
      if (t.stride == t.cols) {
        glGetBufferSubData(GL_COPY_READ_BUFFER, offset, GLsizeiptr(n * sizeof(float)), m.data());
        return;
      }
      std::vector<float> all(n);
      glGetBufferSubData(GL_COPY_READ_BUFFER, offset, GLsizeiptr(n * sizeof(float)), all.data());
      for (int r = 0; r < t.rows; ++r)
        std::memcpy(m.row(r).data(), all.data() + std::size_t(r) * t.stride,
                    sizeof(float) * t.cols);
    });
    return m;
  }
  void synchronize() override {
    device_->run([] { glFinish(); });
  }

  void copy(const Tensor& src, Tensor& dst) override {
    require(src.rows == dst.rows && src.cols == dst.cols, "copy: shapes differ");
    elementwise("copy", {{"src", src}, {"dst", dst}}, src.rows, src.cols);
  }

  void matmul(const Tensor& a, const Tensor& b, bool transpose_b, Tensor& c, float alpha,
              float beta) override {
    const int k_b = transpose_b ? b.cols : b.rows;
    const int m_b = transpose_b ? b.rows : b.cols;
    require(a.cols == k_b && c.rows == a.rows && c.cols == m_b, "matmul: shapes differ");
    if (c.rows == 0 || c.cols == 0) return;
    device_->run([&] {
      // Tensors larger than one binding are cut into blocks: columns of C (GPT-2's output layer
      // reads the 154 MB token embedding as Bᵀ), the inner dimension (each later slice adds to C
      // with beta = 1), and rows of A and C.
      const int k = a.cols, m = c.cols;
      const int half_block = static_cast<int>(std::min<std::size_t>(
          gpu_.max_block_elements() / 2, std::size_t(std::numeric_limits<int>::max())));
      int k_block = k, m_block = m;
      if (!gpu_.fits(b)) {
        if (transpose_b) {  // B [m x k]: blocks of its rows
          k_block = std::min(k, half_block);
          m_block = std::min(m, gpu_.rows_per_block(k_block, b.stride));
        } else {  // B [k x m]: blocks of its rows, each over a block of columns
          m_block = std::min(m, half_block);
          k_block = std::min(k, gpu_.rows_per_block(m_block, b.stride));
        }
      }
      const int n_block = std::min(gpu_.rows_per_block(std::max(1, k_block), a.stride),
                                   gpu_.rows_per_block(m_block, c.stride));
      // Few rows: one invocation per output (matmul_rows); otherwise 64x64 tiles.
      const bool few_rows = c.rows < 16;
      ComputeProgram& p = program(few_rows ? "matmul_rows" : "matmul");
      p.use();
      p.set("transpose_b", transpose_b ? 1 : 0);
      p.set("alpha", alpha);
      for (int k0 = 0; k0 < std::max(k, 1); k0 += std::max(k_block, 1)) {
        const int kn = std::min(k_block, k - k0);
        p.set("k", kn);
        p.set("beta", k0 == 0 ? beta : 1.0f);
        for (int c0 = 0; c0 < m; c0 += m_block) {
          const int mn = std::min(m_block, m - c0);
          gpu_.bind(p, 1, "b",
                    transpose_b ? b.rows_view(c0, mn).cols_view(k0, kn)
                                : b.rows_view(k0, kn).cols_view(c0, mn));
          for (int r0 = 0; r0 < c.rows; r0 += n_block) {
            const int nn = std::min(n_block, c.rows - r0);
            gpu_.bind(p, 0, "a", a.rows_view(r0, nn).cols_view(k0, kn));
            gpu_.bind(p, 2, "c", c.rows_view(r0, nn).cols_view(c0, mn));
            p.set("n", nn);
            p.set("m", mn);
            if (few_rows)
              gpu_.dispatch_elements(std::size_t(nn) * std::size_t(mn));
            else
              gpu_.dispatch(unsigned((mn + 63) / 64), unsigned((nn + 63) / 64));
          }
        }
      }
    });
  }

  void add_bias(Tensor& x, const Tensor& bias) override {
    require(bias.rows == 1 && bias.cols == x.cols, "add_bias: bias must be [1 x cols]");
    elementwise("add_bias", {{"x", x}, {"bias", bias, /*per_row=*/false}}, x.rows, x.cols);
  }
  void add(Tensor& x, const Tensor& y) override {
    require(x.rows == y.rows && x.cols == y.cols, "add: shapes differ");
    elementwise("add", {{"x", x}, {"y", y}}, x.rows, x.cols);
  }
  void scale(Tensor& x, float s) override {
    elementwise("scale", {{"x", x}}, x.rows, x.cols, [&](ComputeProgram& p) { p.set("s", s); });
  }
  void gelu(Tensor& x, Gelu kind) override {
    elementwise("gelu", {{"x", x}}, x.rows, x.cols,
                [&](ComputeProgram& p) { p.set("erf_form", kind == Gelu::kErf ? 1 : 0); });
  }

  void mask_fill(Tensor& x, const AttentionMask& mask) override {
    require(mask.key_padding.empty() || int(mask.key_padding.size()) == x.cols,
            "mask_fill: key padding length differs from the number of keys");
    device_->run([&] { upload_padding(mask.key_padding, 1); });
    elementwise("mask_fill", {{"x", x}}, x.rows, x.cols, [&](ComputeProgram& p) {
      // Row blocks: the causal and self masks compare with the row's index in the whole matrix.
      p.set("causal", mask.causal ? 1 : 0);
      p.set("mask_self", mask.mask_self ? 1 : 0);
      p.set("has_padding", mask.key_padding.empty() ? 0 : 1);
      p.set("query_offset", mask.query_offset);
      p.set("window", mask.window);
    });
  }

  void softmax_rows(Tensor& x) override { per_row("softmax_rows", {{"x", x}}, x.rows, x.cols); }

  void layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                  Tensor& y) override {
    require(y.rows == x.rows && y.cols == x.cols && gamma.cols == x.cols && beta.cols == x.cols,
            "layer_norm: shapes differ");
    per_row("layer_norm", {{"x", x}, {"gamma", gamma, false}, {"beta", beta, false}, {"y", y}},
            x.rows, x.cols, [&](ComputeProgram& p) { p.set("eps", eps); });
  }

  // ---- the modern-LLM ops ----------------------------------------------------------------------
  void softcap(Tensor& x, float cap) override {
    require(cap > 0, "softcap: the cap must be positive");
    elementwise("softcap", {{"x", x}}, x.rows, x.cols, [&](ComputeProgram& p) {
      p.set("cap", cap);
      p.set("inv_cap", 1.0f / cap);
    });
  }

  void rms_norm(const Tensor& x, const Tensor& weight, float eps, float weight_offset,
                Tensor& y) override {
    const int g = weight.cols;
    require(weight.rows == 1 && g > 0 && x.cols % g == 0 && y.rows == x.rows && y.cols == x.cols,
            "rms_norm: shapes differ");
    const int groups = x.cols / g;
    run_blocks(
        "rms_norm", {{"x", x}, {"weight", weight, false}, {"y", y}}, x.rows, x.cols,
        [&](ComputeProgram& p) {
          p.set("g", g);
          p.set("eps", eps);
          p.set("weight_offset", weight_offset);
        },
        [&](int rows) { gpu_.dispatch_rows(std::size_t(rows) * groups); });
  }

  void gated_activation(const Tensor& gate, const Tensor& up, Activation act,
                        Tensor& out) override {
    require(gate.rows == up.rows && gate.cols == up.cols && out.rows == gate.rows &&
                out.cols == gate.cols,
            "gated_activation: shapes differ");
    const int code = act == Activation::kSiLU ? 0 : act == Activation::kGeluTanh ? 1 : 2;
    elementwise("gated_activation", {{"gate", gate}, {"up", up}, {"out", out}}, gate.rows,
                gate.cols, [&](ComputeProgram& p) { p.set("act", code); });
  }

  void rope(Tensor& x, int heads, int head_dim, const std::vector<float>& inv_freq,
            int pos0) override {
    const int half = head_dim / 2;
    require(head_dim > 0 && head_dim % 2 == 0 && heads > 0 && x.cols == heads * head_dim,
            "rope: x's columns are not heads · head_dim");
    require(static_cast<int>(inv_freq.size()) == half, "rope: inv_freq is not head_dim / 2 long");
    require(pos0 >= 0, "rope: negative position");
    if (x.rows == 0) return;
    // cos and sin of each row's angles, in double from the float angle (see rope.comp.glsl).
    Matrix cos_table(x.rows, half), sin_table(x.rows, half);
    for (int i = 0; i < x.rows; ++i) {
      const float pos = static_cast<float>(pos0 + i);
      for (int j = 0; j < half; ++j) {
        const float angle = pos * inv_freq[j];
        cos_table(i, j) = static_cast<float>(std::cos(static_cast<double>(angle)));
        sin_table(i, j) = static_cast<float>(std::sin(static_cast<double>(angle)));
      }
    }
    const Tensor c = upload(cos_table), s = upload(sin_table);
    run_blocks(
        "rope", {{"x", x}, {"cos_table", c}, {"sin_table", s}}, x.rows, x.cols,
        [&](ComputeProgram& p) { p.set("head_dim", head_dim); },
        [&](int rows) { gpu_.dispatch_elements(std::size_t(rows) * (x.cols / 2)); });
  }

  // Every head in one dispatch (work groups = queries x heads), the weights written straight into
  // one [heads x n x m] buffer that is then read back head by head. (self_attention_heads, the
  // interface's default, comes here with column views of qkv.)
  void attention_heads(const Tensor& q, const Tensor& k, const Tensor& v, int heads, int kv_heads,
                       int head_dim, float score_factor, float logit_softcap,
                       const AttentionMask& mask, Tensor& context,
                       std::vector<Matrix>* weights) override {
    check_attention_shapes(q, k, v, heads, kv_heads, head_dim, mask, context);
    if (!attention_fits(q.rows, k.rows, head_dim, {q, k, v, context}))
      return Backend::attention_heads(q, k, v, heads, kv_heads, head_dim, score_factor,
                                      logit_softcap, mask, context, weights);
    attention_all_heads(
        q, k, v,
        {heads, kv_heads, head_dim, score_factor, logit_softcap, mask.query_offset, mask.window},
        mask, context, weights);
  }

 private:
  struct AttentionShape {
    int heads, kv_heads, head_dim;
    float score_factor, logit_softcap;
    int query_offset, window;
  };

  // Whether the fused shader can run: head_dim within its shared row, and one head's weights and
  // every input within one binding. Otherwise the interface's head-by-head default does it (its
  // ops split large tensors).
  bool attention_fits(int n_q, int n_k, int head_dim, std::initializer_list<Tensor> tensors) const {
    if (head_dim > 256 || !gpu_.fits(std::size_t(n_q) * std::size_t(n_k))) return false;
    for (const Tensor& t : tensors)
      if (!gpu_.fits(t)) return false;
    return true;
  }

  // softmax(mask(softcap(score_factor · Q_h·K_gᵀ)))·V_g for every head h (g = h / group) with as
  // many heads per dispatch as one binding of weights holds (all of them, but for long texts).
  void attention_all_heads(const Tensor& q, const Tensor& k, const Tensor& v,
                           const AttentionShape& s, const AttentionMask& mask, Tensor& context,
                           std::vector<Matrix>* weights) {
    const int n = q.rows, m = k.rows;
    if (weights) weights->resize(s.heads);
    if (n == 0) return;
    const std::size_t per_head = std::size_t(n) * std::size_t(std::max(m, 1));
    const int heads_per_dispatch = static_cast<int>(std::clamp<std::size_t>(
        (gpu_.max_block_elements() - 64) / per_head, 1, std::size_t(s.heads)));
    device_->run([&] {
      Tensor& scratch = weights_scratch(std::size_t(heads_per_dispatch) * per_head);
      upload_padding(mask.key_padding, 5);
      ComputeProgram& p = program("attention_heads");
      p.use();
      gpu_.bind(p, 0, "q", q);
      gpu_.bind(p, 1, "k", k);
      gpu_.bind(p, 2, "v", v);
      gpu_.bind(p, 4, "ctx", context);
      p.set("n_q", n);
      p.set("n_k", m);
      p.set("dh", s.head_dim);
      p.set("group", s.heads / s.kv_heads);
      p.set("score_factor", s.score_factor);
      p.set("logit_softcap", s.logit_softcap);
      p.set("inv_softcap", s.logit_softcap > 0 ? 1.0f / s.logit_softcap : 0.0f);
      p.set("causal", mask.causal ? 1 : 0);
      p.set("mask_self", mask.mask_self ? 1 : 0);
      p.set("has_padding", mask.key_padding.empty() ? 0 : 1);
      p.set("query_offset", s.query_offset);
      p.set("window", s.window);
      for (int h0 = 0; h0 < s.heads; h0 += heads_per_dispatch) {
        const int here = std::min(heads_per_dispatch, s.heads - h0);
        gpu_.bind_flat(p, 3, "w", scratch, std::size_t(here) * per_head);
        p.set("head0", h0);
        gpu_.dispatch(unsigned(n), unsigned(here));
        if (!weights) continue;
        const GlDevice::Located at = device_->locate(scratch.data, std::size_t(here) * per_head);
        glBindBuffer(GL_COPY_READ_BUFFER, at.buffer);
        for (int h = 0; h < here; ++h) {
          Matrix& w = (*weights)[h0 + h];
          w.resize(n, m);
          if (m > 0)
            glGetBufferSubData(GL_COPY_READ_BUFFER, GLintptr(h * per_head * sizeof(float)),
                               GLsizeiptr(std::size_t(n) * m * sizeof(float)), w.data());
        }
      }
    });
  }

  struct Arg {
    const char* name;
    Tensor tensor;
    bool per_row = true;  // cut into row blocks with the op (false: a [1 x cols] row vector)
  };
  using SetUniforms = std::function<void(ComputeProgram&)>;

  ComputeProgram& program(const char* stem) { return programs_->get(stem); }

  // Runs shader `stem` over [rows x cols] in row blocks that fit one binding; `dispatch(rows)`
  // launches one block (the shader sees `rows`, `cols` and each tensor's `_off` and `_stride`).
  void run_blocks(const char* stem, const std::vector<Arg>& args, int rows, int cols,
                  const SetUniforms& set, const std::function<void(int)>& dispatch) {
    if (rows == 0 || cols == 0) return;
    device_->run([&] {
      int block = rows;
      for (const Arg& a : args)
        if (a.per_row) block = std::min(block, gpu_.rows_per_block(a.tensor.cols, a.tensor.stride));
      ComputeProgram& p = program(stem);
      p.use();
      p.set("cols", cols);
      if (set) set(p);
      for (int r0 = 0; r0 < rows; r0 += block) {
        const int n = std::min(block, rows - r0);
        for (std::size_t i = 0; i < args.size(); ++i)
          gpu_.bind(p, int(i), args[i].name,
                    args[i].per_row ? args[i].tensor.rows_view(r0, n) : args[i].tensor);
        p.set("rows", n);
        p.set("row0", r0);
        dispatch(n);
      }
    });
  }
  // One invocation per element.
  void elementwise(const char* stem, const std::vector<Arg>& args, int rows, int cols,
                   const SetUniforms& set = nullptr) {
    run_blocks(stem, args, rows, cols, set,
               [&](int n) { gpu_.dispatch_elements(std::size_t(n) * std::size_t(cols)); });
  }
  // One work group per row (reductions).
  void per_row(const char* stem, const std::vector<Arg>& args, int rows, int cols,
               const SetUniforms& set = nullptr) {
    run_blocks(stem, args, rows, cols, set, [&](int n) { gpu_.dispatch_rows(std::size_t(n)); });
  }

  // The key padding mask as ints in its own buffer, bound to `binding` (something is always
  // bound there, so the shader's block is never left unbound).
  void upload_padding(const std::vector<std::uint8_t>& padding, int binding) {
    std::vector<int> values(padding.begin(), padding.end());
    if (values.empty()) values.push_back(0);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, padding_buffer_);
    glBufferData(GL_SHADER_STORAGE_BUFFER, GLsizeiptr(values.size() * sizeof(int)), values.data(),
                 GL_DYNAMIC_DRAW);
    gpu_.bind_buffer(binding, padding_buffer_);
  }

  // The attention weights' buffer, kept between calls and grown when a longer text needs more.
  Tensor& weights_scratch(std::size_t elements) {
    if (span(weights_scratch_) < elements || !weights_scratch_.data)
      weights_scratch_ = device_->alloc(1, static_cast<int>(elements));
    return weights_scratch_;
  }

  std::shared_ptr<GlDevice> device_;
  Dispatcher gpu_;
  std::unique_ptr<ComputePrograms> programs_;
  GLuint padding_buffer_ = 0;
  Tensor weights_scratch_;
};

void copy_text(char* out, std::size_t size, const std::string& text) {
  std::snprintf(out, size, "%s", text.c_str());
}

}  // namespace
}  // namespace attnscope::gl

// The module's entry point (core/backend/gl_module.h). Never throws across the dlopen boundary.
extern "C" __attribute__((visibility("default"))) attnscope::Backend* attnscope_create_gl_backend(
    const attnscope::GlModuleRequest* request, attnscope::GlModuleReport* report) {
  using namespace attnscope;
  using namespace attnscope::gl;
  GlModuleReport local;
  GlModuleReport& r = report ? *report : local;
  const GlModuleRequest defaults;
  const GlModuleRequest& q = request ? *request : defaults;
  try {
    std::shared_ptr<GlDevice> device = GlDevice::create();
    copy_text(r.renderer, sizeof r.renderer, device->renderer() + ", OpenGL " + device->version());
    r.software = device->software() ? 1 : 0;
    if (q.max_block_bytes > 0) device->limit_block_bytes(std::size_t(q.max_block_bytes));
    if (q.hardware_only && device->software()) {
      r.status = kGlSoftwareOnly;
      copy_text(r.error, sizeof r.error,
                device->renderer() + " is a software renderer, slower than the CPU backend");
      return nullptr;
    }
    Backend* backend = new GlBackend(std::move(device));
    r.status = kGlOk;
    return backend;
  } catch (const ShaderError& e) {
    r.status = kGlShaderError;
    copy_text(r.error, sizeof r.error, e.what());
  } catch (const std::exception& e) {
    r.status = kGlUnavailable;
    copy_text(r.error, sizeof r.error, e.what());
  }
  return nullptr;
}

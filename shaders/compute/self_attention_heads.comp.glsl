#version 430
// Self-attention of every head in one dispatch: work group (query i, head h) computes row i of
// head h's weights softmax(mask(score_factor · Q_h·K_hᵀ)) into `weights` [heads x n x n] and
// row i of weights·V_h into columns [h·dh, (h+1)·dh) of `context`.
// Q_h, K_h, V_h are columns h·dh, d + h·dh, 2d + h·dh of `qkv` [n x 3d]; dh <= 256.
// Grouped-query models share one K/V head between `heads / kv_heads` query heads, and Q, K and V
// may sit in separate tensors: q_col/k_col/v_col name the first column of head 0 in each.
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer QBuffer { float q[]; };
layout(std430, binding = 1) readonly buffer KBuffer { float kv_k[]; };
layout(std430, binding = 2) readonly buffer VBuffer { float kv_v[]; };
layout(std430, binding = 3) coherent buffer WeightsBuffer { float w[]; };
layout(std430, binding = 4) writeonly buffer ContextBuffer { float context[]; };
layout(std430, binding = 5) readonly buffer PaddingBuffer { int padding[]; };
uniform int n_q, n_k, dh, head0, heads_here, group;
uniform int q_off, q_stride, k_off, k_stride, v_off, v_stride, w_off, ctx_off, ctx_stride;
uniform float score_factor;
// Masks: key j is masked for query i when causal and j > i + position_offset, when mask_self and
// j == i + position_offset, when key padding[j] != 0, or when window > 0 and
// i + position_offset - j >= window (sliding-window attention).
uniform int causal, mask_self, has_padding, position_offset, window;

const int LOCAL = 128;
shared float q_row[256];
shared float partial[LOCAL];

void main() {
  int i = int(gl_WorkGroupID.x);
  int local_head = int(gl_WorkGroupID.y);
  int h = head0 + local_head;
  int kvh = h / group;
  int t = int(gl_LocalInvocationID.x);
  int qi = q_off + i * q_stride + h * dh;
  for (int c = t; c < dh; c += LOCAL) q_row[c] = q[qi + c];
  barrier();

  int row = w_off + (local_head * n_q + i) * n_k;
  int pos = i + position_offset;
  float mx = neg_inf();
  for (int j = t; j < n_k; j += LOCAL) {
    bool masked = (causal != 0 && j > pos) || (mask_self != 0 && j == pos) ||
                  (has_padding != 0 && padding[j] != 0) || (window > 0 && pos - j >= window);
    float s = neg_inf();
    if (!masked) {
      int kj = k_off + j * k_stride + kvh * dh;
      float dot = 0.0;
      for (int c = 0; c < dh; ++c) dot += q_row[c] * kv_k[kj + c];
      s = dot * score_factor;
      mx = max(mx, s);
    }
    w[row + j] = s;
  }
  partial[t] = mx;  // row maximum (written out here: see common.glsl)
  barrier();
  for (int s = LOCAL / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] = max(partial[t], partial[t + s]);
    barrier();
  }
  mx = partial[0];
  barrier();
  bool empty = isinf(mx) || isnan(mx);  // every key masked: the row is zeros
  float sum = 0.0;
  for (int j = t; j < n_k; j += LOCAL) {
    float e = empty ? 0.0 : softmax_term(w[row + j], mx);
    w[row + j] = e;
    sum += e;
  }
  partial[t] = sum;  // row sum
  barrier();
  for (int s = LOCAL / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  sum = partial[0];
  barrier();
  for (int j = t; j < n_k; j += LOCAL) w[row + j] = empty ? 0.0 : w[row + j] / sum;
  memoryBarrierBuffer();
  barrier();

  // context row = weights row · V_h, in chunks of up to LOCAL output columns; each chunk's
  // columns are summed over the keys by LOCAL / width invocations, then those partial sums.
  int out_row = ctx_off + i * ctx_stride + h * dh;
  for (int c0 = 0; c0 < dh; c0 += LOCAL) {
    int width = min(LOCAL, dh - c0);
    int parts = LOCAL / width;
    int c = t % width, part = t / width;
    float acc = 0.0;
    if (part < parts) {
      int vcol = v_off + kvh * dh + c0 + c;
      for (int j = part; j < n_k; j += parts) acc += w[row + j] * kv_v[vcol + j * v_stride];
    }
    partial[t] = acc;
    barrier();
    if (t < width) {
      float total = 0.0;
      for (int p = 0; p < parts; ++p) total += partial[p * width + t];
      context[out_row + c0 + t] = total;
    }
    barrier();
  }
}

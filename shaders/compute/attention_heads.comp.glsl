#version 430
// Attention of every head in one dispatch: work group (query i, head h) computes row i of head h's
// weights softmax(mask(softcap(score_factor · Q_h·K_gᵀ))) into `w` [heads x n_q x n_k] and
// row i of weights·V_g into columns [h·dh, (h+1)·dh) of `context`. dh <= 256.
// Q [n_q x heads·dh], K and V [n_k x kv_heads·dh] (for self-attention, column views of one qkv
// tensor); grouped-query models share K/V head g = h / group between `group` query heads.
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer QBuffer { float q[]; };
layout(std430, binding = 1) readonly buffer KBuffer { float kv_k[]; };
layout(std430, binding = 2) readonly buffer VBuffer { float kv_v[]; };
layout(std430, binding = 3) coherent buffer WeightsBuffer { float w[]; };
layout(std430, binding = 4) writeonly buffer ContextBuffer { float context[]; };
layout(std430, binding = 5) readonly buffer PaddingBuffer { int padding[]; };
uniform int n_q, n_k, dh, head0, group;
uniform int q_off, q_stride, k_off, k_stride, v_off, v_stride, w_off, ctx_off, ctx_stride;
uniform float score_factor;
uniform float logit_softcap, inv_softcap;  // softcap(s) = cap · tanh(s / cap) when cap > 0 (Gemma 2)
// Masks (AttentionMask::masked): query i sits at position q = query_offset + i; key j is masked
// when causal and j > q, when mask_self and j == q, when key padding[j] != 0, or when window > 0
// and q - j >= window (sliding-window attention).
uniform int causal, mask_self, has_padding, query_offset, window;

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
  int pos = i + query_offset;
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
      if (logit_softcap > 0.0) s = logit_softcap * safe_tanh(s * inv_softcap);
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

#version 430
// RMSNorm in float as Hugging Face computes it, over each group of g = weight columns of a row:
//   Y = X / sqrt(mean(X²) + eps) · (weight_offset + w)
// One work group per (row, group); g = cols for a hidden state, head_dim for per-head q/k norms.
// Y may be X: each invocation rewrites only the values it read itself. The sum is written out in
// main() (see common.glsl).
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
layout(std430, binding = 1) readonly buffer WeightBuffer { float weight[]; };
layout(std430, binding = 2) buffer YBuffer { float y[]; };
uniform int rows, cols, x_off, x_stride, weight_off, y_off, y_stride, g;
uniform float eps, weight_offset;
shared float partial[256];

void main() {
  int groups = cols / g;
  int item = int(group_index());
  if (item >= rows * groups) return;
  int row = item / groups, c0 = (item % groups) * g;
  uint t = gl_LocalInvocationID.x;
  int in_base = x_off + row * x_stride + c0, out_base = y_off + row * y_stride + c0;
  float sq = 0.0;
  for (int c = int(t); c < g; c += 256) sq += x[in_base + c] * x[in_base + c];
  partial[t] = sq;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  float r = 1.0 / sqrt(partial[0] / float(g) + eps);
  for (int c = int(t); c < g; c += 256)
    y[out_base + c] = x[in_base + c] * r * (weight[weight_off + c] + weight_offset);
}

#version 430
// Y = (X - mean) / sqrt(var + eps) · gamma + beta per row (one work group per row; mean, then the
// variance around it, as the CPU computes them). The two sums are written out in main(): see
// common.glsl on barrier() inside functions.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer XBuffer { float x[]; };
layout(std430, binding = 1) readonly buffer GammaBuffer { float gamma[]; };
layout(std430, binding = 2) readonly buffer BetaBuffer { float beta[]; };
layout(std430, binding = 3) writeonly buffer YBuffer { float y[]; };
uniform int rows, cols, x_off, x_stride, gamma_off, beta_off, y_off, y_stride;
uniform float eps;
shared float partial[256];

void main() {
  int row = int(group_index());
  if (row >= rows) return;
  uint t = gl_LocalInvocationID.x;
  int in_base = x_off + row * x_stride, out_base = y_off + row * y_stride;
  float sum = 0.0;
  for (int c = int(t); c < cols; c += 256) sum += x[in_base + c];
  partial[t] = sum;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  float mean = partial[0] / float(cols);
  barrier();  // everyone has read partial[0] before it is reused
  float sq = 0.0;
  for (int c = int(t); c < cols; c += 256) {
    float d = x[in_base + c] - mean;
    sq += d * d;
  }
  partial[t] = sq;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  float denom = sqrt(partial[0] / float(cols) + eps);
  for (int c = int(t); c < cols; c += 256)
    y[out_base + c] = (x[in_base + c] - mean) / denom * gamma[gamma_off + c] + beta[beta_off + c];
}

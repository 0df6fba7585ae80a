#version 430
// Stable softmax of every row in place (one work group per row): subtract the row max; a row
// whose max is not finite (every entry masked to -inf) becomes zeros, as on the CPU.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
uniform int rows, cols, x_off, x_stride;
shared float partial[256];

void main() {
  int row = int(group_index());
  if (row >= rows) return;  // the whole group leaves together
  uint t = gl_LocalInvocationID.x;
  int base = x_off + row * x_stride;
  float mx = neg_inf();
  for (int c = int(t); c < cols; c += 256) mx = max(mx, x[base + c]);
  partial[t] = mx;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) partial[t] = max(partial[t], partial[t + s]);
    barrier();
  }
  mx = partial[0];
  barrier();
  if (isinf(mx) || isnan(mx)) {
    for (int c = int(t); c < cols; c += 256) x[base + c] = 0.0;
    return;
  }
  float sum = 0.0;
  for (int c = int(t); c < cols; c += 256) {
    float e = softmax_term(x[base + c], mx);
    x[base + c] = e;
    sum += e;
  }
  partial[t] = sum;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  sum = partial[0];
  for (int c = int(t); c < cols; c += 256) x[base + c] = x[base + c] / sum;
}

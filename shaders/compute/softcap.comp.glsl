#version 430
// X = cap · tanh(X / cap)  (Gemma 2's attention and final logits)
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
uniform int rows, cols, x_off, x_stride;
uniform float cap, inv_cap;  // inv_cap = 1 / cap rounded to float on the host, as the CPU does

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  int at = x_off + r * x_stride + c;
  x[at] = cap * safe_tanh(x[at] * inv_cap);
}

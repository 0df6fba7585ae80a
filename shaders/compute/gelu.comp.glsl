#version 430
// GELU in place: the tanh approximation (GPT-2) or the exact erf form (BERT).
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
uniform int rows, cols, x_off, x_stride, erf_form;

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  int at = x_off + r * x_stride + c;
  float v = x[at];
  if (erf_form != 0) {
    x[at] = 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
  } else {
    x[at] = 0.5 * v * (1.0 + safe_tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
  }
}

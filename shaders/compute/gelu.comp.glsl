#version 430
// GELU in place: the tanh approximation (GPT-2) or the exact erf form (BERT).
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
uniform int rows, cols, x_off, x_stride, erf_form;

// erf(z) by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7): GLSL has no erf.
float erf_approx(float z) {
  float t = 1.0 / (1.0 + 0.3275911 * abs(z));
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 +
               t * (-1.453152027 + t * 1.061405429))));
  float e = 1.0 - poly * exp(-z * z);
  return z < 0.0 ? -e : e;
}

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  int at = x_off + r * x_stride + c;
  float v = x[at];
  if (erf_form != 0) {
    x[at] = 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
  } else {
    // tanh saturates to ±1 in float beyond ±10; clamping keeps drivers that compute tanh from
    // exp() away from inf/inf.
    float u = clamp(0.79788456080286536 * (v + 0.044715 * v * v * v), -10.0, 10.0);
    x[at] = 0.5 * v * (1.0 + tanh(u));
  }
}

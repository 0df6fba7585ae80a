#version 430
// out = act(gate) · up, elementwise (gated MLPs); out may be gate or up.
// act: 0 SiLU x·sigmoid(x) (Llama, Mistral, Qwen), 1 GELU tanh (Gemma), 2 GELU erf.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer GateBuffer { float gate[]; };
layout(std430, binding = 1) buffer UpBuffer { float up[]; };
layout(std430, binding = 2) buffer OutBuffer { float result[]; };
uniform int rows, cols, gate_off, gate_stride, up_off, up_stride, out_off, out_stride, act;

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  float gv = gate[gate_off + r * gate_stride + c];
  float uv = up[up_off + r * up_stride + c];
  float a;
  if (act == 0) {
    a = gv / (1.0 + exp(-gv));  // exp(-x) = inf below -88 gives -0, as in torch
  } else if (act == 1) {
    a = 0.5 * gv * (1.0 + safe_tanh(0.79788456080286536 * (gv + 0.044715 * gv * gv * gv)));
  } else {
    a = 0.5 * gv * (1.0 + erf_approx(gv * 0.70710678118654752));
  }
  result[out_off + r * out_stride + c] = a * uv;
}

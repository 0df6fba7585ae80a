#version 430
// X *= s
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
uniform int rows, cols, x_off, x_stride;
uniform float s;

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  x[x_off + r * x_stride + c] *= s;
}

#version 430
// X[i, :] += bias[0, :]   (X [rows x cols], bias [1 x cols])
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
layout(std430, binding = 1) readonly buffer BiasBuffer { float bias[]; };
uniform int rows, cols, x_off, x_stride, bias_off;

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  x[x_off + r * x_stride + c] += bias[bias_off + c];
}

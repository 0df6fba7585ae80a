#version 430
// X += Y (same shape; views of one buffer are fine)
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
layout(std430, binding = 1) readonly buffer YBuffer { float y[]; };
uniform int rows, cols, x_off, x_stride, y_off, y_stride;

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  x[x_off + r * x_stride + c] += y[y_off + r * y_stride + c];
}

#version 430
// dst = src (same shape, any strides)
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer SrcBuffer { float src[]; };
layout(std430, binding = 1) writeonly buffer DstBuffer { float dst[]; };
uniform int rows, cols, src_off, src_stride, dst_off, dst_stride;

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols;
  dst[dst_off + r * dst_stride + c] = src[src_off + r * src_stride + c];
}

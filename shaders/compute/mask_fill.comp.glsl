#version 430
// Masked entries of a [queries x keys] matrix become -inf (AttentionMask::masked): query row i sits
// at position q = query_offset + i; key j is masked when causal and j > q, when mask_self and
// j == q, when window > 0 and q - j >= window, or when padding[j] != 0.
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
layout(std430, binding = 1) readonly buffer PaddingBuffer { int padding[]; };
uniform int rows, cols, x_off, x_stride, causal, mask_self, has_padding;
uniform int row0;  // the first row of this block in the whole matrix (queries are rows)
uniform int query_offset, window;

void main() {
  uint i = flat_index();
  if (i >= uint(rows * cols)) return;
  int r = int(i) / cols, c = int(i) % cols, query = query_offset + row0 + r;
  if ((causal != 0 && c > query) || (mask_self != 0 && c == query) ||
      (window > 0 && query - c >= window) || (has_padding != 0 && padding[c] != 0))
    x[x_off + r * x_stride + c] = neg_inf();
}

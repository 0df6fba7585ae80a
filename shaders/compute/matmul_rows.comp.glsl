#version 430
// C [n x m] = alpha · A [n x k] · op(B) + beta · C for few rows of A (n < 16: the output layer's
// last token, a decoder's next token): one invocation per output, its dot product straight from
// the storage buffers. A 64x64 tile of matmul.comp.glsl would leave most of its rows empty.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer ABuffer { float a[]; };
layout(std430, binding = 1) readonly buffer BBuffer { float b[]; };
layout(std430, binding = 2) buffer CBuffer { float c[]; };
uniform int n, k, m, transpose_b;
uniform int a_off, a_stride, b_off, b_stride, c_off, c_stride;
uniform float alpha, beta;

void main() {
  uint i = flat_index();
  if (i >= uint(n * m)) return;
  int r = int(i) / m, col = int(i) % m;
  int a_row = a_off + r * a_stride;
  float acc = 0.0;
  if (transpose_b != 0) {
    int b_row = b_off + col * b_stride;
    for (int kk = 0; kk < k; ++kk) acc += a[a_row + kk] * b[b_row + kk];
  } else {
    for (int kk = 0; kk < k; ++kk) acc += a[a_row + kk] * b[b_off + kk * b_stride + col];
  }
  int at = c_off + r * c_stride + col;
  c[at] = beta == 0.0 ? alpha * acc : alpha * acc + beta * c[at];
}

#version 430
// C [n x m] = alpha · A [n x k] · op(B) + beta · C, op(B) = B [k x m] or Bᵀ with B [m x k].
// Tiled in shared memory: each 16x16 work group computes a 64x64 tile of C, each invocation 4x4 of
// its outputs (rows ty + 16·i, columns tx + 16·j), walking k in slices of 16 that the group loads
// into shared memory together. beta == 0 never reads C (it may hold garbage), as in BLAS.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer ABuffer { float a[]; };
layout(std430, binding = 1) readonly buffer BBuffer { float b[]; };
layout(std430, binding = 2) buffer CBuffer { float c[]; };
uniform int n, k, m, transpose_b;
uniform int a_off, a_stride, b_off, b_stride, c_off, c_stride;
uniform float alpha, beta;

const int TILE = 64, SLICE = 16;
shared float a_tile[SLICE][TILE];  // a_tile[kk][row]
shared float b_tile[SLICE][TILE];  // b_tile[kk][col]

void main() {
  int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
  int row0 = int(gl_WorkGroupID.y) * TILE, col0 = int(gl_WorkGroupID.x) * TILE;
  int lid = ty * 16 + tx;
  // acc_i holds rows ty + 16·i, columns tx + 16·(0, 1, 2, 3): vectors, not an indexed array, so
  // compilers keep them in registers (llvmpipe spilled a float[4][4] to memory, 0.3 GFLOP/s).
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);

  for (int k0 = 0; k0 < k; k0 += SLICE) {
    // 1024 values of each tile, 4 per invocation.
    for (int e = lid; e < TILE * SLICE; e += 256) {
      // A: consecutive invocations read consecutive k of one row.
      int r = e / SLICE, kk = e % SLICE;
      int gr = row0 + r, gk = k0 + kk;
      a_tile[kk][r] = (gr < n && gk < k) ? a[a_off + gr * a_stride + gk] : 0.0;
      float bv = 0.0;
      if (transpose_b != 0) {  // B [m x k]: row = output column
        int col = e / SLICE, bk = e % SLICE;
        int gc = col0 + col, gbk = k0 + bk;
        if (gc < m && gbk < k) bv = b[b_off + gc * b_stride + gbk];
        b_tile[bk][col] = bv;
      } else {  // B [k x m]: consecutive invocations read consecutive columns
        int bk = e / TILE, col = e % TILE;
        int gc = col0 + col, gbk = k0 + bk;
        if (gc < m && gbk < k) bv = b[b_off + gbk * b_stride + gc];
        b_tile[bk][col] = bv;
      }
    }
    barrier();
    for (int kk = 0; kk < SLICE; ++kk) {
      vec4 bv = vec4(b_tile[kk][tx], b_tile[kk][tx + 16], b_tile[kk][tx + 32], b_tile[kk][tx + 48]);
      acc0 += a_tile[kk][ty] * bv;
      acc1 += a_tile[kk][ty + 16] * bv;
      acc2 += a_tile[kk][ty + 32] * bv;
      acc3 += a_tile[kk][ty + 48] * bv;
    }
    barrier();
  }

  for (int i = 0; i < 4; ++i) {
    int r = row0 + ty + 16 * i;
    if (r >= n) continue;
    vec4 acc = i == 0 ? acc0 : i == 1 ? acc1 : i == 2 ? acc2 : acc3;
    for (int j = 0; j < 4; ++j) {
      int col = col0 + tx + 16 * j;
      if (col >= m) continue;
      int at = c_off + r * c_stride + col;
      c[at] = beta == 0.0 ? alpha * acc[j] : alpha * acc[j] + beta * c[at];
    }
  }
}

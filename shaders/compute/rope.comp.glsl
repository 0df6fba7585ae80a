#version 430
// Rotary position embedding in place, Hugging Face's rotate_half convention. X [rows x heads·dh];
// for each head's halves x1 = x[0, dh/2), x2 = x[dh/2, dh) of a row:
//   x1' = x1 · cos(a) - x2 · sin(a),   x2' = x2 · cos(a) + x1 · sin(a)
// cos and sin come from tables [rows x dh/2] (row r: the position of X's row r) the host computes in double from the float angle
// (position · inv_freq rounded to float, as Hugging Face does): GPU sin/cos lose accuracy at the
// angles of long texts (thousands of radians).
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer XBuffer { float x[]; };
layout(std430, binding = 1) readonly buffer CosBuffer { float cos_table[]; };
layout(std430, binding = 2) readonly buffer SinBuffer { float sin_table[]; };
uniform int rows, cols, x_off, x_stride, cos_table_off, cos_table_stride, sin_table_off,
    sin_table_stride, head_dim;

void main() {
  int half_dim = head_dim / 2;
  int pairs = cols / 2;  // heads · dh/2
  uint i = flat_index();
  if (i >= uint(rows * pairs)) return;
  int r = int(i) / pairs, p = int(i) % pairs;
  int head = p / half_dim, j = p % half_dim;
  int at = x_off + r * x_stride + head * head_dim + j;
  float c = cos_table[cos_table_off + r * cos_table_stride + j];
  float s = sin_table[sin_table_off + r * sin_table_stride + j];
  float a = x[at], b = x[at + half_dim];
  x[at] = a * c - b * s;
  x[at + half_dim] = b * c + a * s;
}

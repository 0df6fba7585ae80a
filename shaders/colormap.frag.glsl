#version 330 core
// Heatmap cells: one output pixel per matrix entry. The weight comes from a float texture (exact,
// no 8-bit rounding) and is mapped through a 256-entry colormap table sampled with linear
// filtering, so the color is the table's piecewise-linear interpolation of the normalised weight.
uniform sampler2D u_values;  // R32F, [rows x cols] weights; texel (col, row)
uniform sampler2D u_lut;     // 256 x 1 RGB colormap table
uniform float u_vmin;
uniform float u_vmax;
out vec4 frag_color;

void main() {
  float w = texelFetch(u_values, ivec2(gl_FragCoord.xy), 0).r;
  float t = clamp((w - u_vmin) / max(u_vmax - u_vmin, 1e-12), 0.0, 1.0);
  // Texel centres of the table sit at (i + 0.5) / 256: map t = 0 and t = 1 onto the end entries.
  float u = (t * 255.0 + 0.5) / 256.0;
  frag_color = vec4(texture(u_lut, vec2(u, 0.5)).rgb, 1.0);
}

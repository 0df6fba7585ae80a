// Shared by every compute shader of the opengl backend: the loader inserts this file right after
// each shader's #version line (modules/opengl/gl_programs.cpp). Tensors are float arrays in shader
// storage buffers; a tensor argument is its buffer plus `<name>_off` (first element) and
// `<name>_stride` (elements between rows), so column views of one buffer need no copy.

// The index of this invocation in a 1-D problem spread over a 2-D grid of work groups (one
// dimension alone is limited to 65535 groups). Element-wise shaders use groups of 256 (the
// dispatcher's dispatch_elements counts on it); gl_WorkGroupSize is not declared yet up here.
uint flat_index() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u +
         gl_LocalInvocationID.x;
}
// The index of this work group when each group handles one row.
uint group_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

float neg_inf() { return uintBitsToFloat(0xff800000u); }

// The CPU backend's softmax gives exactly 0 to every value below the smallest normal float
// (masked keys, and keys ~87 below the row's maximum); so do we.
float softmax_term(float s, float row_max) {
  if (isinf(s)) return 0.0;
  float e = exp(s - row_max);
  return e < 1.17549435e-38 ? 0.0 : e;
}

// Work-group reductions are written out in each main(), not in a helper function: Mesa 22.3's
// llvmpipe let invocations past a barrier() inside a called function (a layer norm read partial
// sums of other rows' stages), while the same code in main() is exact.

// tanh saturates to ±1 in float beyond ±10; clamping keeps drivers that compute tanh from exp()
// away from inf/inf.
float safe_tanh(float u) { return tanh(clamp(u, -10.0, 10.0)); }

// erf(z) by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7): GLSL has no erf.
float erf_approx(float z) {
  float t = 1.0 / (1.0 + 0.3275911 * abs(z));
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 +
               t * (-1.453152027 + t * 1.061405429))));
  float e = 1.0 - poly * exp(-z * z);
  return z < 0.0 ? -e : e;
}

#version 330 core
// A quad covering the whole viewport, made from gl_VertexID alone (draw 4 vertices as a triangle
// strip with an empty vertex array): no vertex buffer to manage.
void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}

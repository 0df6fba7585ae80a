#pragma once
// The one place that includes the OpenGL loader; GLFW must come after it without its own GL header.
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

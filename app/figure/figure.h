#pragma once
// A figure as a list of shapes, text and colours, in drawing order: what `attnscope render` and
// File > Export view… produce. The views' figure builders (one file per view, *_figure.cpp) make
// one; the exporters (svg_exporter.cpp, cairo_exporter.cpp) draw it, so every view comes out the
// same in SVG, PDF and PNG. Units are CSS pixels (1/96 in) in SVG and PNG, points in PDF; y grows
// downwards; text positions are baselines.
#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnscope {

struct Rgba {
  float r = 0, g = 0, b = 0, a = 1;
};

struct FigureRect {
  float x, y, w, h;
  Rgba fill;
  bool crisp = false;   // a heatmap cell: no antialiasing, so neighbours leave no seams
  float stroke = 0.0f;  // outline width (0: none)
  Rgba stroke_color{};
};

struct FigureText {
  enum class Anchor { kStart, kMiddle, kEnd };
  float x, y;  // baseline point of the anchor
  std::string text;
  float size;
  Rgba color;
  Anchor anchor = Anchor::kStart;
  bool mono = false;      // DejaVu Sans Mono (numbers), else DejaVu Sans
  bool vertical = false;  // rotated 90° counter-clockwise, reading bottom to top
  bool bold = false;
};

// A straight line (2 points) or a cubic Bézier (4 points: start, two controls, end).
struct FigurePath {
  std::vector<std::array<float, 2>> points;
  Rgba color;
  float width = 1.0f;
  bool bezier = false;
};

// A smooth ramp from `stops.front()` at the top to `stops.back()` at the bottom (the colorbar).
struct FigureGradient {
  float x, y, w, h;
  std::vector<Rgba> stops;  // evenly spaced
};

// An RGB raster scaled to a rectangle without smoothing: heatmaps above ~256 tokens.
struct FigureImage {
  float x, y, w, h;
  int cols, rows;
  std::vector<std::uint8_t> rgb;  // rows * cols * 3
};

using FigureShape = std::variant<FigureRect, FigureText, FigurePath, FigureGradient, FigureImage>;

struct Figure {
  float width = 0, height = 0;
  Rgba background{1, 1, 1, 1};
  std::vector<FigureShape> shapes;
  // Where the builder put things (cells, colorbar), in figure units, for tests (--layout).
  nlohmann::json layout = nlohmann::json::object();

  void add(FigureShape s) { shapes.push_back(std::move(s)); }
};

}  // namespace attnscope

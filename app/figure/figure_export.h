#pragma once
// Writing a Figure to a file (`render -o fig.svg|fig.pdf|fig.png`, File > Export view…). One
// exporter per format, chosen by the file's extension; a new format is one new file plus a line in
// figure_export.cpp.
#include <functional>
#include <string>
#include <vector>

#include "app/figure/figure.h"

namespace attnscope {

struct FigureExporter {
  std::string extension;    // "svg"
  std::string description;  // for --help
  // Writes `fig` to `path`; PNG is drawn at `scale` pixels per figure unit. Throws Error.
  std::function<void(const Figure& fig, const std::string& path, float scale)> write;
};

const std::vector<FigureExporter>& figure_exporters();
// The exporter for `path`'s extension (case-insensitive); throws UsageError naming the known ones.
const FigureExporter& figure_exporter_for(const std::string& path);

// Registered exporters.
FigureExporter make_svg_exporter();
FigureExporter make_pdf_exporter();
FigureExporter make_png_exporter();

}  // namespace attnscope

#pragma once
// Writing a Figure to a file (`render -o fig.svg|fig.pdf|fig.png`, File > Export view…) or to
// stdout (`render -o -`). One exporter per format, chosen by the file's extension or by name; a
// new format is one new file plus a line in figure_export.cpp.
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
// The exporter for `path` when a format may be named too (`render --format F`): `format` (svg,
// pdf, png) wins, but a file whose extension names another known format is a UsageError; "-"
// (stdout) is SVG unless `format` says otherwise. An empty `format` is figure_exporter_for(path).
const FigureExporter& figure_exporter_for(const std::string& path, const std::string& format);

// Writes `fig` to `path` with `exporter`; "-" writes the figure's bytes to stdout and nothing else
// (the same bytes a file would get: the exporter writes a private temporary file that is copied
// out and removed). Throws Error.
void write_figure(const FigureExporter& exporter, const Figure& fig, const std::string& path,
                  float scale);

// Registered exporters.
FigureExporter make_svg_exporter();
FigureExporter make_pdf_exporter();
FigureExporter make_png_exporter();

}  // namespace attnscope

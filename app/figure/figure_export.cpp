// The registration list of figure formats (figure_export.h).
#include "app/figure/figure_export.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/util/error.h"

namespace attnscope {

const std::vector<FigureExporter>& figure_exporters() {
  static const std::vector<FigureExporter> all = {make_svg_exporter(), make_pdf_exporter(),
                                                  make_png_exporter()};
  return all;
}

const FigureExporter& figure_exporter_for(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string known;
  for (const FigureExporter& e : figure_exporters()) {
    if (e.extension == ext) return e;
    known += (known.empty() ? "." : ", .") + e.extension;
  }
  throw UsageError("cannot tell the figure format from '" + path + "': name it " + known);
}

}  // namespace attnscope

// The registration list of figure formats (figure_export.h), and `-o -`.
#include "app/figure/figure_export.h"

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/util/error.h"

namespace attnscope {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  return lower(ext);
}

const FigureExporter* find_exporter(const std::string& ext) {
  for (const FigureExporter& e : figure_exporters())
    if (e.extension == ext) return &e;
  return nullptr;
}

std::string known_formats(const char* prefix) {
  std::string known;
  for (const FigureExporter& e : figure_exporters())
    known += (known.empty() ? "" : ", ") + std::string(prefix) + e.extension;
  return known;
}

// A directory only this process uses (0700), removed with what it holds when the scope ends.
struct PrivateTempDir {
  std::filesystem::path path;
  PrivateTempDir() {
    std::string templ =
        (std::filesystem::temp_directory_path() / "attnscope-figure-XXXXXX").string();
    if (!mkdtemp(templ.data()))
      throw Error(std::string("cannot make a temporary directory for the figure: ") +
                  std::strerror(errno));
    path = templ;
  }
  ~PrivateTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
};
}  // namespace

const std::vector<FigureExporter>& figure_exporters() {
  static const std::vector<FigureExporter> all = {make_svg_exporter(), make_pdf_exporter(),
                                                  make_png_exporter()};
  return all;
}

const FigureExporter& figure_exporter_for(const std::string& path) {
  if (const FigureExporter* e = find_exporter(extension_of(path))) return *e;
  throw UsageError("cannot tell the figure format from '" + path + "': name it " +
                   known_formats(".") + ", or write to - (stdout)");
}

const FigureExporter& figure_exporter_for(const std::string& path, const std::string& format) {
  if (format.empty()) return path == "-" ? *find_exporter("svg") : figure_exporter_for(path);
  const FigureExporter* chosen = find_exporter(lower(format));
  if (!chosen) throw UsageError("unknown figure format '" + format + "': use " + known_formats(""));
  if (path != "-") {
    const FigureExporter* named = find_exporter(extension_of(path));
    if (named && named != chosen)
      throw UsageError("--format " + chosen->extension + " but '" + path + "' names a ." +
                       named->extension + " file: drop --format or rename the file");
  }
  return *chosen;
}

void write_figure(const FigureExporter& exporter, const Figure& fig, const std::string& path,
                  float scale) {
  if (path != "-") {
    exporter.write(fig, path, scale);
    return;
  }
  const PrivateTempDir dir;
  const std::filesystem::path file = dir.path / ("figure." + exporter.extension);
  exporter.write(fig, file.string(), scale);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("cannot read the figure back from '" + file.string() + "'");
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    if (got > 0 && std::fwrite(buf, 1, got, stdout) != got)
      throw Error(std::string("writing the figure to stdout failed: ") + std::strerror(errno));
  }
  if (std::fflush(stdout) != 0)
    throw Error(std::string("writing the figure to stdout failed: ") + std::strerror(errno));
}

}  // namespace attnscope

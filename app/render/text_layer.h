#pragma once
// Token labels in every script (issue 22): a label is shaped as a unit by Pango
// (app/render/text_shape.h), rasterised once at the screen's pixel density (2×/4× in hi-res
// screenshots, the HiDPI factor in a window: io.DisplayFramebufferScale), uploaded as a GL texture
// and drawn as one image quad, upright or turned 90° (the heatmap's top axis). Textures are cached
// by (text, pixel size, font, bold, colour), least recently used first out past a byte budget; a
// hit is a hash lookup, no Pango call. Pure printable ASCII in the sans font keeps ImGui's atlas
// (the same DejaVu): measure() and draw() always take the same path for the same text.
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "app/render/gl_objects.h"
#include "app/render/text_shape.h"

namespace attnscope {

struct TextOptions {
  bool vertical =
      false;  // turned 90° counter-clockwise (reads bottom to top), like add_text_vertical
  // The point of the label's upright box (0,0 top-left .. 1,1 bottom-right) placed at `pos`; a
  // vertical label turns about it (anchor (0,0): the box's top-left becomes its bottom-left).
  ImVec2 anchor = ImVec2(0, 0);
  FontKind font = FontKind::kSans;
  bool bold = false;
  float max_width = 0;  // ImGui units; a wider label is cut with "…" (0: no limit)
};

// Where a label went (ImGui units) and what Pango made of it, for the --layout file.
struct DrawnText {
  ImVec2 min, max;      // its box on screen (turned for a vertical label)
  int unknown = 0;      // glyphs no font could draw
  bool ink = false;     // its raster has a non-transparent pixel
  bool rtl = false;     // base direction right to left
  bool shaped = false;  // drawn by Pango (false: ImGui's atlas, plain ASCII)
};

class TextLayer {
 public:
  TextLayer() = default;
  TextLayer(const TextLayer&) = delete;
  TextLayer& operator=(const TextLayer&) = delete;

  // Upright width and line height (= size, like ImGui::CalcTextSize) in ImGui units.
  ImVec2 measure(std::string_view text, float size, const TextOptions& options = {});
  DrawnText draw(ImDrawList* draw_list, ImVec2 pos, std::string_view text, float size, ImU32 color,
                 const TextOptions& options = {});
  // Frees every texture; call while the GL context is still current (teardown, atlas rebuilds).
  void clear();
  void set_budget_bytes(std::size_t bytes) { budget_bytes_ = bytes; }

  struct Stats {
    long long hits = 0, misses = 0, measures_shaped = 0;
    double shape_ms = 0;  // time spent in Pango, cairo and the upload
    double upload_ms = 0, slowest_ms = 0;
    std::size_t bytes = 0, textures = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Key {
    std::string text;
    int pixels = 0, max_width = 0;
    std::uint32_t rgb = 0;  // 0xFF000000 | rgb for textures; 0 for measurements
    std::uint8_t font = 0, bold = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  struct Texture {
    Key key;
    ShapedText shape;  // metrics; its rgba is dropped after the upload
    std::unique_ptr<GlTexture> texture;
    std::size_t bytes = 0;
    int frame = 0;  // ImGui frame it was last drawn in
  };
  const Texture& texture_for(std::string_view text, int pixels, const TextOptions& o,
                             std::uint32_t rgb);
  const ShapedText& metrics_for(std::string_view text, int pixels, const TextOptions& o);

  std::list<Texture> lru_;  // most recently drawn first
  std::unordered_map<Key, std::list<Texture>::iterator, KeyHash> textures_;
  std::unordered_map<Key, ShapedText, KeyHash> metrics_;
  Key probe_;  // reused for look-ups, so a hit allocates nothing
  std::size_t budget_bytes_ = 48u << 20;
  Stats stats_;
};

// The one layer the views share (UI thread).
TextLayer& text_layer();

// True when ImGui's atlas draws `text` as Pango would: printable ASCII only.
bool plain_ascii(std::string_view text);

// A line of text as an ImGui item (like ImGui::TextUnformatted), shaped: titles that quote tokens.
// Its base direction is left to right (the UI's sentences are English).
void shaped_text(std::string_view text, ImU32 color);

// A label's entry in the --layout file: {"i", "text", "box": [x, y, w, h] in screenshot pixels,
// "unknown", "ink", "rtl", "shaped"}.
nlohmann::json label_json(int index, const std::string& text, const DrawnText& drawn,
                          float pixel_scale);

// Screen pixels per ImGui unit this frame: S in an S× screenshot, the HiDPI factor in a window.
float pixel_density();

}  // namespace attnscope

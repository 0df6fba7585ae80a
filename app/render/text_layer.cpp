#include "app/render/text_layer.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "app/ui/imgui_compat.h"

namespace attnscope {

float pixel_density() {
  return std::clamp(ImGui::GetIO().DisplayFramebufferScale.x, 1.0f, 8.0f);
}

namespace {
float snap_to_pixel(float v, float s) {
  return std::round(v * s) / s;
}
// ImU32 is 0xAABBGGRR; shape_text takes 0xRRGGBB.
std::uint32_t rgb_of(ImU32 c) {
  return ((c & 0xFF) << 16) | (c & 0xFF00) | ((c >> 16) & 0xFF);
}
double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}
// Plain ASCII in the sans font that fits: ImGui's atlas draws it (sets its width).
bool imgui_path(std::string_view text, float size, const TextOptions& o, float& width) {
  if (o.font != FontKind::kSans || o.bold || !plain_ascii(text)) return false;
  width = ImGui::GetFont()
              ->CalcTextSizeA(size, FLT_MAX, 0.0f, text.data(), text.data() + text.size())
              .x;
  return o.max_width <= 0 || width <= o.max_width;
}
}  // namespace

bool plain_ascii(std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7E) return false;  // char may be signed: bytes >= 0x80 are negative
  return true;
}

std::size_t TextLayer::KeyHash::operator()(const Key& k) const {
  std::size_t h = std::hash<std::string>{}(k.text);
  h ^= (static_cast<std::size_t>(k.pixels) * 0x9E3779B97F4A7C15ull) + (h << 6) + (h >> 2);
  h ^= (static_cast<std::size_t>(k.rgb) << 20) ^ (static_cast<std::size_t>(k.max_width) << 4) ^
       (static_cast<std::size_t>(k.font) << 1) ^ k.bold;
  return h;
}

const ShapedText& TextLayer::metrics_for(std::string_view text, int pixels, const TextOptions& o) {
  probe_.text.assign(text.data(), text.size());
  probe_.pixels = pixels;
  probe_.max_width =
      o.max_width > 0 ? std::max(1, static_cast<int>(o.max_width * pixel_density())) : 0;
  probe_.rgb = 0;
  probe_.font = static_cast<std::uint8_t>(o.font), probe_.bold = o.bold;
  if (auto it = metrics_.find(probe_); it != metrics_.end()) return it->second;
  if (metrics_.size() > 65536) metrics_.clear();  // cheap to remeasure; keeps memory bounded
  const auto t = std::chrono::steady_clock::now();
  ShapedText shape =
      shape_text({text, pixels, o.font, o.bold, probe_.max_width}, /*rasterise=*/false);
  const double ms = ms_since(t);
  stats_.shape_ms += ms, stats_.slowest_ms = std::max(stats_.slowest_ms, ms);
  ++stats_.measures_shaped;
  return metrics_.emplace(probe_, std::move(shape)).first->second;
}

const TextLayer::Texture& TextLayer::texture_for(std::string_view text, int pixels,
                                                 const TextOptions& o, std::uint32_t rgb) {
  probe_.text.assign(text.data(), text.size());
  probe_.pixels = pixels;
  probe_.max_width =
      o.max_width > 0 ? std::max(1, static_cast<int>(o.max_width * pixel_density())) : 0;
  probe_.rgb = 0xFF000000u | rgb;
  probe_.font = static_cast<std::uint8_t>(o.font), probe_.bold = o.bold;
  const int frame = ImGui::GetFrameCount();
  if (auto it = textures_.find(probe_); it != textures_.end()) {
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second);  // most recent first; iterators stay valid
    it->second->frame = frame;
    return *it->second;
  }
  ++stats_.misses;
  const auto t = std::chrono::steady_clock::now();
  Texture entry;
  entry.key = probe_;
  entry.frame = frame;
  entry.shape = shape_text({text, pixels, o.font, o.bold, probe_.max_width}, true, rgb);
  const double pango_ms = ms_since(t);
  stats_.slowest_ms = std::max(stats_.slowest_ms, pango_ms);
  const auto upload = std::chrono::steady_clock::now();
  entry.texture = std::make_unique<GlTexture>();
  entry.texture->allocate(entry.shape.image_w, entry.shape.image_h, GL_RGBA8, GL_RGBA,
                          GL_UNSIGNED_BYTE, entry.shape.rgba.data(), GL_LINEAR);
  entry.shape.rgba = {};
  stats_.upload_ms += ms_since(upload);
  entry.bytes = static_cast<std::size_t>(entry.shape.image_w) * entry.shape.image_h * 4 +
                entry.key.text.size() + sizeof(Texture);
  stats_.shape_ms += ms_since(t);
  stats_.bytes += entry.bytes;
  lru_.push_front(std::move(entry));
  textures_.emplace(lru_.front().key, lru_.begin());
  // Evict the least recently drawn, never one drawn this frame: ImGui renders it after us.
  while (stats_.bytes > budget_bytes_ && !lru_.empty() && lru_.back().frame != frame) {
    stats_.bytes -= lru_.back().bytes;
    textures_.erase(lru_.back().key);
    lru_.pop_back();
  }
  stats_.textures = lru_.size();
  return lru_.front();
}

void TextLayer::clear() {
  // ATTNSCOPE_TEXT_STATS=1: what the labels cost this run (measured for issue 22).
  if (std::getenv("ATTNSCOPE_TEXT_STATS") && (stats_.misses || stats_.measures_shaped))
    std::fprintf(
        stderr,
        "text layer: %lld hits, %lld textures made, %lld measured by Pango, %.2f ms in "
        "Pango/cairo/upload (%.3f ms a new label; uploads %.2f ms; slowest call %.2f ms: font "
        "loading), %zu textures, %zu bytes\n",
        stats_.hits, stats_.misses, stats_.measures_shaped, stats_.shape_ms,
        stats_.shape_ms / static_cast<double>(stats_.misses + stats_.measures_shaped),
        stats_.upload_ms, stats_.slowest_ms, stats_.textures, stats_.bytes);
  textures_.clear();
  lru_.clear();  // GlTexture's destructor deletes the GL name
  metrics_.clear();
  stats_.bytes = stats_.textures = 0;
}

ImVec2 TextLayer::measure(std::string_view text, float size, const TextOptions& o) {
  if (float w = 0; imgui_path(text, size, o, w)) return ImVec2(w, size);
  const float s = pixel_density();
  const int pixels = std::max(1, static_cast<int>(std::lround(size * s)));
  return ImVec2(static_cast<float>(metrics_for(text, pixels, o).width) / s, size);
}

DrawnText TextLayer::draw(ImDrawList* dl, ImVec2 pos, std::string_view text, float size,
                          ImU32 color, const TextOptions& o) {
  const float s = pixel_density();
  const ImVec2 box = measure(text, size, o);
  float ascii_width = 0;
  const bool by_imgui = imgui_path(text, size, o, ascii_width);
  // Upright coordinates relative to the pivot `pos`; a vertical label maps (dx, dy) to
  // (pos.x + dy, pos.y − dx), a 90° turn counter-clockwise.
  const ImVec2 pivot(snap_to_pixel(pos.x, s), snap_to_pixel(pos.y, s));
  const float bx = snap_to_pixel(-o.anchor.x * box.x, s),
              by = snap_to_pixel(-o.anchor.y * box.y, s);
  const auto place = [&](float dx, float dy) {
    return o.vertical ? ImVec2(pivot.x + dy, pivot.y - dx) : ImVec2(pivot.x + dx, pivot.y + dy);
  };
  DrawnText out;
  const ImVec2 c0 = place(bx, by), c1 = place(bx + box.x, by + box.y);
  out.min = ImVec2(std::min(c0.x, c1.x), std::min(c0.y, c1.y));
  out.max = ImVec2(std::max(c0.x, c1.x), std::max(c0.y, c1.y));

  if (by_imgui) {
    out.ink = text.find_first_not_of(' ') != std::string_view::npos;
    const int first = dl->VtxBuffer.Size;
    if (o.vertical) {  // ImGui culls glyphs before we turn them: open the clip rect meanwhile
      const ImVec2 display = ImGui::GetIO().DisplaySize;
      dl->PushClipRect(ImVec2(-display.x, -display.y), ImVec2(2 * display.x, 2 * display.y));
    }
    dl->AddText(ImGui::GetFont(), size, ImVec2(pivot.x + bx, pivot.y + by), color, text.data(),
                text.data() + text.size());
    if (o.vertical) {
      for (int i = first; i < dl->VtxBuffer.Size; ++i) {
        ImVec2& p = dl->VtxBuffer[i].pos;
        p = place(p.x - pivot.x, p.y - pivot.y);
      }
      dl->PopClipRect();
    }
    return out;
  }

  const int pixels = std::max(1, static_cast<int>(std::lround(size * s)));
  const Texture& t = texture_for(text, pixels, o, rgb_of(color));
  const ShapedText& sh = t.shape;
  out.shaped = true;
  out.unknown = sh.unknown, out.ink = sh.ink, out.rtl = sh.rtl;
  if (!sh.ink) return out;
  const float ix = bx + sh.image_x / s, iy = by + sh.image_y / s;
  const float iw = sh.image_w / s, ih = sh.image_h / s;
  const ImTextureID id = imgui_compat::texture_id(t.texture->id());
  const ImU32 tint = IM_COL32(255, 255, 255, (color >> IM_COL32_A_SHIFT) & 0xFF);
  dl->AddImageQuad(id, place(ix, iy), place(ix + iw, iy), place(ix + iw, iy + ih),
                   place(ix, iy + ih), ImVec2(0, 0), ImVec2(1, 0), ImVec2(1, 1), ImVec2(0, 1),
                   tint);
  return out;
}

TextLayer& text_layer() {
  // Never destroyed: its textures must go while GL is still there (clear() at teardown), not at
  // exit after the context has gone.
  static TextLayer* layer = new TextLayer();
  return *layer;
}

void shaped_text(std::string_view text_in, ImU32 color) {
  // An English UI sentence quoting a token: a left-to-right mark first keeps the line's base
  // direction LTR (an Arabic word inside still runs right to left), so numbers stay in place.
  std::string text = "\xE2\x80\x8E";
  text.append(text_in);
  const float size = ImGui::GetFontSize();
  const ImVec2 at = ImGui::GetCursorScreenPos(), box = text_layer().measure(text, size);
  ImGui::Dummy(ImVec2(box.x, ImGui::GetTextLineHeight()));
  if (ImGui::IsItemVisible()) text_layer().draw(ImGui::GetWindowDrawList(), at, text, size, color);
}

nlohmann::json label_json(int index, const std::string& text, const DrawnText& d, float s) {
  return {{"i", index},
          {"text", text},
          {"box", {d.min.x * s, d.min.y * s, (d.max.x - d.min.x) * s, (d.max.y - d.min.y) * s}},
          {"unknown", d.unknown},
          {"ink", d.ink},
          {"rtl", d.rtl},
          {"shaped", d.shaped}};
}

}  // namespace attnscope

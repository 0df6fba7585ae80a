#pragma once
// The one-line sentence box (explorer and lesson), shaped in every state (issue 22). Dear ImGui's
// InputText draws each code point's glyph in logical order: Arabic unjoined, Hebrew and Arabic
// left to right, Devanagari marks apart. So ImGui edits (keys, clipboard, undo, the proxies of
// app/ui/imgui_text.h) and this box covers ImGui's glyphs with the Pango-shaped line
// (app/render/text_layer.h): idle, cut with "…" at the box's end; while editing, the whole line
// scrolled to keep the caret in view, with the caret and the selection placed on the shaped line
// (the end of a right-to-left text is on its left) and clicks and drags mapped back through it.
// Plain ASCII and an empty box are left to ImGui (the same glyphs, and its hint).
#include <string>

#include <imgui.h>
#include <nlohmann/json.hpp>

namespace attnscope {

// What the box showed this frame (ImGui units), for the --layout file.
struct SentenceBoxDrawn {
  ImVec2 min, max;                 // the box
  bool editing = false;            // it has the keyboard
  bool shaped = false;             // the text is drawn by Pango over ImGui's glyphs
  float text_x0 = 0, text_x1 = 0;  // the shaped line's left and right ends on screen (shaped)
  float caret_x = -1;              // the caret on screen (editing and shaped), else -1
  int caret = -1;                  // its index in code points (editing), else -1
};

// input_text_with_hint (app/ui/imgui_text.h), drawn shaped. Returns true when the text changed.
bool sentence_box(const char* id, const char* hint, std::string& utf8,
                  SentenceBoxDrawn* drawn = nullptr);

// The box's entry in the --layout file: {"x", "y", "w", "h", "editing", "shaped", "text_x0",
// "text_x1", "caret_x", "caret"}, positions in screenshot pixels.
nlohmann::json sentence_box_json(const SentenceBoxDrawn& drawn, float pixel_scale);

}  // namespace attnscope

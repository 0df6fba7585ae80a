#pragma once
// Drawing helpers shared by the views: token labels, rotated text, colormap colors, weight ranges.
#include <string>

#include <imgui.h>

#include "core/text/token.h"
#include "core/trace/trace.h"
#include "core/util/matrix.h"

namespace attnscope {

// Token labels: token_label(trace, i, max_chars) and bytes_label (core/text/token_label.h via
// core/trace/trace.h) — the one label function of the views, figures and CSV.

// Text drawn rotated 90° counter-clockwise (reads bottom to top) with its baseline start at
// `bottom_left`: the glyphs occupy x in [bottom_left.x, +font size], y in [−width, bottom_left.y].
void add_text_vertical(ImDrawList* draw_list, ImVec2 bottom_left, ImU32 color, const char* text);

// An error or status message, wrapped at the window's edge and cut to `max_bytes` ("…" when cut).
// Messages quote paths and files: uncut, one ImGui text call for 16k characters needs more than
// the 65,536 vertices Debian's prebuilt Dear ImGui (16-bit ImDrawIdx) can index, and it aborts.
void text_wrapped_message(const std::string& text, ImU32 color, std::size_t max_bytes = 600);
// The same cut for a one-line message (status bar).
std::string message_excerpt(const std::string& text, std::size_t max_bytes = 300);

// The colormap color of weight w mapped over [vmin, vmax].
ImU32 colormap_color(int colormap, float w, float vmin, float vmax, float alpha = 1.0f);
// Black or white, whichever reads better on top of colormap_color(...).
ImU32 text_color_on(int colormap, float w, float vmin, float vmax);

struct WeightRange {
  float vmin = 0.0f, vmax = 1.0f;
};
// 0..1 when `fixed`, else 0..max(weights) (1 when all zero): small weights stay distinguishable.
WeightRange weight_range(const Matrix& weights, bool fixed);

// The idioms every view repeats (like Tracy's TracyImGui.hpp), so a view states intent in one line.
ImU32 with_alpha(ImU32 color, float alpha);         // the same colour at opacity `alpha` (0..1)
void text_dim(const char* fmt, ...) IM_FMTARGS(1);  // a line in the theme's dim text colour
void section_title(const char* title);              // accent-coloured title and a separator
void help_tooltip(const char* text);                // tooltip on the last item while hovered
// A square colour swatch that toggles `on` when clicked (filled when on, outlined when off);
// returns true when clicked.
bool color_swatch(const char* id, ImU32 color, bool& on, float size);

// `text` cut to fit `width` (ImGui units, the current font) with "…" at the end; whole when it
// fits. Cuts between code points.
std::string fit_text(const std::string& text, float width);

// A weight (or any value) with `decimals` decimals, never "-0.00": a value that rounds to zero
// prints as zero, whatever its sign. Returns `buf`.
const char* format_weight(char* buf, std::size_t size, float value, int decimals);

// Rounds to whole screen pixels at the screenshot scale so cells have crisp, testable edges.
float snap(float v, float pixel_scale);

}  // namespace attnscope

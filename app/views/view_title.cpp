#include "app/views/view_title.h"

#include <algorithm>

#include "app/ui/imgui_text.h"
#include "app/views/shown_matrix.h"

namespace attnscope {

std::vector<std::string> text_title(const std::string& title, ImU32 color, nlohmann::json* layout,
                                    int slot, float pixel_scale) {
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  const std::vector<std::string> lines = wrap_title(title, width, [](const std::string& s) {
    return ImGui::CalcTextSize(to_imgui(s).c_str()).x;
  });
  const ImVec2 start = ImGui::GetCursorScreenPos();
  float widest = 0;
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  for (const std::string& line : lines) {
    const std::string shown = to_imgui(line);
    ImGui::TextUnformatted(shown.c_str());
    widest = std::max(widest, ImGui::GetItemRectSize().x);
  }
  ImGui::PopStyleColor();
  if (layout) {
    const float s = pixel_scale, bottom = ImGui::GetCursorScreenPos().y;
    layout->push_back({{"view", "title"},
                       {"slot", slot},
                       {"text", title},
                       {"lines", lines},
                       {"x", start.x * s},
                       {"y", start.y * s},
                       {"w", widest * s},
                       {"h", (bottom - start.y) * s},
                       {"avail_w", width * s}});
  }
  return lines;
}

}  // namespace attnscope

#include "app/views/status_bar.h"
#include "app/views/draw_util.h"

#include <imgui.h>

#include "app/ui/imgui_text.h"
#include "app/ui/theme.h"

namespace attnscope {

void StatusBar::Draw(const App& app, float frame_ms, float height) {
  const AppState& st = app.state;
  const ThemeColors& colors = theme_colors();
  const ImVec4 dim = ImGui::ColorConvertU32ToFloat4(colors.text_dim);
  ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x, vp->Pos.y + vp->Size.y - height));
  ImGui::SetNextWindowSize(ImVec2(vp->Size.x, height));
  ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                           ImGuiWindowFlags_NoSavedSettings |
                           ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(8, 3));
  ImGui::Begin("##status", nullptr, flags);
  if (st.model) {
    const ModelInfo& info = st.model_info;
    ImGui::Text("model %s (%s, %d\xC3\x97%d)", info.name.c_str(), info.kind.c_str(), info.layers,
                info.heads);
  } else {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.error), "no model");
  }
  ImGui::SameLine(0, 24);
  ImGui::Text("backend %s", st.backend ? st.backend->name().c_str() : "?");
  if (!st.backend_note.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors.warning), "(%s)",
                       st.backend_note.c_str());
  }
  for (int s = 0; s < kSlots; ++s) {
    if (s == 1 && !st.show_second) break;
    const auto& r = st.slots[s].result;
    ImGui::SameLine(0, 24);
    if (r && r->trace)
      ImGui::Text("%d: %d tokens, %.1f ms", s + 1, static_cast<int>(r->trace->tokens.size()),
                  r->trace->compute_ms);
    else
      ImGui::TextColored(dim, "%d: \xE2\x80\x94", s + 1);
  }
  ImGui::SameLine(0, 24);
  ImGui::TextColored(dim, "frame %.1f ms%s", frame_ms,
                     app.computing() ? "  computing\xE2\x80\xA6" : "");
  if (!st.message.empty()) {
    ImGui::SameLine(0, 24);
    ImGui::TextColored(
        ImGui::ColorConvertU32ToFloat4(st.message_is_error ? colors.error : colors.accent), "%s",
        to_imgui(message_excerpt(st.message)).c_str());
  }
  ImGui::End();
  ImGui::PopStyleVar();
}

}  // namespace attnscope

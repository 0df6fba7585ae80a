#include "app/views/intervention_controls.h"

#include <algorithm>

#include <imgui.h>

#include "app/ui/theme.h"
#include "app/views/draw_util.h"
#include "app/views/next_token_view.h"

namespace attnscope {

void DrawInterventionControls(App& app) {
  AppState& st = app.state;
  if (!st.model || !intervenable(*st.model)) return;
  InterventionState& is = st.interventions;
  const bool aggregate = !st.shown.aggregate.empty();
  bool off = std::find(is.ablated.begin(), is.ablated.end(), HeadRef{st.layer, st.head}) !=
             is.ablated.end();
  char label[64];
  std::snprintf(label, sizeof label, "switch off L%d.H%d", st.layer, st.head);
  ImGui::BeginDisabled(aggregate);
  if (ImGui::Checkbox(label, &off)) app.toggle_ablation(st.layer, st.head);
  ImGui::EndDisabled();
  help_tooltip(
      "the head's weights\xC2\xB7V become 0 (or their mean) at every position; every view and "
      "the Next token tab show the result. Alt+click a head in the model view does the same");
  int mode = is.mode == AblationMode::kMean ? 1 : 0;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.5f);
  if (ImGui::Combo("##ablate_mode", &mode, "zero\0mean\0")) {
    is.mode = mode == 1 ? AblationMode::kMean : AblationMode::kZero;
    app.submit_all();
  }
  help_tooltip("zero: the head's output is 0; mean: its mean over this text's positions");
  int cut = 0;
  for (int s = 0; s < kSlots; ++s) cut += static_cast<int>(st.slots[s].knockouts.size());
  if (is.ablated.empty() && cut == 0) {
    text_dim("Ctrl+click a heatmap cell to cut that edge");
    return;
  }
  Interventions all;
  all.ablate = is.ablated;
  all.ablate_mode = is.mode;
  for (int s = 0; s < kSlots; ++s)
    all.knockout.insert(all.knockout.end(), st.slots[s].knockouts.begin(),
                        st.slots[s].knockouts.end());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(theme_colors().error));
  ImGui::TextWrapped("%s", interventions_summary(all, 8).c_str());
  ImGui::PopStyleColor();
  if (ImGui::SmallButton("undo all")) app.clear_interventions();
}

}  // namespace attnscope

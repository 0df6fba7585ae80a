#include "app/views/shown_controls.h"

#include <algorithm>
#include <cmath>

#include <imgui.h>

#include "app/views/draw_util.h"
#include "core/trace/aggregate.h"

namespace attnscope {

void DrawShownControls(AppState& st) {
  ShownOptions& o = st.shown;
  section_title("Show");
  ImGui::SetNextItemWidth(-1);
  const std::string current =
      o.aggregate.empty() ? std::string("one head") : head_aggregate(o.aggregate).description;
  if (ImGui::BeginCombo("##aggregate", current.c_str())) {
    if (ImGui::Selectable("one head", o.aggregate.empty())) o.aggregate.clear();
    for (const HeadAggregate& a : head_aggregates())
      if (ImGui::Selectable(a.description.c_str(), o.aggregate == a.name)) o.aggregate = a.name;
    ImGui::EndCombo();
  }
  help_tooltip("what every view shows: the chosen head, or a combination of heads and layers");
  ImGui::Checkbox("hide first token", &o.hide_first);
  help_tooltip(
      "drop the first token as a key and renormalise each row: it often soaks up most of the "
      "attention (an attention sink) and washes out every map");
  ImGui::Checkbox("hide special tokens", &o.hide_special);
  help_tooltip("drop [CLS], [SEP], <|endoftext|> … as keys and renormalise each row");
  // The models that know their values give each key's ‖v_j·W_O,h‖ (AttentionTrace::value_norms).
  const auto& result = st.slots[0].result;
  const bool has_values = result && result->trace && !result->trace->value_norms.empty();
  ImGui::BeginDisabled(!has_values && !o.value_weighted);
  ImGui::Checkbox("weighted by \xE2\x80\x96value\xE2\x80\x96", &o.value_weighted);
  ImGui::EndDisabled();
  help_tooltip(has_values
                   ? "each weight times the size of what its key moves through the head "
                     "(\xE2\x80\x96v_j W_O,h\xE2\x80\x96), rows renormalised (Kobayashi et al. "
                     "2020): where the head takes something from, not only where it looks. Every "
                     "view, summary and export shows it"
                   : "this model (or stored trace) does not give the size of its values");
  ImGui::Checkbox("log colours", &o.log_scale);
  help_tooltip("colours follow log10(weight), so small weights stay visible next to a sink");
  if (o.log_scale) {
    ImGui::SameLine();
    int exponent = static_cast<int>(std::lround(std::log10(std::max(o.log_floor, 1e-9f))));
    ImGui::SetNextItemWidth(-1);
    if (ImGui::SliderInt("##floor", &exponent, -6, -1, "floor 1e%d"))
      o.log_floor = std::pow(10.0f, static_cast<float>(std::clamp(exponent, -6, -1)));
    help_tooltip("weights below the floor get the colormap's first colour");
  }
  int combine = o.query_sum ? 1 : 0;
  ImGui::TextUnformatted("several queries:");
  ImGui::SameLine();
  if (ImGui::RadioButton("mean", &combine, 0)) o.query_sum = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("sum", &combine, 1)) o.query_sum = true;
  help_tooltip("shift-click or drag in a sentence to select several query tokens");
}

}  // namespace attnscope

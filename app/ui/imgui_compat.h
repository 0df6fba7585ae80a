#pragma once
// The Dear ImGui API differences our code meets between Debian 12's 1.86 (CI), Debian 13's and
// Ubuntu 24.04's 1.90.1 and upstream's 1.91–1.92: one spelling in the app, chosen here by
// IMGUI_VERSION_NUM (or by the type itself where that is surer). Only what the app uses, each found
// by compiling against that version's headers (scripts/distro_check.sh builds on Debian 13).
#include <imgui.h>
#include <imgui_internal.h>  // SetItemKeyOwner

#include <cstdint>
#include <type_traits>

namespace attnscope::imgui_compat {

// Keys. 1.86 keeps a table from ImGuiKey_ to the backend's own key codes (io.KeyMap) and
// IsKeyPressed takes the backend's code (GetKeyIndex maps); 1.87 made ImGuiKey the key itself and
// 1.91.5 removed GetKeyIndex. ImGuiKey_KeyPadEnter, renamed ImGuiKey_KeypadEnter in 1.87, lost its
// old name in 1.90.1.
inline bool key_pressed(ImGuiKey key, bool repeat = true) {
#if IMGUI_VERSION_NUM < 18700
  return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), repeat);
#else
  return ImGui::IsKeyPressed(key, repeat);
#endif
}
#if IMGUI_VERSION_NUM < 18700
inline constexpr ImGuiKey kKeypadEnter = ImGuiKey_KeyPadEnter;
#else
inline constexpr ImGuiKey kKeypadEnter = ImGuiKey_KeypadEnter;
#endif

// The hovered item takes the mouse wheel (the window does not scroll with it): 1.89 replaced
// SetItemUsingMouseWheel with key ownership of the wheel's axis, and 1.91 removed the old name.
inline void item_takes_mouse_wheel() {
#if IMGUI_VERSION_NUM < 18900
  ImGui::SetItemUsingMouseWheel();
#else
  ImGui::SetItemKeyOwner(ImGuiKey_MouseWheelY);
#endif
}

// The size a font was added at: ImFont::FontSize, LegacySize from 1.92 (where a font is drawn at
// any size and has no single one).
inline float font_size(const ImFont* font) {
#if IMGUI_VERSION_NUM >= 19200
  return font->LegacySize;
#else
  return font->FontSize;
#endif
}

// An OpenGL texture name as ImGui's texture id: a void* until 1.91.3, an ImU64 from 1.91.4 (and
// the ImTextureRef that 1.92's AddImage takes is made from it implicitly).
template <class Id = ImTextureID>
Id texture_id(unsigned gl_texture) {
  if constexpr (std::is_pointer_v<Id>)
    return reinterpret_cast<Id>(static_cast<std::uintptr_t>(gl_texture));
  else
    return static_cast<Id>(gl_texture);
}

}  // namespace attnscope::imgui_compat

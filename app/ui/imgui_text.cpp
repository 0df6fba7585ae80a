#include "app/ui/imgui_text.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <imgui.h>
#include <imgui_stdlib.h>

namespace attnscope {

namespace {
constexpr unsigned kPuaFirst = 0xE000, kPuaLast = 0xF8FF;

bool needs_proxy(unsigned cp) {
  return cp > 0xFFFF || (cp >= kPuaFirst && cp <= kPuaLast);
}

struct ProxyTable {
  std::unordered_map<unsigned, unsigned> to_proxy, to_real;
  std::vector<std::pair<unsigned, unsigned>> pairs;
};
ProxyTable& table() {
  static ProxyTable t;
  return t;
}
}  // namespace

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

unsigned proxy_for(unsigned cp) {
  if (!needs_proxy(cp)) return cp;
  ProxyTable& t = table();
  if (auto it = t.to_proxy.find(cp); it != t.to_proxy.end()) return it->second;
  const unsigned proxy = kPuaFirst + static_cast<unsigned>(t.pairs.size());
  if (proxy > kPuaLast) return 0xFFFD;
  t.to_proxy.emplace(cp, proxy);
  t.to_real.emplace(proxy, cp);
  t.pairs.emplace_back(proxy, cp);
  return proxy;
}

namespace {
struct TypedProxy {
  unsigned proxy;
  int frame;  // ImGui's frame count when typed: a box that was not active then does not take it
};
std::vector<TypedProxy>& typed_proxies() {
  static std::vector<TypedProxy> q;
  return q;
}

// The box whose InputText runs now (its callback has no id), its caret, and a caret asked for.
unsigned current_box = 0;
TextBoxCaret last_caret;
struct CaretRequest {
  unsigned id = 0;
  int cursor = 0, anchor = 0;
  int frame = 0;  // asked in this frame; a box that did not take it in the next one never does
};
CaretRequest caret_request;

void record_caret(ImGuiInputTextCallbackData* data) {
  const std::string_view buf(data->Buf, static_cast<std::size_t>(data->BufTextLen));
  last_caret.id = current_box;
  last_caret.frame = ImGui::GetFrameCount();
  last_caret.cursor = code_points_before(buf, static_cast<std::size_t>(data->CursorPos));
  last_caret.select_start = code_points_before(buf, static_cast<std::size_t>(data->SelectionStart));
  last_caret.select_end = code_points_before(buf, static_cast<std::size_t>(data->SelectionEnd));
}

int insert_typed_proxies(ImGuiInputTextCallbackData* data);

int box_callback(ImGuiInputTextCallbackData* data) {
  if (caret_request.id != 0 && caret_request.frame < ImGui::GetFrameCount() - 1) caret_request = {};
  if (caret_request.id != 0 && caret_request.id == current_box) {
    const std::string_view buf(data->Buf, static_cast<std::size_t>(data->BufTextLen));
    data->CursorPos = static_cast<int>(byte_of_code_point(buf, caret_request.cursor));
    data->SelectionStart = static_cast<int>(byte_of_code_point(buf, caret_request.anchor));
    data->SelectionEnd = data->CursorPos;
    caret_request = {};
  }
  insert_typed_proxies(data);
  record_caret(data);
  return 0;
}

int insert_typed_proxies(ImGuiInputTextCallbackData* data) {
  auto& q = typed_proxies();
  if (q.empty()) return 0;
  std::string text;
  for (const TypedProxy& t : q)
    if (t.frame >= ImGui::GetFrameCount() - 1) append_utf8(text, t.proxy);
  q.clear();
  if (text.empty()) return 0;
  if (data->HasSelection()) {  // typing replaces the selection
    const int from = std::min(data->SelectionStart, data->SelectionEnd);
    data->DeleteChars(from, std::abs(data->SelectionEnd - data->SelectionStart));
    data->CursorPos = from;
  }
  data->InsertChars(data->CursorPos, text.data(), text.data() + text.size());
  data->SelectionStart = data->SelectionEnd = data->CursorPos;
  return 0;
}
}  // namespace

bool queue_typed_character(unsigned cp) {
  auto& q = typed_proxies();
  // What the active box did not take in the frame after it was typed is dropped.
  const int now = ImGui::GetFrameCount();
  q.erase(std::remove_if(q.begin(), q.end(), [&](const TypedProxy& t) { return t.frame < now; }),
          q.end());
  // After a queued proxy, the characters of the same frame queue too, so they keep their order.
  if (!needs_proxy(cp) && q.empty()) return false;
  const unsigned proxy = proxy_for(cp);
  if (proxy != 0xFFFD) q.push_back({proxy, now});
  return true;
}

bool input_pending() {
  // Only what a box may still take (insert_typed_proxies): a character typed while no box had the
  // keyboard is dropped, and must not keep the loop drawing.
  const int now = ImGui::GetFrameCount();
  const auto& q = typed_proxies();
  return std::any_of(q.begin(), q.end(), [&](const TypedProxy& t) { return t.frame >= now - 1; });
}

bool queue_pasted_text(std::string_view utf8) {
  bool any = false;
  for_each_code_point(utf8, [&](unsigned cp, int, bool) { any |= needs_proxy(cp); });
  if (!any) return false;
  auto& q = typed_proxies();
  const int now = ImGui::GetFrameCount();
  for_each_code_point(utf8, [&](unsigned cp, int, bool) {
    const unsigned c = cp == '\n' || cp == '\r' ? ' ' : proxy_for(cp);
    if (c != 0xFFFD || cp == 0xFFFD) q.push_back({c, now});
  });
  return true;
}

const std::vector<std::pair<unsigned, unsigned>>& proxies() {
  return table().pairs;
}

std::string to_imgui(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for_each_code_point(utf8, [&, i = size_t{0}](unsigned cp, int n, bool ok) mutable {
    if (!ok || !needs_proxy(cp))
      out.append(utf8.substr(i, n));
    else
      append_utf8(out, proxy_for(cp));
    i += n;
  });
  return out;
}

std::string from_imgui(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const ProxyTable& t = table();
  for_each_code_point(s, [&, i = size_t{0}](unsigned cp, int n, bool ok) mutable {
    auto it = ok ? t.to_real.find(cp) : t.to_real.end();
    if (it == t.to_real.end())
      out.append(s.substr(i, n));
    else
      append_utf8(out, it->second);
    i += n;
  });
  return out;
}

int code_points_before(std::string_view s, std::size_t bytes) {
  int n = 0;
  for_each_code_point(s.substr(0, std::min(bytes, s.size())), [&](unsigned, int, bool) { ++n; });
  return n;
}

std::size_t byte_of_code_point(std::string_view s, int k) {
  std::size_t at = 0;
  int seen = 0;
  for_each_code_point(s, [&](unsigned, int n, bool) {
    if (seen++ < k) at += static_cast<std::size_t>(n);
  });
  return at;
}

const TextBoxCaret* text_box_caret(unsigned id) {
  return last_caret.id == id && last_caret.frame == ImGui::GetFrameCount() ? &last_caret : nullptr;
}

void set_text_box_caret(unsigned id, int cursor, int anchor) {
  caret_request = {id, std::max(0, cursor), std::max(0, anchor), ImGui::GetFrameCount()};
}

bool input_text_with_hint(const char* id, const char* hint, std::string& utf8) {
  std::string shown = to_imgui(utf8);
  current_box = ImGui::GetID(id);
  const bool changed =
      ImGui::InputTextWithHint(id, hint, &shown, ImGuiInputTextFlags_CallbackAlways, box_callback);
  current_box = 0;
  if (!changed) return false;
  utf8 = from_imgui(shown);
  return true;
}

}  // namespace attnscope

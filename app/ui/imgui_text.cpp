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

bool input_text_with_hint(const char* id, const char* hint, std::string& utf8) {
  std::string shown = to_imgui(utf8);
  if (!ImGui::InputTextWithHint(id, hint, &shown, ImGuiInputTextFlags_CallbackAlways,
                                insert_typed_proxies))
    return false;
  utf8 = from_imgui(shown);
  return true;
}

}  // namespace attnscope

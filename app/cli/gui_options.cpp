#include "app/cli/gui_options.h"

#include <cstdio>

#include "app/testing/gui_script.h"
#include "app/views/controls_panel.h"
#include "core/analysis/value_weighting.h"
#include "core/model/intervention.h"

namespace attnscope {

void add_gui_display_options(CLI::App* app, GuiOptions& gui) {
  app->add_option("--screenshot", gui.screenshot, "render headless, write this PNG and exit");
  app->add_option("--scale", gui.scale, "screenshot scale")
      ->check(CLI::IsMember({1, 2, 4}))
      ->capture_default_str();
  app->add_option("--frames", gui.frames, "frames rendered before the screenshot")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app->add_option("--layout", gui.layout_file, "testing: write where views were drawn (JSON)")
      ->group("");  // hidden from --help
  app->add_option("--window", gui.window_size, "window size, e.g. 1280x720")
      ->check([](const std::string& v) {
        int w = 0, h = 0;
        char x = 0, extra = 0;
        return std::sscanf(v.c_str(), "%d%c%d%c", &w, &x, &h, &extra) == 3 && x == 'x' &&
                       w >= 320 && h >= 240 && w <= 8192 && h <= 8192
                   ? std::string()
                   : std::string("expected WIDTHxHEIGHT, e.g. 1280x720");
      });
  app->add_option("--export-view", gui.export_view,
                  "testing: export sentence 1's view as the window shows it at exit")
      ->group("");
  app->add_option("--export-view-as", gui.export_view_as,
                  "testing: the view --export-view writes (heatmap, lines, arcs, grid, formula)")
      ->group("");
  app->add_option("--heatmap-view", gui.heatmap_view,
                  "testing: sentence 1's heatmap at ZOOM,ROW,COL[,DROW,DCOL] (pans every frame)")
      ->group("")
      ->check([](const std::string& v) {
        HeatmapScript script;
        return parse_heatmap_script(v, script) ? std::string()
                                               : std::string("expected ZOOM,ROW,COL[,DROW,DCOL]");
      });
  app->add_option("--font-scale", gui.font_scale,
                  "presentation scale of text, labels and strokes, 0.5 to 2.5 (Ctrl +/-)")
      ->check(CLI::Range(kMinFontScale, kMaxFontScale));
  app->add_option_function<std::string>(
         "--focus",
         [&gui](const std::string& v) {
           const auto colon = v.find(':');
           ViewId view;
           parse_view_name(v.substr(0, colon), view);
           gui.focus = view;
           gui.focus_slot = colon == std::string::npos ? 0 : std::stoi(v.substr(colon + 1)) - 1;
         },
         "start with one view filling the window: heatmap, arcs, lines, meaning, formula or "
         "model, optionally of sentence 2 (heatmap:2); F or Esc goes back")
      ->check([](const std::string& v) {
        const auto colon = v.find(':');
        ViewId view;
        const std::string slot = colon == std::string::npos ? "1" : v.substr(colon + 1);
        if (!parse_view_name(v.substr(0, colon), view) || (slot != "1" && slot != "2"))
          return std::string(
              "expected heatmap, arcs, lines, meaning, formula or model, and :1 or :2");
        return std::string();
      });
  app->add_flag("--no-panel", gui.hide_panel, "start with the left panel hidden (Ctrl+B shows it)");
  app->add_option_function<std::string>(
         "--tabs", [&gui](const std::string& v) { parse_view_list(v, gui.tabs); },
         "start with these views' tabs chosen, e.g. lines,formula")
      ->check([](const std::string& v) {
        std::set<ViewId> views;
        const std::string bad = parse_view_list(v, views);
        return bad.empty() ? bad
                           : "unknown view '" + bad + "': expected arcs, lines, meaning or formula";
      });
  app->add_option("--theme", gui.theme, "color theme (light is made for projectors)")
      ->check(CLI::IsMember({"dark", "light"}));
  app->add_option("--weighting", gui.weighting,
                  "raw, or value-norm: every view shows each weight times the size of what its "
                  "key moves through the head, rows renormalised (Show > weighted by ||value||)")
      ->check(CLI::IsMember(weighting_names()));
  const auto usage_check = [](auto parse) {
    return [parse](const std::string& v) {
      try {
        parse(v);
        return std::string();
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
    };
  };
  app->add_option("--ablate", gui.ablate,
                  "start with these heads switched off, e.g. 1.0,3.2 (layer.head, from 0; "
                  "decoders; Alt+click in the model view)")
      ->check(usage_check(parse_head_list));
  app->add_option("--ablate-mode", gui.ablate_mode, "a head switched off gives zero or its mean")
      ->check(CLI::IsMember({"zero", "mean"}));
  app->add_option("--knockout", gui.knockout,
                  "start with these edges of sentence 1 cut, e.g. '2:5>1' (layer 2, every head, "
                  "query 5 to key 1) or '2.3:5>1' (head 3); quote it in a shell (Ctrl+click)")
      ->check(usage_check(parse_knockouts));
  app->add_flag("--no-socket", gui.no_socket,
                "do not accept traces from scripts (the Python package) over this user's socket");
}

}  // namespace attnscope

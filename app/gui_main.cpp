// The window and the frame loop: GLFW + glad + Dear ImGui, the worker-fed views, screenshots at
// 1×/2×/4× through an offscreen framebuffer (text rasterised at that scale), and the headless
// `--screenshot` runs the gui tests drive (their scripted input and the layout file:
// app/testing/gui_script.h).
#include "app/gui_main.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb/stb_image_write.h>

#include "app/app.h"
#include "app/cli/command.h"
#include "app/ipc/window_inbox.h"
#include "app/lesson/lesson_steps.h"
#include "app/lesson/lesson_view.h"
#include "app/render/gl.h"
#include "app/render/gl_objects.h"
#include "app/render/heatmap_renderer.h"
#include "app/render/text_layer.h"
#include "app/session_io.h"
#include "app/testing/gui_script.h"
#include "app/ui/colormap.h"
#include "app/ui/export_view_dialog.h"
#include "app/ui/fonts.h"
#include "app/ui/imgui_text.h"
#include "app/ui/key_bindings.h"
#include "app/ui/main_window.h"
#include "app/ui/settings.h"
#include "app/ui/theme.h"
#include "core/analysis/value_weighting.h"
#include "core/util/error.h"

namespace attnscope {

namespace {

std::string g_glfw_error;
void on_glfw_error(int code, const char* text) {
  g_glfw_error =
      std::string(text ? text : "unknown") + " (GLFW error " + std::to_string(code) + ")";
}

// Key presses since the last frame, recorded by our GLFW callback (ImGui chains to it). ImGui 1.86
// samples key state once per frame, so a press and release inside one slow frame (a quick tap,
// or xdotool) would be lost to IsKeyPressed; shortcuts read this queue instead.
std::vector<KeyPress> g_key_presses;
void on_key(GLFWwindow*, int key, int, int action, int mods) {
  if (action == GLFW_PRESS || action == GLFW_REPEAT) g_key_presses.push_back({key, mods});
}
// Typed characters: ImGui 1.86's 16-bit ImWchar turns a code point above U+FFFF into U+FFFD, so
// ours keeps those from ImGui's callback and queues their proxy for the active text box
// (app/ui/imgui_text.h); the others go on to ImGui.
GLFWcharfun g_imgui_char = nullptr;
void on_char(GLFWwindow* window, unsigned int code_point) {
  if (!queue_typed_character(code_point) && g_imgui_char) g_imgui_char(window, code_point);
}

// The clipboard, through ImGui 1.86's 16-bit characters. Copy: the proxies ImGui holds become
// the code points they stand for. Paste: a text with a code point that needs a proxy (an emoji)
// goes the typed characters' way, in order (InputText's paste drops the Private Use Area), and
// ImGui's own paste gets nothing; other texts paste as ImGui does.
const char* get_clipboard(void* window) {
  static std::string text;
  // A paste in the frame right after another is ImGui's key repeat after a slow frame (the first
  // paste of an emoji rebuilds the font atlas), not the user: a held Ctrl+V repeats only after
  // io.KeyRepeatDelay, many frames later.
  static int last_paste_frame = -10;
  const int frame = ImGui::GetFrameCount();
  const bool repeat = frame == last_paste_frame + 1;
  last_paste_frame = frame;
  if (repeat) return "";
  const char* raw = glfwGetClipboardString(static_cast<GLFWwindow*>(window));
  text = raw ? raw : "";
  return queue_pasted_text(text) ? "" : text.c_str();
}
void set_clipboard(void* window, const char* text) {
  glfwSetClipboardString(static_cast<GLFWwindow*>(window), from_imgui(text ? text : "").c_str());
}

// The strings the frame shows, for the font atlas's glyphs (Fonts::want). A trace's tokens are
// read once per published trace.
struct ShownText {
  std::vector<std::weak_ptr<const AttentionTrace>> traces_seen;  // weak: no address reuse
  void report(const App& app) {
    const AppState& st = app.state;
    for (const SlotState& s : st.slots) {
      Fonts::want(s.text);
      Fonts::want(s.label);
      if (s.result && s.result->trace) {
        const auto& trace = s.result->trace;
        const auto same = [&](const auto& w) {
          return !w.owner_before(trace) && !trace.owner_before(w);
        };
        if (std::any_of(traces_seen.begin(), traces_seen.end(), same)) continue;
        traces_seen.push_back(trace);
        if (traces_seen.size() > 8) traces_seen.erase(traces_seen.begin());
        for (const Token& t : s.result->trace->tokens) Fonts::want(t.text);
      }
    }
    Fonts::want(st.model_info.name);
    Fonts::want(st.model_error);
    Fonts::want(st.message);
    Fonts::want(st.backend_note);
  }
};

// The monitor's content scale (HiDPI: 2 on a 4K screen at 200%), from GLFW at start and its
// change callback (the window moved to another monitor, the desktop's scale changed). The
// environment's ATTNSCOPE_CONTENT_SCALE replaces it (tests: Xvfb always reports 1).
float g_content_scale = 1.0f;
bool g_content_scale_forced = false;
void on_content_scale(GLFWwindow*, float x, float) {
  if (!g_content_scale_forced && x > 0) g_content_scale = std::clamp(x, 0.5f, 4.0f);
}

// The window's last position and size while it was neither maximized nor fullscreen: what is
// remembered for the next run (a maximized window remembers where it was before, and that).
struct NormalGeometry {
  int x = 0, y = 0, w = 0, h = 0;
  bool known = false;
} g_normal;
bool is_normal(GLFWwindow* window) {
  return !glfwGetWindowMonitor(window) && !glfwGetWindowAttrib(window, GLFW_MAXIMIZED) &&
         !glfwGetWindowAttrib(window, GLFW_ICONIFIED);
}
void on_window_pos(GLFWwindow* window, int x, int y) {
  if (is_normal(window)) g_normal.x = x, g_normal.y = y, g_normal.known = true;
}
void on_window_size(GLFWwindow* window, int w, int h) {
  if (is_normal(window) && w > 0 && h > 0) g_normal.w = w, g_normal.h = h;
}
// A remembered position is used only when the window's top-left corner (a title bar's worth of
// it) lies in the work area of a monitor connected now: a monitor unplugged since must not leave
// the window off-screen.
bool on_a_monitor(int x, int y, int w) {
  int count = 0;
  GLFWmonitor** monitors = glfwGetMonitors(&count);
  const int strip_w = std::min(w, 120), strip_h = 40;
  for (int i = 0; i < count; ++i) {
    int mx = 0, my = 0, mw = 0, mh = 0;
    glfwGetMonitorWorkarea(monitors[i], &mx, &my, &mw, &mh);
    if (x >= mx && y >= my && x + strip_w <= mx + mw && y + strip_h <= my + mh) return true;
  }
  return false;
}

// Files and folders dropped on the window since the last frame.
std::vector<std::string> g_dropped;
void on_drop(GLFWwindow*, int count, const char** paths) {
  for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
}

// SIGINT and SIGTERM close the window as its Quit does (the trace socket's file removed, the
// settings saved); the frame loop sees the flag within its idle wait.
volatile std::sig_atomic_t g_quit_signal = 0;
void on_quit_signal(int) {
  g_quit_signal = 1;
}

// A script's trace arrived: the window comes to the front (restored if minimised).
void raise_window(GLFWwindow* window) {
  if (glfwGetWindowAttrib(window, GLFW_ICONIFIED)) glfwRestoreWindow(window);
  glfwShowWindow(window);
  glfwFocusWindow(window);
  glfwRequestWindowAttention(window);
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string timestamped_name(int scale, int n = 1) {
  std::time_t now = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "attnscope-%Y%m%d-%H%M%S", std::localtime(&now));
  return std::string(buf) + (scale > 1 ? "-" + std::to_string(scale) + "x" : "") +
         (n > 1 ? "-" + std::to_string(n) : "") + ".png";
}
// A new screenshot's file in `folder`: the timestamped name, numbered when a file has it (two
// within a second), so a screenshot key never replaces a picture.
std::string new_screenshot_path(const std::filesystem::path& folder, int scale) {
  std::error_code ec;
  std::filesystem::path path = folder / timestamped_name(scale);
  for (int n = 2; std::filesystem::exists(path, ec) && n < 1000; ++n)
    path = folder / timestamped_name(scale, n);
  return path.string();
}

// The rendered frame in `fbo` as a PNG (rows flipped: GL's origin is bottom-left).
void write_png(const std::string& path, int width, int height) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  for (size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque, whatever blending left
  stbi_flip_vertically_on_write(1);
  // Encoded in memory, then written with checked writes: stbi_write_png ignores fwrite's errors,
  // so a full disk would give a truncated PNG and exit 0.
  std::string png;
  auto append = [](void* out, void* data, int size) {
    static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 4, pixels.data(), width * 4))
    throw Error("cannot encode the screenshot '" + path + "'");
  write_output(path, "screenshot", [&](std::ostream& out) { out.write(png.data(), png.size()); });
}

// How large a capture may be: the largest framebuffer side this OpenGL allocates, and a pixel
// budget of attnscope's own. A capture is RGBA8, read back and PNG-encoded in memory; the budget
// is the default headless window at 4x (6400x4000, ~100 MB), and a 16384² capture took ~4 GB
// and half a minute.
struct FramebufferLimit {
  int side;
  long long pixels = 6400LL * 4000;
  std::string why;

  bool fits(long long w, long long h) const { return w <= side && h <= side && w * h <= pixels; }
};
FramebufferLimit framebuffer_limit() {
  GLint texture = 0, renderbuffer = 0, viewport[2] = {0, 0};
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &texture);
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &renderbuffer);
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, viewport);
  FramebufferLimit limit;
  limit.side = 16384;
  for (GLint v : {texture, renderbuffer, viewport[0], viewport[1]})
    if (v > 0) limit.side = std::min(limit.side, static_cast<int>(v));
  limit.why = "at most " + std::to_string(limit.side) + " pixels a side (GL_MAX_TEXTURE_SIZE " +
              std::to_string(texture) + ", GL_MAX_RENDERBUFFER_SIZE " +
              std::to_string(renderbuffer) + ") and " + std::to_string(limit.pixels) +
              " pixels in all";
  return limit;
}

// The largest window (same aspect, at most w x h) whose capture at `scale` fits `limit`.
std::pair<int, int> clamp_window(int w, int h, int scale, const FramebufferLimit& limit) {
  w = std::min(w, limit.side / scale), h = std::min(h, limit.side / scale);
  const double area = static_cast<double>(w) * scale * h * scale;
  if (area > static_cast<double>(limit.pixels)) {
    const double shrink = std::sqrt(static_cast<double>(limit.pixels) / area);
    w = static_cast<int>(w * shrink), h = static_cast<int>(h * shrink);
  }
  return {w, h};
}

struct GlfwSession {
  GLFWwindow* window = nullptr;
  ~GlfwSession() {
    if (window) {
      text_layer().clear();  // its label textures go while the context is still current
      ImGui_ImplOpenGL3_Shutdown();
      ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext();
      glfwDestroyWindow(window);
    }
    glfwTerminate();
  }
};

// What the command line, the settings and a session give the app at start (options given on
// the command line win over a session). Returns 1 when a headless run's session failed to open.
int apply_start_options(const GuiOptions& options, const Settings& settings,
                        const std::string& settings_problem, bool headless, App& app,
                        UiPrefs& prefs, MainWindow& main_window) {
  int exit_code = 0;
  app.state.colormap = colormap_index(settings.colormap);
  app.state.fixed_range = settings.fixed_range;
  if (options.text) app.state.slots[0].text = *options.text, app.state.slots[0].label.clear();
  if (options.text2) app.state.slots[1].text = *options.text2, app.state.slots[1].label.clear();
  if (options.target) app.state.slots[0].target = *options.target;
  if (options.text || options.text2)
    for (SlotState& s : app.state.slots) s.preferred_word.clear();
  // One text asked for shows one sentence (its heatmap takes the whole window); an empty --text2
  // hides the second too. The built-in example is a pair.
  if (options.text2)
    app.state.show_second = !options.text2->empty();
  else if (options.text)
    app.state.show_second = false;
  app.choose_backend(options.backend);
  if (options.model_instance)
    app.use_model(options.model_instance, options.model);
  else
    app.open_model(options.model);
  if (!settings_problem.empty())
    app.state.message = settings_problem, app.state.message_is_error = true;

  prefs.left_panel = settings.left_panel;
  main_window.sessions.recent = settings.recent_sessions;
  // A session replaces the defaults; options given on the command line win over it.
  if (!options.session.empty()) {
    main_window.sessions.Open(app, prefs, options.session);
    if (app.state.session_path.empty()) {
      std::fprintf(stderr, "attnscope: %s\n", app.state.message.c_str());
      if (headless) exit_code = 1;
    } else {
      if (options.text) app.set_text(0, *options.text);
      if (options.text2) app.set_text(1, *options.text2);
      if (!options.theme.empty()) prefs.light_theme = options.theme == "light";
    }
  }
  if (options.font_scale > 0) prefs.font_scale = options.font_scale;
  if (!options.weighting.empty())
    app.state.shown.value_weighted = options.weighting == kValueNormWeighting;
  if (options.focus) prefs.focus_slot = options.focus_slot, prefs.focus_view = *options.focus;
  // Checked against the model once it loaded (App::update); the syntax was checked by CLI11.
  if (!options.ablate.empty()) app.state.interventions.ablated = parse_head_list(options.ablate);
  if (options.ablate_mode == "mean") app.state.interventions.mode = AblationMode::kMean;
  if (!options.knockout.empty()) app.state.slots[0].knockouts = parse_knockouts(options.knockout);
  if (options.hide_panel) prefs.left_panel = false;
  if (!options.tabs.empty()) prefs.tabs = options.tabs, prefs.select_tabs = true;
  if (options.lesson_step > 0) {
    // The model asked for is still loading: it is what the explorer shows, so the lesson keeps
    // it (restored when the lesson ends, shown beside the lesson model at steps 7 and 8).
    if (!options.model_instance && !options.model.empty()) app.state.model_spec = options.model;
    enter_lesson(app, options.lesson_step);
    if (options.theme.empty()) prefs.light_theme = true;  // the projector theme
  }
  return exit_code;
}

// F11: the window fills the primary monitor, and back to where and how large it was.
struct Fullscreen {
  bool saved = false;  // the windowed position and size below were taken
  int x = 0, y = 0, w = 0, h = 0;
  void toggle(GLFWwindow* window, UiPrefs& prefs) {
    if (!prefs.fullscreen) {
      glfwGetWindowPos(window, &x, &y);
      glfwGetWindowSize(window, &w, &h);
      saved = true;
      if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
        const GLFWvidmode* mode = glfwGetVideoMode(monitor);
        glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
        prefs.fullscreen = true;
      }
    } else {
      glfwSetWindowMonitor(window, nullptr, x, y, w, h, 0);
      prefs.fullscreen = false;
    }
  }
};

}  // namespace

int run_gui(const GuiOptions& options) {
  const bool headless = !options.screenshot.empty() || !options.type_keys.empty();
  GuiScript script(options);  // the hidden testing options (parsed first: a bad --keys is usage)
  std::string settings_problem;
  Settings settings = load_settings(settings_problem);
  if (!options.theme.empty()) settings.light_theme = options.theme == "light";
  int width = settings.window_width, height = settings.window_height;
  if (headless) width = 1600, height = 1000;
  // The remembered place and maximized state: not for headless runs, nor when --window asks for a
  // size (scripts and tests get what they ask, whatever the last run left).
  const bool restore_geometry = !headless && options.window_size.empty();
  if (!options.window_size.empty())
    std::sscanf(options.window_size.c_str(), "%dx%d", &width, &height);

  glfwSetErrorCallback(on_glfw_error);
  GlfwSession session;
  if (!glfwInit()) throw Error("cannot open a window: " + g_glfw_error);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);  // shown once placed (below)
  session.window =
      glfwCreateWindow(width, height, "attnscope \xE2\x80\x94 attention, live", nullptr, nullptr);
  if (!session.window) throw Error("cannot open an OpenGL 3.3 window: " + g_glfw_error);
  GLFWwindow* window = session.window;
  if (restore_geometry && settings.has_window_position &&
      on_a_monitor(settings.window_x, settings.window_y, width))
    glfwSetWindowPos(window, settings.window_x, settings.window_y);
  glfwGetWindowPos(window, &g_normal.x, &g_normal.y);
  g_normal.w = width, g_normal.h = height, g_normal.known = !headless;
  glfwSetWindowPosCallback(window, on_window_pos);
  glfwSetWindowSizeCallback(window, on_window_size);
  if (!headless) glfwShowWindow(window);
  if (restore_geometry && settings.window_maximized) glfwMaximizeWindow(window);
  // HiDPI: the UI is drawn at the content scale times the user's zoom (Ctrl +/-).
  if (const char* forced = std::getenv("ATTNSCOPE_CONTENT_SCALE"); forced && *forced) {
    g_content_scale = std::clamp(std::strtof(forced, nullptr), 0.5f, 4.0f);
    g_content_scale_forced = true;
  } else if (!headless) {  // a headless capture's scale is --scale; the monitor's is not asked
    float sx = 1, sy = 1;
    glfwGetWindowContentScale(window, &sx, &sy);
    on_content_scale(window, sx, sy);
  }
  glfwSetWindowContentScaleCallback(window, on_content_scale);
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);
  if (!gladLoadGL(glfwGetProcAddress)) throw Error("cannot load OpenGL 3.3 functions");
  const FramebufferLimit limit = framebuffer_limit();
  if (const int scale = headless ? options.scale : 1;
      !limit.fits(static_cast<long long>(width) * scale, static_cast<long long>(height) * scale)) {
    const auto [w, h] = clamp_window(width, height, scale, limit);
    std::fprintf(stderr,
                 "attnscope: a %dx%d window at scale %d needs %dx%d pixels; %s; using %dx%d\n",
                 width, height, scale, width * scale, height * scale, limit.why.c_str(), w, h);
    width = w, height = h;
    glfwSetWindowSize(window, width, height);
  }

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;            // our own settings file holds what matters
  glfwSetKeyCallback(window, on_key);  // before ImGui's, which calls it after its own
  glfwSetDropCallback(window, on_drop);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  g_imgui_char = glfwSetCharCallback(window, on_char);  // after ImGui's: ours sees them first
  io.GetClipboardTextFn = get_clipboard;                // after ImGui's GLFW backend set its own
  io.SetClipboardTextFn = set_clipboard;
  io.ClipboardUserData = window;
  ImGui_ImplOpenGL3_Init("#version 330 core");

  ColormapRenderer renderer;
  renderer.init();  // throws with the shader log if the GLSL is broken

  UiPrefs prefs;
  prefs.light_theme = settings.light_theme;
  prefs.font_scale = settings.font_scale;
  prefs.screenshot_scale = settings.screenshot_scale;
  App app;
  MainWindow main_window;
  // Scripts hand this window traces over a socket only this user reaches (app/ipc/).
  WindowInbox inbox;
  if (!headless && !options.no_socket) inbox.start([] { glfwPostEmptyEvent(); });
  if (!headless) std::signal(SIGINT, on_quit_signal), std::signal(SIGTERM, on_quit_signal);
  const int exit_code_from_session =
      apply_start_options(options, settings, settings_problem, headless, app, prefs, main_window);
  // Raster scale of the current font atlas; 0 forces a (re)build.
  float atlas_raster = 0.0f, atlas_font_scale = 0.0f;
  // The UI's scale in window units: the user's zoom times the content scale, less what the
  // framebuffer already magnifies (Wayland and macOS give HiDPI windows a framebuffer larger than
  // their size; X11 does not, and the content scale is all of it).
  float ui_scale = prefs.font_scale;
  Fonts fonts;
  auto ensure_fonts = [&](float raster) {
    if (atlas_raster == raster && atlas_font_scale == ui_scale && !Fonts::need_rebuild()) return;
    // The atlas is rasterised at the new pixel size (never magnified: no blurry text).
    fonts = build_fonts(ui_scale, raster);
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
    atlas_raster = raster;
    atlas_font_scale = ui_scale;
    apply_theme(prefs.light_theme, ui_scale);
    if (!fonts.warning.empty())
      app.state.message = fonts.warning, app.state.message_is_error = true;
  };

  ShownText shown_text;

  GlFramebuffer capture;  // offscreen target of screenshots (and of every headless frame)
  int pending_capture_scale = 0;
  std::string pending_capture_path;
  const int headless_scale = options.scale;
  nlohmann::json layout;
  std::vector<double> frame_times, ui_times;  // ms: whole frame to the end of GL; UI build only
  float frame_ms = 0.0f;
  int frame = 0, frames_ready = 0;
  const auto started = Clock::now();
  Fullscreen fullscreen;
  fullscreen.w = width, fullscreen.h = height;
  int exit_code = exit_code_from_session;

  while (!glfwWindowShouldClose(window)) {
    const bool busy = app.computing() || app.load_progress().busy || script.busy() ||
                      main_window.busy() || input_pending() || inbox.busy();
    if (headless)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(busy || pending_capture_scale ? 0.0 : script.idle_wait_seconds());
    if (g_quit_signal) break;
    const auto frame_start = Clock::now();

    // A screenshot renders this frame into an S× framebuffer with fonts rasterised at S×.
    const int scale =
        headless ? headless_scale : (pending_capture_scale ? pending_capture_scale : 1);
    const bool to_fbo = headless || pending_capture_scale;
    // On a HiDPI screen the framebuffer has more pixels than the window has units: rasterise the
    // fonts at that density too, so text stays crisp instead of being magnified.
    float raster = static_cast<float>(scale);
    float framebuffer_ratio = 1.0f;
    if (!headless) {
      int fw = 0, fh = 0, ww = 0, wh = 0;
      glfwGetFramebufferSize(window, &fw, &fh);
      glfwGetWindowSize(window, &ww, &wh);
      if (ww > 0 && fw > ww) framebuffer_ratio = std::round(static_cast<float>(fw) / ww * 4) / 4;
    }
    if (!to_fbo) raster = framebuffer_ratio;
    ui_scale = prefs.font_scale * std::max(0.25f, g_content_scale / framebuffer_ratio);
    shown_text.report(app);  // new code points: glyphs added before this frame
    ensure_fonts(raster);
    if (theme_is_light() != prefs.light_theme) apply_theme(prefs.light_theme, ui_scale);

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (headless) {
      io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
      io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);  // no pointer: no hover effects in a screenshot
      float hx = 0, hy = 0;
      if (!options.hover.empty() && std::sscanf(options.hover.c_str(), "%f,%f", &hx, &hy) == 2)
        io.MousePos = ImVec2(hx, hy);
    }
    if (to_fbo)
      io.DisplayFramebufferScale = ImVec2(static_cast<float>(scale), static_cast<float>(scale));

    script.before_new_frame(io);

    ImGui::NewFrame();
    app.update();
    if (inbox.poll(app) && !headless) raise_window(window);
    script.inject(app, frame, main_window.busy(), g_key_presses, g_dropped);
    script.steer_views(app, main_window);

    // Dropped files and folders: sessions, model folders.
    for (const std::string& path : g_dropped)
      open_dropped_path(app, prefs, main_window.sessions, path);
    g_dropped.clear();
    // Keys: one table (app/ui/key_bindings.h), acted on like the menu items.
    main_window.wants_screenshot = main_window.wants_quit = false;
    main_window.wants_fullscreen_toggle = false;
    for (const Action action :
         triggered_actions(g_key_presses, io.WantTextInput, app.state.lesson_mode.active))
      main_window.Perform(action, app, prefs);
    const bool want_layout = !options.layout_file.empty();
    if (want_layout) layout = nlohmann::json::array();
    main_window.back_label = inbox.back_label();
    main_window.Draw(app, fonts, renderer, prefs, frame_ms, want_layout ? &layout : nullptr,
                     static_cast<float>(scale));
    if (main_window.wants_screenshot) {
      if (!headless && !pending_capture_scale) {
        pending_capture_scale = prefs.screenshot_scale;  // rendered next frame, fonts at that scale
        int ww = 0, wh = 0;
        glfwGetWindowSize(window, &ww, &wh);
        while (pending_capture_scale > 1 &&
               !limit.fits(static_cast<long long>(ww) * pending_capture_scale,
                           static_cast<long long>(wh) * pending_capture_scale))
          pending_capture_scale /= 2;
        if (pending_capture_scale != prefs.screenshot_scale)
          app.state.message =
              "screenshot at " + std::to_string(pending_capture_scale) + "x: " + limit.why,
          app.state.message_is_error = true;
        std::filesystem::path folder = settings.screenshot_folder.empty()
                                           ? default_screenshot_folder()
                                           : std::filesystem::path(settings.screenshot_folder);
        pending_capture_path = new_screenshot_path(folder, pending_capture_scale);
      }
    }
    if (main_window.wants_fullscreen_toggle) fullscreen.toggle(window, prefs);
    if (main_window.wants_quit) glfwSetWindowShouldClose(window, GLFW_TRUE);
    if (main_window.wants_back) main_window.wants_back = false, inbox.go_back(app);
    g_key_presses.clear();
    ImGui::Render();
    const double ui_ms = ms_since(frame_start);

    // Present: to the window, or into the offscreen framebuffer for a screenshot.
    int fb_w = 0, fb_h = 0;
    if (to_fbo) {
      fb_w = width * scale, fb_h = height * scale;
      if (!headless) {
        int ww = 0, wh = 0;
        glfwGetWindowSize(window, &ww, &wh);
        fb_w = ww * scale, fb_h = wh * scale;
      }
      std::string why;
      if (!capture.ensure(fb_w, fb_h, GL_NEAREST, why)) {
        if (headless) throw Error(why);
        app.state.message = "screenshot failed: " + why, app.state.message_is_error = true;
        pending_capture_scale = 0;
        continue;
      }
      glBindFramebuffer(GL_FRAMEBUFFER, capture.id());
    } else {
      glfwGetFramebufferSize(window, &fb_w, &fb_h);
    }
    glViewport(0, 0, fb_w, fb_h);
    ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glFinish();  // so the frame time includes the GL work (llvmpipe renders on the CPU)
    const double draw_ms = ms_since(frame_start);

    // Headless: wait for the model and the traces, then two more frames (widgets settle on
    // frame 1), then capture. Give up waiting after 40 s and capture what there is.
    // Before the first load starts there is no model and no error yet: that is not "ready" (a
    // capture then raced the first traces and missed the hover of --hover).
    const bool load_failed =
        !app.state.model && !app.load_progress().busy && !app.state.model_error.empty();
    const bool ready = (app.settled() || load_failed) && script.inputs_done() &&
                       !main_window.busy() && !main_window.waiting_for_dialog() &&
                       g_dropped.empty() && !app.load_progress().busy;
    frames_ready = ready ? frames_ready + 1 : 0;
    bool finish = false;
    if (headless &&
        ((frames_ready >= 3 && frame + 1 >= options.frames) || ms_since(started) > 40000)) {
      if (!ready) {
        std::fprintf(stderr, "attnscope: gave up waiting for the model after 40 s\n");
        exit_code = 1;
      }
      finish = true;
    }
    if (to_fbo && (finish || (!headless && pending_capture_scale))) {
      std::string path = headless ? options.screenshot : pending_capture_path;
      if (!path.empty()) {
        try {
          write_png(path, fb_w, fb_h);
          if (headless && !options.export_view.empty())
            export_current_view(app, prefs, 0, options.export_view_as, options.export_view);
          if (!headless) {  // a headless run keeps its last notice for the layout file
            app.state.message = "saved " + path;
            app.state.message_is_error = false;
          }
        } catch (const std::exception& e) {
          if (headless) throw;
          app.state.message = e.what();
          app.state.message_is_error = true;
        }
      }
      pending_capture_scale = 0;
    }
    if (to_fbo) glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (!headless) glfwSwapBuffers(window);
    inbox.after_draw(app);  // a script's trace on the screen now: its answer

    script.after_frame(app, main_window, frame, draw_ms);

    frame_ms = static_cast<float>(draw_ms);
    // Statistics skip the first frames (font atlas, shaders) and capture frames (PNG encoding).
    if (frame >= 2 && !finish) {
      frame_times.push_back(draw_ms);
      ui_times.push_back(ui_ms);
    }
    ++frame;
    if (finish) break;
  }

  if (!options.layout_file.empty()) {
    LayoutReport report;
    report.scale = headless ? headless_scale : 1;
    report.width = width, report.height = height, report.frames = frame;
    report.frame_times = std::move(frame_times), report.ui_times = std::move(ui_times);
    report.views = std::move(layout);
    write_layout_file(options.layout_file, app, prefs, main_window, std::move(report), script,
                      options);
  }
  if (!headless) {
    if (!prefs.fullscreen || !fullscreen.saved)
      glfwGetWindowSize(window, &fullscreen.w, &fullscreen.h);
    settings.light_theme = prefs.light_theme;
    settings.font_scale = prefs.font_scale;
    settings.left_panel = prefs.left_panel;
    settings.colormap = colormaps()[app.state.colormap].name;
    settings.fixed_range = app.state.fixed_range;
    settings.window_width = fullscreen.w;
    settings.window_height = fullscreen.h;
    settings.window_maximized = !glfwGetWindowMonitor(window) && !prefs.fullscreen &&
                                glfwGetWindowAttrib(window, GLFW_MAXIMIZED);
    if (settings.window_maximized && g_normal.w > 0)  // the size it comes back to
      settings.window_width = g_normal.w, settings.window_height = g_normal.h;
    if (g_normal.known) {
      settings.has_window_position = true;
      settings.window_x = g_normal.x, settings.window_y = g_normal.y;
    }
    settings.screenshot_scale = prefs.screenshot_scale;
    settings.recent_sessions = main_window.sessions.recent;
    std::string problem;
    if (!save_settings(settings, problem)) std::fprintf(stderr, "attnscope: %s\n", problem.c_str());
  }
  if (headless && script.typing_unfinished()) {
    std::fprintf(stderr, "attnscope: the typed text was not computed in time\n");
    exit_code = 1;
  }
  if (!app.state.model_error.empty() && headless) {
    // The screenshot shows the error; the exit code says the run did not do what was asked.
    std::fprintf(stderr, "attnscope: %s\n", app.state.model_error.c_str());
    exit_code = 1;
  }
  return exit_code;
}

}  // namespace attnscope

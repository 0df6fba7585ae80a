// Desktop conventions in the running app (issue 25 part 4), headless under
// Xvfb: the UI scale is the content scale (HiDPI) times the user's zoom, with
// fonts rasterised at that size; Ctrl+S saves the session (to its own file,
// else where the desktop's file dialog says), Ctrl+Shift+S asks, Ctrl+O opens;
// the dialog is a fake zenity/kdialog on PATH (what it prints is the chosen
// path, exit 1 is "cancelled"); saving over a file asks first unless the dialog
// asked already, and the file keeps its bytes until Replace. The typed-path
// popup, Replace/Cancel with real keys, F12 and the remembered window position
// are driven with xdotool (desktop_keys_test.sh).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "gui_test_util.h"

namespace attnscope {
namespace {

namespace fs = std::filesystem;
using test::read_json;
using test::shell_quote;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A fake dialog program `name` in DIR/bin: records its arguments (one a line)
// in DIR/NAME.args, prints `answer` (when not empty) and exits with `status`.
void fake_dialog(const std::string& dir, const std::string& name, const std::string& answer,
                 int status = 0) {
  fs::create_directories(dir + "/bin");
  const std::string path = dir + "/bin/" + name;
  write_file(path, "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > " +
                       shell_quote(dir + "/" + name + ".args") + "\n" +
                       (answer.empty() ? "" : "printf '%s\\n' " + shell_quote(answer) + "\n") +
                       "exit " + std::to_string(status) + "\n");
  fs::permissions(path, fs::perms::owner_all);
}

struct AppRun {
  int rc = -1;
  nlohmann::json layout;
};

// A headless run with HOME = dir (and the fake dialogs of dir/bin first on
// PATH).
AppRun run(const std::string& dir, const std::string& args, const std::string& env = "") {
  AppRun r;
  const std::string json = dir + "/layout.json";
  fs::remove(json);
  r.rc = test::run_app_with_env(
      "HOME=" + shell_quote(dir) + " PATH=" + shell_quote(dir + "/bin:/usr/bin:/bin") +
          " XDG_CURRENT_DESKTOP=GNOME " + env,
      "--window 1280x720 --screenshot " + shell_quote(dir + "/shot.png") + " --layout " +
          shell_quote(json) + " " + args + " 2>" + shell_quote(dir + "/stderr.txt"));
  if (std::ifstream(json)) r.layout = read_json(json);
  return r;
}

nlohmann::json session_in(const std::string& path) {
  return nlohmann::json::parse(slurp(path));
}

TEST(HiDpi, ContentScaleTwoDrawsTheUiTwiceAsLargeAndStillLaysOut) {
  const std::string dir = test::temp_dir();
  const AppRun one = run(dir, "");
  ASSERT_EQ(one.rc, 0);
  const AppRun two = run(dir, "", "ATTNSCOPE_CONTENT_SCALE=2");
  ASSERT_EQ(two.rc, 0);
  // The font the views are drawn with: 15 px at 1 (what Xvfb's monitor gives:
  // the headless run asks no monitor, and the env seam stands for a 4K screen
  // at 200 %), 30 px at 2.
  const double f1 = one.layout["window"]["font_size"].get<double>();
  const double f2 = two.layout["window"]["font_size"].get<double>();
  EXPECT_NEAR(f1, 15.0, 0.01);
  EXPECT_NEAR(f2, 2 * f1, 0.01);
  // The user's zoom multiplies: 1.5 × 2 = 3 × 15 px.
  const AppRun zoomed = run(dir, "--font-scale 1.5", "ATTNSCOPE_CONTENT_SCALE=2");
  ASSERT_EQ(zoomed.rc, 0);
  EXPECT_NEAR(zoomed.layout["window"]["font_size"].get<double>(), 3 * f1, 0.01);
  EXPECT_NEAR(zoomed.layout["window"]["font_scale"].get<double>(), 1.5, 1e-6)
      << "the remembered zoom stays the user's, without the content scale";
  // Still laid out: the sidebar and the main area side by side inside the
  // window, the heatmap pane with a grid, the atlas rebuilt at the larger size
  // (not magnified).
  const auto& w = two.layout["window"];
  EXPECT_GT(w["sidebar"]["w"].get<double>(), 0);
  EXPECT_LE(w["sidebar"]["x"].get<double>() + w["sidebar"]["w"].get<double>(),
            w["main"]["x"].get<double>() + 1);
  EXPECT_LE(w["main"]["x"].get<double>() + w["main"]["w"].get<double>(), 1280.5);
  ASSERT_FALSE(w["slots"].empty());
  EXPECT_GT(w["slots"][0]["grid_side"].get<double>(), 100);
  EXPECT_GT(two.layout["font_atlas"]["height"].get<int>(),
            one.layout["font_atlas"]["height"].get<int>())
      << "the atlas holds glyphs rasterised at twice the size";
  // The screenshot has the window's size: the UI grew inside it, the window did
  // not.
  const test::Image shot = test::read_png(dir + "/shot.png");
  EXPECT_EQ(shot.width, 1280);
  EXPECT_EQ(shot.height, 720);
  fs::remove_all(dir);
}

TEST(SessionKeys, CtrlSWithoutAFileSavesWhereTheDialogSays) {
  const std::string dir = test::temp_dir();
  const std::string chosen = dir + "/chosen dir/my session.attnscope";
  fs::create_directories(dir + "/chosen dir");
  fake_dialog(dir, "zenity", chosen);
  const AppRun r = run(dir, "--font-scale 1.3 --keys ctrl+s");
  ASSERT_EQ(r.rc, 0) << slurp(dir + "/stderr.txt");
  ASSERT_TRUE(fs::exists(chosen)) << r.layout["message"];
  EXPECT_EQ(session_in(chosen)["format"], "attnscope-session/1");
  EXPECT_NEAR(session_in(chosen)["display"]["font_scale"].get<double>(), 1.3, 1e-6);
  EXPECT_EQ(r.layout["session_path"], chosen);
  EXPECT_EQ(r.layout["replace_asked"], "");
  // The dialog was a save dialog that asks about replacing itself, starting at
  // ~/lesson.attnscope.
  const std::string args = slurp(dir + "/zenity.args");
  EXPECT_NE(args.find("--file-selection\n"), std::string::npos) << args;
  EXPECT_NE(args.find("--save\n--confirm-overwrite\n"), std::string::npos) << args;
  EXPECT_NE(args.find("--filename=" + dir + "/lesson.attnscope\n"), std::string::npos) << args;
  fs::remove_all(dir);
}

TEST(SessionKeys, CtrlSSavesASessionToItsOwnFileWithoutAsking) {
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/mine.attnscope";
  fake_dialog(dir, "zenity", dir + "/elsewhere.attnscope");
  ASSERT_EQ(run(dir, "--font-scale 1.2 --keys ctrl+s").rc,
            0);  // saved to elsewhere
  fs::rename(dir + "/elsewhere.attnscope", file);
  fs::remove(dir + "/zenity.args");
  // Opened from its file, Ctrl+= then Ctrl+S: the file now says 1.3, and no
  // dialog was asked.
  const AppRun r = run(dir, "--session " + shell_quote(file) + " --keys ctrl+equal,ctrl+s");
  ASSERT_EQ(r.rc, 0);
  EXPECT_NEAR(session_in(file)["display"]["font_scale"].get<double>(), 1.3, 1e-6);
  EXPECT_FALSE(fs::exists(dir + "/zenity.args")) << "Ctrl+S asked for a path it had";
  EXPECT_FALSE(fs::exists(dir + "/elsewhere.attnscope"));
  // Ctrl+Shift+S asks even then (the dialog starts at the session's file).
  fake_dialog(dir, "zenity", dir + "/copy.attnscope");
  const AppRun as = run(dir, "--session " + shell_quote(file) + " --keys ctrl+shift+s");
  ASSERT_EQ(as.rc, 0);
  EXPECT_TRUE(fs::exists(dir + "/copy.attnscope"));
  EXPECT_EQ(as.layout["session_path"], dir + "/copy.attnscope");
  EXPECT_NE(slurp(dir + "/zenity.args").find("--filename=" + file + "\n"), std::string::npos);
  fs::remove_all(dir);
}

TEST(SessionKeys, CtrlOOpensTheSessionTheDialogChose) {
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/saved.attnscope";
  fake_dialog(dir, "zenity", file);
  ASSERT_EQ(run(dir, "--font-scale 1.7 --theme light --keys ctrl+s").rc, 0);
  ASSERT_TRUE(fs::exists(file));
  fs::remove(dir + "/zenity.args");
  const AppRun r = run(dir, "--keys ctrl+o");
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.layout["session_path"], file);
  EXPECT_NEAR(r.layout["state"]["display"]["font_scale"].get<double>(), 1.7, 1e-6);
  EXPECT_EQ(r.layout["theme"], "light");
  const std::string args = slurp(dir + "/zenity.args");
  EXPECT_EQ(args.find("--save"), std::string::npos) << "an open dialog: " << args;
  EXPECT_NE(args.find("--file-filter="), std::string::npos) << args;
  EXPECT_EQ(r.layout["recent_sessions"][0], file);
  fs::remove_all(dir);
}

TEST(SessionKeys, ACancelledDialogSavesAndOpensNothing) {
  const std::string dir = test::temp_dir();
  fake_dialog(dir, "zenity", "", 1);
  const AppRun save = run(dir, "--keys ctrl+s");
  ASSERT_EQ(save.rc, 0);
  EXPECT_EQ(save.layout["session_path"], "");
  EXPECT_TRUE(fs::exists(dir + "/zenity.args")) << "the dialog was not asked";
  EXPECT_FALSE(fs::exists(dir + "/lesson.attnscope"));
  const AppRun open = run(dir, "--font-scale 1.4 --keys ctrl+o");
  ASSERT_EQ(open.rc, 0);
  EXPECT_EQ(open.layout["session_path"], "");
  EXPECT_NEAR(open.layout["state"]["display"]["font_scale"].get<double>(), 1.4, 1e-6);
  fs::remove_all(dir);
}

TEST(SessionKeys, SavingOverAFileAsksUnlessTheDialogAsked) {
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/existing.attnscope";
  const std::string bytes = "{\"not\": \"touched\"}\n";
  write_file(file, bytes);
  // kdialog does not ask about replacing here: the app asks, and until it is
  // answered (this headless run ends with the question open) the file keeps its
  // bytes.
  fake_dialog(dir, "kdialog", file);
  const AppRun asked = run(dir, "--keys ctrl+s", "ATTNSCOPE_FILE_DIALOG=kdialog");
  ASSERT_EQ(asked.rc, 0);
  EXPECT_EQ(asked.layout["replace_asked"], file);
  EXPECT_EQ(slurp(file), bytes);
  EXPECT_EQ(asked.layout["session_path"], "");
  EXPECT_NE(slurp(dir + "/kdialog.args").find("--getsavefilename\n"), std::string::npos);
  // zenity asked already (--confirm-overwrite): saved at once.
  fake_dialog(dir, "zenity", file);
  const AppRun replaced = run(dir, "--keys ctrl+s");
  ASSERT_EQ(replaced.rc, 0);
  EXPECT_EQ(replaced.layout["replace_asked"], "");
  EXPECT_EQ(session_in(file)["format"], "attnscope-session/1");
  fs::remove_all(dir);
}

TEST(SessionKeys, WithoutADialogProgramTheTypedPathPopupIsShown) {
  const std::string dir = test::temp_dir();
  fake_dialog(dir, "zenity", dir + "/never.attnscope");
  // ATTNSCOPE_FILE_DIALOG=none: the fake zenity on PATH is not run; the popup
  // waits for a path.
  const AppRun r = run(dir, "--keys ctrl+s", "ATTNSCOPE_FILE_DIALOG=none");
  ASSERT_EQ(r.rc, 0);
  EXPECT_FALSE(fs::exists(dir + "/zenity.args"));
  EXPECT_FALSE(fs::exists(dir + "/never.attnscope"));
  EXPECT_EQ(r.layout["session_path"], "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnscope

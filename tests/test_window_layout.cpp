// The panels' layout: the default leaves most of a 1280×720 scene in view (measured from the
// window's own pixels under a virtual display), presentation mode leaves nearly all of it, and
// the layout is remembered in the user's configuration directory, read back, and survives a
// corrupt or unwritable file with a note.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app/window/app_state.h"
#include "app/window/dock.h"
#include "app/window/layout_file.h"
#include "render/image.h"
#include "test_render_support.h"

namespace {

using namespace bhviz::test;
using bhviz::app::DockSide;
using bhviz::app::Layout;
using bhviz::app::LayoutParse;
using bhviz::app::PanelId;
using bhviz::app::PanelsOpen;

bool haveXvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

/// A merger in the window for a few frames; its last frame measured (BHVIZ_UI_COVERAGE).
Process runMeasured(const fs::path& shot, const std::string& env = "") {
  return runBhviz("--backend cpu --n 3000 --quit-after 6",
                  env + (env.empty() ? "" : " ") + "BHVIZ_UI_COVERAGE='" + shot.string() +
                      "' xvfb-run -a -s '-screen 0 1280x720x24'");
}

/// The share the run printed, in percent; -1 when it printed none.
double unobstructed(const Process& p) {
  std::smatch m;
  static const std::regex line(R"(the panels leave ([0-9.]+) % of the scene unobstructed)");
  return std::regex_search(p.out, m, line) ? std::stod(m[1].str()) : -1.0;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(LayoutFile, SectionReadsBackWhatItWrote) {
  Layout layout;
  PanelsOpen open;
  layout.presentation = true;
  layout.left = {412.0f, true, static_cast<int>(PanelId::View)};
  layout.right = {250.0f, false, static_cast<int>(PanelId::Tree)};
  layout.side[static_cast<std::size_t>(PanelId::TimeSteps)] = DockSide::Floating;
  layout.side[static_cast<std::size_t>(PanelId::Performance)] = DockSide::Left;
  open.tree = true;
  open.simulation = false;
  const std::string text = bhviz::app::layoutSection(layout, open);

  Layout back;
  PanelsOpen backOpen;
  LayoutParse parse;
  for (const std::string& l : lines(text)) bhviz::app::readLayoutLine(l, back, backOpen, parse);
  EXPECT_EQ(parse.ignoredLines, 0) << text;
  EXPECT_TRUE(back.presentation);
  EXPECT_EQ(back.left.width, 412.0f);
  EXPECT_TRUE(back.left.collapsed);
  EXPECT_EQ(back.left.selected, static_cast<int>(PanelId::View));
  EXPECT_EQ(back.right.width, 250.0f);
  EXPECT_FALSE(back.right.collapsed);
  EXPECT_EQ(back.side, layout.side);
  EXPECT_TRUE(backOpen.tree);
  EXPECT_FALSE(backOpen.simulation);
  EXPECT_EQ(bhviz::app::layoutSection(back, backOpen), text);
}

TEST(LayoutFile, LinesNotUnderstoodAreCountedAndChangeNothing) {
  Layout layout;
  PanelsOpen open;
  LayoutParse parse;
  for (const char* l : {"presentation=yes", "left=abc", "left=10,0,0", "right=330,0,99",
                        "panel=top,1,Tree", "panel=left,1,No such panel", "panel=left", "what"}) {
    bhviz::app::readLayoutLine(l, layout, open, parse);
  }
  EXPECT_EQ(parse.ignoredLines, 8);
  EXPECT_EQ(bhviz::app::layoutSection(layout, open),
            bhviz::app::layoutSection(Layout{}, PanelsOpen{}));
}

TEST(LayoutFile, PathIsInTheUsersConfigurationDirectory) {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = xdg != nullptr ? xdg : "";
  setenv("XDG_CONFIG_HOME", "/tmp/somewhere", 1);
  EXPECT_EQ(bhviz::app::layoutFilePath(), fs::path("/tmp/somewhere/bhviz/layout.ini"));
  setenv("XDG_CONFIG_HOME", "relative/is/ignored", 1);
  const char* home = std::getenv("HOME");
  if (home != nullptr && fs::path(home).is_absolute()) {
    EXPECT_EQ(bhviz::app::layoutFilePath(), fs::path(home) / ".config/bhviz/layout.ini");
  }
  if (xdg != nullptr) {
    setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
  } else {
    unsetenv("XDG_CONFIG_HOME");
  }
}

// The issue's measure: ≥ 70 % of a 1280×720 scene unobstructed by the default layout, from the
// window's pixels with and without the panels. Every panel open covers much more: the measure
// sees panels.
TEST(WindowLayout, DefaultLeavesSeventyPercentOfTheSceneInView) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  TempDir dir;
  const Process p = runMeasured(dir.path / "default.png");
  ASSERT_EQ(p.status, 0) << p.out << p.err;
  const double share = unobstructed(p);
  EXPECT_GE(share, 70.0) << p.out;
  EXPECT_LT(share, 99.0) << "the menu bar and the left dock are drawn: " << p.out;
  const bhviz::render::Image shot = bhviz::render::readPng(dir.path / "default.png");
  EXPECT_EQ(shot.width, 1280);
  EXPECT_EQ(shot.height, 720);

  const Process all = runMeasured(dir.path / "all.png", "BHVIZ_UI_ALL_PANELS=1");
  ASSERT_EQ(all.status, 0) << all.out << all.err;
  EXPECT_LT(unobstructed(all), share - 5.0) << all.out;
}

// The layout goes to XDG_CONFIG_HOME/bhviz/layout.ini when the window closes and is read at the
// next start: presentation mode written there leaves nearly the whole scene in view.
TEST(WindowLayout, IsRememberedAndPresentationModeLeavesTheSceneAlone) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  TempDir dir;
  const std::string config = "XDG_CONFIG_HOME='" + (dir.path / "cfg").string() + "'";
  const fs::path file = dir.path / "cfg" / "bhviz" / "layout.ini";
  const Process first = runMeasured(dir.path / "first.png", config);
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  ASSERT_TRUE(fs::exists(file)) << first.out;
  std::string text = readText(file);
  EXPECT_NE(text.find("[bhviz][layout]"), std::string::npos) << text;
  EXPECT_NE(text.find("presentation=0"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));

  text.replace(text.find("presentation=0"), 14, "presentation=1");
  std::ofstream(file) << text;
  const Process second = runMeasured(dir.path / "second.png", config);
  ASSERT_EQ(second.status, 0) << second.out << second.err;
  EXPECT_GE(unobstructed(second), 97.0) << second.out;
  EXPECT_GT(unobstructed(second), unobstructed(first) + 10.0);
  EXPECT_NE(readText(file).find("presentation=1"), std::string::npos) << "kept as it was";
}

TEST(WindowLayout, CorruptOrUnwritableLayoutFilesAreNotedAndTheWindowRuns) {
  if (!haveXvfb()) GTEST_SKIP() << "xvfb-run is not installed (scripts/install-deps.sh)";
  TempDir dir;
  fs::create_directories(dir.path / "cfg" / "bhviz");
  std::ofstream(dir.path / "cfg" / "bhviz" / "layout.ini")
      << "[bhviz][layout]\nleft=nonsense\n\x01\x02garbage\n[Window][Simulation]\nPos=abc\n";
  const Process corrupt = runMeasured(dir.path / "corrupt.png",
                                      "XDG_CONFIG_HOME='" + (dir.path / "cfg").string() + "'");
  EXPECT_EQ(corrupt.status, 0) << corrupt.out << corrupt.err;
  EXPECT_NE(corrupt.out.find("were not understood and were ignored"), std::string::npos)
      << corrupt.out;
  EXPECT_GE(unobstructed(corrupt), 70.0) << "the default layout: " << corrupt.out;

  // XDG_CONFIG_HOME is a file: the layout cannot be kept, said once.
  std::ofstream(dir.path / "not-a-dir") << "x";
  const Process unwritable = runMeasured(
      dir.path / "unwritable.png", "XDG_CONFIG_HOME='" + (dir.path / "not-a-dir").string() + "'");
  EXPECT_EQ(unwritable.status, 0) << unwritable.out << unwritable.err;
  std::size_t said = 0;
  for (std::size_t at = 0;
       (at = unwritable.out.find("cannot keep the panels' layout", at)) != std::string::npos;
       ++at) {
    ++said;
  }
  EXPECT_EQ(said, 1u) << unwritable.out;
}

}  // namespace

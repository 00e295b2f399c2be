#pragma once
// The user's layout, remembered between runs: Dear ImGui's own settings (floating panels' places)
// and a [bhviz][layout] section (which panels are open and where, the docks' widths and folds,
// presentation mode) in one file in the user's configuration directory, never the working
// directory. Written atomically (FILE.tmp, then renamed) when it changed, at most every few
// seconds, and when the window closes.

#include <filesystem>
#include <optional>
#include <string>

#include "app/window/app_state.h"

namespace bhviz::app {

/// $XDG_CONFIG_HOME/bhviz/layout.ini, else $HOME/.config/bhviz/layout.ini; none when neither
/// variable names an absolute directory.
std::optional<std::filesystem::path> layoutFilePath();

/// The layout's section as text, and back (a line not understood is counted and skipped).
std::string layoutSection(const Layout& layout, const PanelsOpen& open);
struct LayoutParse {
  int ignoredLines = 0;
};
void readLayoutLine(const std::string& line, Layout& layout, PanelsOpen& open, LayoutParse& parse);

/// Needs the window's ImGui context; `state` must outlive this object.
class LayoutFile {
 public:
  LayoutFile(AppState& state, std::optional<std::filesystem::path> path);
  ~LayoutFile();
  LayoutFile(const LayoutFile&) = delete;
  LayoutFile& operator=(const LayoutFile&) = delete;

  /// Reads the file into the state and ImGui, if there is one; call before the first frame.
  /// Returns a line to show (what was read, or why not), else empty.
  std::string load();
  /// Writes the file when the layout changed since it was last written, checked every two
  /// seconds, or at once with `force` (the window closing). Returns a line to show once when
  /// writing failed, else empty.
  std::string save(bool force);

  const std::optional<std::filesystem::path>& path() const { return m_path; }

 private:
  AppState& m_state;
  std::optional<std::filesystem::path> m_path;
  std::string m_written;  // the text last written (or read)
  double m_lastCheck = -1e9;
  bool m_failed = false;  // a write failed: said once, not tried again
  LayoutParse m_parse;
};

}  // namespace bhviz::app

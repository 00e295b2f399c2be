#include "app/window/layout_file.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "app/window/dock.h"

namespace bhviz::app {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTypeName = "bhviz";
constexpr double kCheckSeconds = 2.0;

const char* sideName(DockSide side) {
  switch (side) {
    case DockSide::Left:
      return "left";
    case DockSide::Right:
      return "right";
    case DockSide::Floating:
      return "window";
  }
  return "left";
}

std::optional<DockSide> parseSide(const std::string& text) {
  if (text == "left") return DockSide::Left;
  if (text == "right") return DockSide::Right;
  if (text == "window") return DockSide::Floating;
  return std::nullopt;
}

std::optional<PanelId> panelNamed(const std::string& title) {
  for (std::size_t i = 0; i < kPanelCount; ++i) {
    const auto id = static_cast<PanelId>(i);
    if (title == panelTitle(id)) return id;
  }
  return std::nullopt;
}

bool readDock(const std::string& value, DockState& dock) {
  float width = 0.0f;
  int collapsed = 0, selected = 0;
  if (std::sscanf(value.c_str(), "%f,%d,%d", &width, &collapsed, &selected) != 3) return false;
  if (!(width >= 100.0f && width <= 10000.0f)) return false;
  if (selected < -1 || selected >= static_cast<int>(kPanelCount)) return false;
  dock = {width, collapsed != 0, selected};
  return true;
}

// ImGui's settings handler: one entry, [bhviz][layout], read into and written from the state.
void* readOpen(ImGuiContext*, ImGuiSettingsHandler* handler, const char* name) {
  return std::strcmp(name, "layout") == 0 ? handler->UserData : nullptr;
}

struct HandlerData {
  AppState* state;
  LayoutParse* parse;
};

void readLine(ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
  auto* data = static_cast<HandlerData*>(entry);
  readLayoutLine(line, data->state->layout, data->state->panels, *data->parse);
}

void writeAll(ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* out) {
  const auto* data = static_cast<const HandlerData*>(handler->UserData);
  out->appendf("[%s][layout]\n%s\n", kTypeName,
               layoutSection(data->state->layout, data->state->panels).c_str());
}

}  // namespace

std::optional<fs::path> layoutFilePath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && fs::path(xdg).is_absolute()) return fs::path(xdg) / "bhviz" / "layout.ini";
  const char* home = std::getenv("HOME");
  if (home != nullptr && fs::path(home).is_absolute()) {
    return fs::path(home) / ".config" / "bhviz" / "layout.ini";
  }
  return std::nullopt;
}

std::string layoutSection(const Layout& layout, const PanelsOpen& open) {
  std::ostringstream out;
  out << "presentation=" << (layout.presentation ? 1 : 0) << '\n';
  const auto dock = [&](const char* name, const DockState& d) {
    out << name << '=' << d.width << ',' << (d.collapsed ? 1 : 0) << ',' << d.selected << '\n';
  };
  dock("left", layout.left);
  dock("right", layout.right);
  PanelsOpen copy = open;
  for (std::size_t i = 0; i < kPanelCount; ++i) {
    const auto id = static_cast<PanelId>(i);
    out << "panel=" << sideName(layout.side[i]) << ',' << (panelOpen(copy, id) ? 1 : 0) << ','
        << panelTitle(id) << '\n';
  }
  return out.str();
}

void readLayoutLine(const std::string& line, Layout& layout, PanelsOpen& open, LayoutParse& parse) {
  if (line.empty()) return;
  const std::size_t eq = line.find('=');
  const std::string key = line.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
  bool ok = false;
  if (key == "presentation" && (value == "0" || value == "1")) {
    layout.presentation = value == "1";
    ok = true;
  } else if (key == "left") {
    ok = readDock(value, layout.left);
  } else if (key == "right") {
    ok = readDock(value, layout.right);
  } else if (key == "panel") {
    // panel=SIDE,OPEN,TITLE (the title last: it may hold spaces)
    const std::size_t a = value.find(','), b = value.find(',', a == std::string::npos ? a : a + 1);
    if (a != std::string::npos && b != std::string::npos) {
      const auto side = parseSide(value.substr(0, a));
      const std::string flag = value.substr(a + 1, b - a - 1);
      const auto id = panelNamed(value.substr(b + 1));
      if (side && id && (flag == "0" || flag == "1")) {
        layout.side[static_cast<std::size_t>(*id)] = *side;
        panelOpen(open, *id) = flag == "1";
        ok = true;
      }
    }
  }
  if (!ok) ++parse.ignoredLines;
}

LayoutFile::LayoutFile(AppState& state, std::optional<fs::path> path)
    : m_state(state), m_path(std::move(path)) {
  ImGuiSettingsHandler handler;
  handler.TypeName = kTypeName;
  handler.TypeHash = ImHashStr(kTypeName);
  handler.ReadOpenFn = readOpen;
  handler.ReadLineFn = readLine;
  handler.WriteAllFn = writeAll;
  handler.UserData = new HandlerData{&m_state, &m_parse};
  ImGui::GetCurrentContext()->SettingsHandlers.push_back(handler);
}

LayoutFile::~LayoutFile() {
  ImVector<ImGuiSettingsHandler>& handlers = ImGui::GetCurrentContext()->SettingsHandlers;
  for (int i = 0; i < handlers.Size; ++i) {
    if (handlers[i].TypeHash == ImHashStr(kTypeName)) {
      delete static_cast<HandlerData*>(handlers[i].UserData);
      handlers.erase(handlers.Data + i);
      break;
    }
  }
}

std::string LayoutFile::load() {
  if (!m_path) return "bhviz: note: no HOME or XDG_CONFIG_HOME: the panels' layout is not kept";
  std::error_code ec;
  if (!fs::exists(*m_path, ec)) return "";
  std::ifstream in(*m_path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return "bhviz: note: cannot read the layout " + m_path->string();
  m_written = text.str();
  m_parse = {};
  ImGui::LoadIniSettingsFromMemory(m_written.data(), m_written.size());
  if (m_parse.ignoredLines > 0) {
    return "bhviz: note: " + std::to_string(m_parse.ignoredLines) + " line(s) of the layout " +
           m_path->string() + " were not understood and were ignored";
  }
  return "";
}

std::string LayoutFile::save(bool force) {
  if (!m_path || m_failed) return "";
  const double now = ImGui::GetTime();
  if (!force && now - m_lastCheck < kCheckSeconds) return "";
  m_lastCheck = now;
  std::size_t size = 0;
  const char* data = ImGui::SaveIniSettingsToMemory(&size);
  ImGui::GetIO().WantSaveIniSettings = false;
  std::string text(data, size);
  if (text == m_written) return "";
  const fs::path tmp = m_path->string() + ".tmp";
  std::error_code ec;
  fs::create_directories(m_path->parent_path(), ec);
  if (!ec) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec) fs::rename(tmp, *m_path, ec);
  if (ec) {
    m_failed = true;
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return "bhviz: cannot keep the panels' layout in " + m_path->string() + ": " + why;
  }
  m_written = std::move(text);
  return "";
}

}  // namespace bhviz::app

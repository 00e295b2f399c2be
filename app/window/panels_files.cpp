// The Files panel: load and save snapshots, and record the scene as PNG frames or a video.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "app/window/panels.h"

namespace bhviz::app {

namespace {

void snapshotControls(AppState& s, FrameRequests& r, const UiInfo& info) {
  ImGui::TextUnformatted("Snapshot");
  pathField("file##snapshot", s.files.snapshotPath);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("Load: Tipsy or HDF5, told by the content; Save: .tipsy/.std or .hdf5/.h5");
  }
  if (ImGui::Button("Load")) r.loadSnapshot = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("replaces the simulation; a bad file changes nothing");
  ImGui::SameLine();
  if (info.session == nullptr) ImGui::BeginDisabled();
  if (ImGui::Button("Save")) r.saveSnapshot = true;
  if (info.session == nullptr) ImGui::EndDisabled();
  if (!s.scene.snapshotPath.empty()) {
    ImGui::TextDisabled("running from %s (Reset reloads it)", s.scene.snapshotPath.c_str());
  }
}

void recordControls(AppState& s, FrameRequests& r, const UiInfo& info) {
  ImGui::TextUnformatted("Record");
  const bool recording = info.recording;
  if (recording) ImGui::BeginDisabled();
  int mode = s.files.recordVideo ? 1 : 0;
  ImGui::RadioButton("PNG frames", &mode, 0);
  ImGui::SameLine();
  if (!info.ffmpegFound) ImGui::BeginDisabled();
  ImGui::RadioButton("video", &mode, 1);
  if (!info.ffmpegFound) ImGui::EndDisabled();
  s.files.recordVideo = mode == 1 && info.ffmpegFound;
  if (s.files.recordVideo) {
    pathField("file##video", s.files.videoPath);
  } else {
    pathField("directory##frames", s.files.framesDir);
  }
  ImGui::SliderInt("every", &s.files.every, 1, 60, "%d frames");
  s.files.every = std::max(s.files.every, 1);
  if (recording) ImGui::EndDisabled();
  if (!info.ffmpegFound) ImGui::TextDisabled("video needs ffmpeg on PATH (none found)");

  if (ImGui::Button(recording ? "Stop" : "Record")) r.toggleRecording = true;
  ImGui::SameLine();
  if (recording) {
    ImGui::TextColored(ImVec4(1.0f, 0.35f, 0.3f, 1.0f), "%d frames to %s", info.recordedFrames,
                       info.recordTarget.c_str());
  } else {
    ImGui::TextDisabled("%d frames recorded", info.recordedFrames);
  }
}

}  // namespace

// A text field over a std::string (ImGui 1.86 without its misc/cpp helpers).
bool pathField(const char* label, std::string& value) {
  std::array<char, 1024> buffer{};
  const std::size_t n = std::min(value.size(), buffer.size() - 1);
  std::memcpy(buffer.data(), value.data(), n);
  if (ImGui::InputText(label, buffer.data(), buffer.size())) {
    value = buffer.data();
    return true;
  }
  return false;
}

void drawFilesPanel(AppState& s, FrameRequests& r, const UiInfo& info) {
  snapshotControls(s, r, info);
  ImGui::Separator();
  recordControls(s, r, info);
}

}  // namespace bhviz::app

#pragma once
// A scenario file's camera block (sim::ScenarioCamera, degrees) as the renderer's script
// (render::CameraScript, radians). The window and the headless frames both start from here.

#include "render/camera_path.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::app {

/// Seconds of video per headless frame: a scenario's auto_rotate [rad/s] turns the view by
/// auto_rotate × this between two written frames (a 30 fps movie spins as the window does).
inline constexpr float kHeadlessFrameSeconds = 1.0f / 30.0f;

inline render::CameraScript cameraScript(const sim::ScenarioCamera& c) {
  constexpr double kRadians = 3.14159265358979323846 / 180.0;
  render::CameraScript s;
  s.autoRotate = static_cast<float>(c.autoRotate);
  for (const sim::CameraKey& k : c.keys) {
    s.keys.push_back({static_cast<float>(k.time), static_cast<float>(k.azimuth * kRadians),
                      static_cast<float>(k.elevation * kRadians), static_cast<float>(k.distance)});
  }
  return s;
}

}  // namespace bhviz::app

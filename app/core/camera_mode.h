#pragma once
// What the camera follows, as the command line (--camera, --auto-frame) and the View panel
// choose it. Light: no GL, no glm; app/scene/camera_follow.h moves a camera by it.

#include <optional>
#include <string>

namespace bhviz::app {

/// The point the camera looks at, each frame.
enum class CameraTarget {
  Free,    ///< where the user (or the scenario's script) put it
  Centre,  ///< the centre of mass of every particle, dark matter included
  Galaxy,  ///< the centre of one galaxy's stars (a shrinking-sphere centre: its densest part)
};

struct CameraMode {
  CameraTarget target = CameraTarget::Free;
  int galaxy = 0;          ///< with CameraTarget::Galaxy: which one (0 = the first) [1]
  bool autoFrame = false;  ///< the distance follows the spread of what is drawn (tails grow)

  bool active() const { return target != CameraTarget::Free || autoFrame; }
  bool operator==(const CameraMode& o) const {
    return target == o.target && galaxy == o.galaxy && autoFrame == o.autoFrame;
  }
};

/// "free", "centre" (or "com"), "galaxy:K" (K from 1, as the scenario files count galaxies).
/// Returns nullopt for anything else.
std::optional<CameraMode> parseCameraTarget(const std::string& text);
/// The text parseCameraTarget reads back ("galaxy:2"), without the auto-frame flag.
std::string cameraTargetName(const CameraMode& mode);

}  // namespace bhviz::app

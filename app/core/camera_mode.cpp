#include "app/core/camera_mode.h"

#include <cstdlib>

namespace bhviz::app {

std::optional<CameraMode> parseCameraTarget(const std::string& text) {
  CameraMode mode;
  if (text == "free") return mode;
  if (text == "centre" || text == "center" || text == "com") {
    mode.target = CameraTarget::Centre;
    return mode;
  }
  const std::string prefix = "galaxy:";
  if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size() || text.size() > prefix.size() + 2)
    return std::nullopt;
  int k = 0;
  for (char c : text.substr(prefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    k = 10 * k + (c - '0');
  }
  if (k < 1 || k > 64) return std::nullopt;  // a tag holds galaxies 0..63
  mode.target = CameraTarget::Galaxy;
  mode.galaxy = k - 1;
  return mode;
}

std::string cameraTargetName(const CameraMode& mode) {
  switch (mode.target) {
    case CameraTarget::Free:
      return "free";
    case CameraTarget::Centre:
      return "centre";
    case CameraTarget::Galaxy:
      return "galaxy:" + std::to_string(mode.galaxy + 1);
  }
  return "free";
}

}  // namespace bhviz::app

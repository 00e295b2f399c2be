#include "render/camera_path.h"

#include <algorithm>

namespace bhviz::render {

CameraKey sampleCameraPath(const std::vector<CameraKey>& keys, float time) {
  if (time <= keys.front().time) return keys.front();
  if (time >= keys.back().time) return keys.back();
  // The first key after `time`; keys are few, so a linear search is fine.
  const auto next =
      std::find_if(keys.begin(), keys.end(), [&](const CameraKey& k) { return k.time > time; });
  const CameraKey& a = *(next - 1);
  const CameraKey& b = *next;
  const float f = (time - a.time) / (b.time - a.time);
  auto mix = [f](float x, float y) { return x + f * (y - x); };
  return {time, mix(a.azimuth, b.azimuth), mix(a.elevation, b.elevation),
          mix(a.distance, b.distance)};
}

void applyCameraPath(Camera& camera, const CameraScript& script, float time, float framedDistance) {
  if (script.keys.empty()) return;
  const CameraKey k = sampleCameraPath(script.keys, time);
  camera.yaw = k.azimuth;
  camera.pitch = std::clamp(k.elevation, -Camera::kMaxPitch, Camera::kMaxPitch);
  camera.distance = std::clamp(framedDistance * k.distance, camera.minDistance, camera.maxDistance);
}

}  // namespace bhviz::render
